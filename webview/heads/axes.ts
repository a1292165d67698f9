// Token labels on the axes of a map drawn on a canvas (an opened head, the Compare tab's B − A of a
// head): every token while each gets a line of its own, else every k-th; the hovered row and
// column are always named, over the axis. Labels are DOM text (never parsed as HTML), shown as
// written but with a byte-level BPE's Ġ/Ċ/ĉ and SentencePiece's ▁ as the ␣/↵/⇥ of a model run's
// labels. The PNG and SVG exports draw the same labels.
import { LABEL_PITCH, labelStep, shownToken } from '../../src/core/words';
import { element } from './page';

/** Characters of a label on the axis; the hovered one shows more. */
const AXIS_CHARS = 14;
const HOVER_CHARS = 40;
const FONT = '11px sans-serif';

/** One axis of a map: its tokens, and which of them each drawn cell starts with. */
export interface MapAxis {
  tokens: string[];
  /** The first token of cell 0, and tokens per cell (over 1 when the map is pooled). */
  start: number;
  block: number;
  cells: number;
}

export interface Tick {
  cell: number;
  token: number;
  text: string;
}

/** A label cut to `chars` characters, with an ellipsis. */
export function clipped(text: string, chars: number): string {
  return [...text].length > chars ? `${[...text].slice(0, chars - 1).join('')}…` : text;
}

/** The labelled cells of an axis drawn `pitch` CSS px per cell. */
export function axisTicks(axis: MapAxis, pitch: number): Tick[] {
  const step = labelStep(pitch, axis.block);
  const ticks: Tick[] = [];
  const end = Math.min(axis.tokens.length, axis.start + axis.cells * axis.block);
  // Labels at multiples of the step (0, 10, 20 …), the same tokens however the map is cropped.
  for (let token = Math.ceil(axis.start / step) * step; token < end; token += step) {
    ticks.push({ cell: Math.floor((token - axis.start) / axis.block), token, text: clipped(shownToken(axis.tokens[token]), AXIS_CHARS) });
  }
  return ticks;
}

/** The label of a cell when hovered: its token, or the first and last of its block. */
export function cellLabel(axis: MapAxis, cell: number): string {
  const from = axis.start + cell * axis.block;
  const to = Math.min(axis.tokens.length, from + axis.block) - 1;
  const one = (index: number) => clipped(shownToken(axis.tokens[index]), HOVER_CHARS);
  return to <= from ? `${one(from)} (${from})` : `${one(from)}…${one(to)} (${from}–${to})`;
}

export interface LabelledMap {
  /** The canvas with its two axes, to put on the page. */
  element: HTMLElement;
  /** Names the hovered row and column over the axes (undefined: none). */
  hover(row: number | undefined, col: number | undefined): void;
  /** The map with its labels, on one canvas at the screen's resolution (the PNG export). */
  exportCanvas(): HTMLCanvasElement;
  /** The map with its labels as SVG text, the cells an embedded image. */
  svg(title: string): string;
}

/** Room for the longest label of `ticks` in 11 px text, within [min, max] CSS px. */
function room(ticks: Tick[], min: number, max: number): number {
  const context = document.createElement('canvas').getContext('2d');
  if (!context) return max;
  context.font = FONT;
  let widest = 0;
  for (const tick of ticks) widest = Math.max(widest, context.measureText(tick.text).width);
  return Math.max(min, Math.min(max, Math.ceil(widest) + 8));
}

/**
 * `canvas` (already drawn, `scale` CSS px per cell) with its rows' tokens on the left and its
 * columns' on top, read bottom to top. `id`: the stem of the hovered labels' ids, unique on the page.
 */
