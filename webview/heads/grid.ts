// The model view: every chosen layer × head as a thumbnail of its attention map, all on one
// canvas. The worker pools each map to the thumbnail's cells (max or mean, the user's choice, said
// above the grid); the page paints cells to pixels, answers hovers from the pooled numbers it
// holds, and moves a keyboard focus over the heads (arrows; Enter opens).
import { quantity } from '../../src/core/words';
import { DEFAULT_THUMBNAIL_SIDE, type PooledGrid, type PoolMode } from '../../src/protocol';
import { RAMP, rampIndex } from './colors';
import { element, type HeadsPage, labelled, parseSelection, spanLabel, wallClock, weightText } from './page';

const GAP = 6;
const LABEL = 28;
const SIZES = [32, 48, 64, 96];

export interface GridView {
  section: HTMLElement;
  canvas: HTMLCanvasElement;
  /** The thumbnail at (x, y) in the canvas's CSS pixels, and the hover text there. */
  hoverAt(x: number, y: number): string | undefined;
  grid(): PooledGrid | undefined;
  thumbnail(): number;
  /** Each thumbnail's largest cell (the top of its colour ramp). */
  tops(): Float32Array;
  /** The canvas's size in CSS pixels (its backing store holds devicePixelRatio times more). */
  cssSize(): { width: number; height: number };
  /** What the legend says each thumbnail and cell is. */
  legend(): string;
}