export function labelledMap(canvas: HTMLCanvasElement, rows: MapAxis, cols: MapAxis, scale: number, id = 'map'): LabelledMap {
  const rowTicks = axisTicks(rows, scale);
  const colTicks = axisTicks(cols, scale);
  const left = room(rowTicks, 24, 120);
  const top = room(colTicks, 24, 110);
  const width = cols.cells * scale;
  const height = rows.cells * scale;
  const box = element('div', undefined, { class: 'labelled-map' });
  box.style.gridTemplateColumns = `${left}px ${width}px`;
  box.style.gridTemplateRows = `${top}px ${height}px`;
  const columnAxis = element('div', undefined, { class: 'axis axis-columns', 'aria-hidden': 'true' });
  const rowAxis = element('div', undefined, { class: 'axis axis-rows', 'aria-hidden': 'true' });
  columnAxis.style.height = `${top}px`;
  rowAxis.style.width = `${left}px`;
  const tick = (axis: HTMLElement, { cell, token, text }: Tick, across: 'top' | 'left') => {
    const label = element('span', text, { class: 'tick', 'data-token': String(token) });
    label.style[across] = `${(cell + 0.5) * scale - LABEL_PITCH / 2}px`;
    axis.append(label);
  };
  for (const t of rowTicks) tick(rowAxis, t, 'top');
  for (const t of colTicks) tick(columnAxis, t, 'left');
  const rowHover = element('span', '', { class: 'tick hovered', id: `${id}-row-hover` });
  const colHover = element('span', '', { class: 'tick hovered', id: `${id}-col-hover` });
  rowHover.hidden = true;
  colHover.hidden = true;
  rowAxis.append(rowHover);
  columnAxis.append(colHover);
  box.dataset.rowStep = String(labelStep(scale, rows.block));
  box.dataset.colStep = String(labelStep(scale, cols.block));
  box.append(element('div'), columnAxis, rowAxis, canvas);

  const hover = (row: number | undefined, col: number | undefined) => {
    rowHover.hidden = row === undefined;
    colHover.hidden = col === undefined;
    if (row !== undefined) {
      rowHover.textContent = cellLabel(rows, row);
      rowHover.style.top = `${(row + 0.5) * scale - LABEL_PITCH / 2}px`;
    }
    if (col !== undefined) {
      colHover.textContent = cellLabel(cols, col);
      colHover.style.left = `${(col + 0.5) * scale - LABEL_PITCH / 2}px`;
    }
  };
  canvas.addEventListener('mouseleave', () => hover(undefined, undefined));

  const colors = () => {
    const style = getComputedStyle(document.body);
    return {
      background: style.getPropertyValue('--vscode-editor-background').trim() || '#ffffff',
      foreground: style.getPropertyValue('--vscode-foreground').trim() || '#333333',
    };
  };

  const exportCanvas = () => {
    const ratio = window.devicePixelRatio || 1;
    const out = document.createElement('canvas');
    out.width = Math.round((left + width) * ratio);
    out.height = Math.round((top + height) * ratio);
    const context = out.getContext('2d')!;
    const { background, foreground } = colors();
    context.fillStyle = background;
    context.fillRect(0, 0, out.width, out.height);
    context.imageSmoothingEnabled = false;
    context.drawImage(canvas, Math.round(left * ratio), Math.round(top * ratio), Math.round(width * ratio), Math.round(height * ratio));
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.fillStyle = foreground;
    context.font = FONT;
    context.textBaseline = 'middle';
    context.textAlign = 'right';
    for (const { cell, text } of rowTicks) context.fillText(text, left - 4, top + (cell + 0.5) * scale);
    context.rotate(-Math.PI / 2);
    context.textAlign = 'left';
    // Rotated a quarter turn: x runs up the page, y across it.
    for (const { cell, text } of colTicks) context.fillText(text, -(top - 4), left + (cell + 0.5) * scale);
    return out;
  };

  const svg = (title: string) => {
    const { background, foreground } = colors();
    const w = left + width;
    const h = top + height;
    const rowsText = rowTicks.map(({ cell, text }) => `<text x="${left - 4}" y="${top + (cell + 0.5) * scale}" text-anchor="end" dominant-baseline="middle">${escapeXml(text)}</text>`);
    const colsText = colTicks.map(({ cell, text }) => {
      const x = left + (cell + 0.5) * scale;
      return `<text x="${x}" y="${top - 4}" transform="rotate(-90 ${x} ${top - 4})" dominant-baseline="middle">${escapeXml(text)}</text>`;
    });
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif" font-size="11" fill="${escapeXml(foreground)}">
<title>${escapeXml(title)}</title>
<rect width="${w}" height="${h}" fill="${escapeXml(background)}"/>
<image x="${left}" y="${top}" width="${width}" height="${height}" preserveAspectRatio="none" style="image-rendering:pixelated" href="${canvas.toDataURL('image/png')}"/>
${rowsText.join('\n')}
${colsText.join('\n')}
</svg>
`;
  };

  return { element: box, hover, exportCanvas, svg };
}

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