export function gridView(page: HeadsPage): GridView {
  const { info } = page;
  const section = element('section', undefined, { id: 'heads-model' });
  const mode = element('select', undefined, { id: 'grid-mode', 'aria-label': 'Pooling' });
  for (const option of ['max', 'mean']) mode.append(element('option', option, { value: option }));
  const size = element('select', undefined, { id: 'grid-size', 'aria-label': 'Thumbnail size' });
  for (const side of SIZES) size.append(element('option', `${side} px`, { value: String(side) }));
  size.value = String(DEFAULT_THUMBNAIL_SIDE);
  const layers = element('input', undefined, { id: 'grid-layers', placeholder: `all (0–${info.layerCount - 1})`, 'aria-label': 'Layers' });
  const heads = element('input', undefined, { id: 'grid-heads', placeholder: `all (0–${info.headCount - 1})`, 'aria-label': 'Heads' });
  const legend = element('p', '', { id: 'grid-legend', class: 'meta' });
  const canvas = element('canvas', undefined, { id: 'grid-canvas', tabindex: '0', role: 'grid', 'aria-label': 'Every layer and head: arrows move, Enter opens' });
  const tooltip = element('div', '', { id: 'grid-tooltip', class: 'tooltip', role: 'tooltip' });
  const wrapper = element('div', undefined, { class: 'canvas-wrapper' });
  wrapper.append(canvas, tooltip);
  const controls = element('div', undefined, { class: 'controls' });
  controls.append(labelled('Pooling ', mode), labelled('Thumbnail ', size), labelled('Layers ', layers), labelled('Heads ', heads));
  section.append(controls, legend, wrapper);

  let shown: PooledGrid | undefined;
  let tops = new Float32Array(0);
  let side = DEFAULT_THUMBNAIL_SIDE;
  let focus = { layer: 0, head: 0 };

  const origin = (l: number, h: number) => ({ x: LABEL + h * (side + GAP), y: LABEL + l * (side + GAP) });

  /** The canvas's size in CSS pixels: hit-testing and drawing work in these. */
  let cssWidth = 0;
  let cssHeight = 0;
  let paintedRatio = 1;

  const paint = () => {
    const grid = shown;
    if (!grid) return;
    // The backing store holds a device pixel per pixel (crisp on HiDPI screens); the thumbnails
    // are painted at that resolution, the labels and focus drawn in CSS pixels through the scale.
    const ratio = window.devicePixelRatio || 1;
    cssWidth = LABEL + grid.heads.length * (side + GAP);
    cssHeight = LABEL + grid.layers.length * (side + GAP);
    const width = Math.round(cssWidth * ratio);
    const height = Math.round(cssHeight * ratio);
    canvas.width = width;
    canvas.height = height;
    canvas.style.width = `${cssWidth}px`;
    canvas.style.height = `${cssHeight}px`;
    const context = canvas.getContext('2d')!;
    const image = context.createImageData(width, height);
    const pixels = image.data;
    const cells = grid.rows * grid.cols;
    tops = new Float32Array(grid.layers.length * grid.heads.length);
    // Each cell spans side/rows CSS pixels: device pixel → cell, nearest.
    const deviceSide = Math.round(side * ratio);
    const rowOf = Int32Array.from({ length: deviceSide }, (_, y) => Math.min(grid.rows - 1, Math.floor((y * grid.rows) / deviceSide)));
    const colOf = Int32Array.from({ length: deviceSide }, (_, x) => Math.min(grid.cols - 1, Math.floor((x * grid.cols) / deviceSide)));
    for (let l = 0; l < grid.layers.length; l++) {
      for (let h = 0; h < grid.heads.length; h++) {
        const index = l * grid.heads.length + h;
        const map = grid.data.subarray(index * cells, (index + 1) * cells);
        let top = 0;
        for (const value of map) if (value > top) top = value;
        tops[index] = top;
        const cssOrigin = origin(l, h);
        const x = Math.round(cssOrigin.x * ratio);
        const y = Math.round(cssOrigin.y * ratio);
        for (let py = 0; py < deviceSide; py++) {
          let at = ((y + py) * width + x) * 4;
          const row = rowOf[py] * grid.cols;
          for (let px = 0; px < deviceSide; px++, at += 4) {
            const color = rampIndex(map[row + colOf[px]], top);
            pixels[at] = RAMP[color];
            pixels[at + 1] = RAMP[color + 1];
            pixels[at + 2] = RAMP[color + 2];
            pixels[at + 3] = 255;
          }
        }
      }
    }
    context.putImageData(image, 0, 0);
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    const style = getComputedStyle(document.body);
    context.fillStyle = style.getPropertyValue('--vscode-foreground').trim() || '#333';
    context.font = '11px sans-serif';
    context.textAlign = 'center';
    context.textBaseline = 'middle';
    grid.heads.forEach((head, h) => context.fillText(`H${head}`, origin(0, h).x + side / 2, LABEL / 2));
    context.textAlign = 'right';
    grid.layers.forEach((layer, l) => context.fillText(`L${layer}`, LABEL - 4, origin(l, 0).y + side / 2));
    drawFocus(context);
    canvas.dataset.painted = String(grid.layers.length * grid.heads.length);
    paintedRatio = ratio;
  };
  // A zoom or a move to another screen changes the ratio (and fires resize): paint for the new one.
  window.addEventListener('resize', () => {
    if (shown && (window.devicePixelRatio || 1) !== paintedRatio) paint();
  });

  const drawFocus = (context: CanvasRenderingContext2D) => {
    const { x, y } = origin(focus.layer, focus.head);
    context.strokeStyle = getComputedStyle(document.body).getPropertyValue('--vscode-focusBorder').trim() || '#007fd4';
    context.lineWidth = 2;
    context.strokeRect(x - 2, y - 2, side + 4, side + 4);
  };

  const at = (x: number, y: number) => {
    if (!shown) return undefined;
    const h = Math.floor((x - LABEL) / (side + GAP));
    const l = Math.floor((y - LABEL) / (side + GAP));
    if (h < 0 || l < 0 || h >= shown.heads.length || l >= shown.layers.length) return undefined;
    const inX = x - LABEL - h * (side + GAP);
    const inY = y - LABEL - l * (side + GAP);
    if (inX >= side || inY >= side) return undefined;
    return { l, h, row: Math.min(shown.rows - 1, Math.floor((inY * shown.rows) / side)), col: Math.min(shown.cols - 1, Math.floor((inX * shown.cols) / side)) };
  };

  const hoverAt = (x: number, y: number): string | undefined => {
    const hit = at(x, y);
    if (!hit || !shown) return undefined;
    const { rowBlock, colBlock, rows, cols } = shown;
    const value = shown.data[(hit.l * shown.heads.length + hit.h) * rows * cols + hit.row * cols + hit.col];
    const queries = spanLabel(info.tokens, hit.row * rowBlock, Math.min(info.queryCount, (hit.row + 1) * rowBlock));
    const keys = spanLabel(info.keyTokens, hit.col * colBlock, Math.min(info.keyCount, (hit.col + 1) * colBlock));
    const pooled = rowBlock * colBlock > 1 ? `${shown.mode} ` : '';
    return `Layer ${shown.layers[hit.l]} · head ${shown.heads[hit.h]} · ${queries} → ${keys}: ${pooled}${weightText(value)}`;
  };

  const request = async () => {
    const layerList = parseSelection(layers.value, info.layerCount);
    const headList = parseSelection(heads.value, info.headCount);
    layers.classList.toggle('invalid', !layerList || layerList.length === 0);
    heads.classList.toggle('invalid', !headList || headList.length === 0);
    if (!layerList?.length || !headList?.length) return page.status(`Layers are 0–${info.layerCount - 1}, heads 0–${info.headCount - 1}: write them like 0-3, 7.`);
    side = Number(size.value);
    const answer = await page.ask({ kind: 'grid', size: side, mode: mode.value as PoolMode, layers: layerList, heads: headList }, 'grid');
    if (answer?.kind !== 'grid') return;
    const receivedAt = wallClock();
    shown = answer.grid;
    focus = { layer: Math.min(focus.layer, shown.layers.length - 1), head: Math.min(focus.head, shown.heads.length - 1) };
    const block = shown.rowBlock * shown.colBlock > 1 ? `each cell the ${shown.mode} of ${shown.rowBlock}×${shown.colBlock} weights` : 'each cell one weight';
    legend.textContent = `${quantity(shown.layers.length, 'layer')} × ${quantity(shown.heads.length, 'head')}, ${info.queryCount} queries × ${info.keyCount} keys; ${block}; each thumbnail coloured from 0 to its own largest cell. Click or Enter opens a head.`;
    paint();
    // When this grid's data arrived and when its paint reached the screen (the next frame), and
    // the pooled bytes it came with: bench/heads.mjs reads them.
    const paintedAt = wallClock();
    const bytes = shown.data.byteLength;
    requestAnimationFrame(() => {
      canvas.dataset.timing = JSON.stringify({ receivedAt, paintedAt, shownAt: wallClock(), bytes });
    });
  };

  for (const control of [mode, size]) control.addEventListener('change', () => void request());
  for (const control of [layers, heads]) control.addEventListener('change', () => void request());

  /** The event's point in the canvas's CSS pixels (whatever its backing store's resolution). */
  const local = (event: MouseEvent) => {
    const box = canvas.getBoundingClientRect();
    return { x: ((event.clientX - box.left) * cssWidth) / box.width, y: ((event.clientY - box.top) * cssHeight) / box.height };
  };
  canvas.addEventListener('mousemove', (event) => {
    const { x, y } = local(event);
    const text = hoverAt(x, y);
    tooltip.textContent = text ?? '';
    tooltip.hidden = text === undefined;
    if (text !== undefined) {
      tooltip.style.left = `${event.offsetX + 12}px`;
      tooltip.style.top = `${event.offsetY + 12}px`;
    }
  });
  canvas.addEventListener('mouseleave', () => {
    tooltip.hidden = true;
  });
  canvas.addEventListener('click', (event) => {
    const { x, y } = local(event);
    const hit = at(x, y);
    if (!hit || !shown) return;
    focus = { layer: hit.l, head: hit.h };
    paint();
    page.openHead(shown.layers[hit.l], shown.heads[hit.h]);
  });
  canvas.addEventListener('keydown', (event) => {
    if (!shown) return;
    const moves: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const move = moves[event.key];
    if (move) {
      focus = { layer: clamp(focus.layer + move[0], shown.layers.length), head: clamp(focus.head + move[1], shown.heads.length) };
      paint();
      const layer = shown.layers[focus.layer];
      const head = shown.heads[focus.head];
      canvas.setAttribute('aria-label', `Layer ${layer}, head ${head}: Enter opens`);
      page.status(`Layer ${layer} · head ${head} (Enter opens)`);
      event.preventDefault();
    } else if (event.key === 'Enter') {
      page.openHead(shown.layers[focus.layer], shown.heads[focus.head]);
      event.preventDefault();
    }
  });
  tooltip.hidden = true;
  void request();
  return { section, canvas, hoverAt, grid: () => shown, thumbnail: () => side, tops: () => tops, cssSize: () => ({ width: cssWidth, height: cssHeight }), legend: () => legend.textContent ?? '' };
}

function clamp(value: number, count: number): number {
  return Math.max(0, Math.min(count - 1, value));
}
