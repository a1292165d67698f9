// The head view: for one layer and the chosen heads, a line from each query token (left column)
// to each of its k strongest keys (right column), as opaque as its weight and coloured per head,
// in BertViz's two-column form. Drawn on a canvas the height of the viewport: only the visible
// rows' tokens and the lines that cross the viewport are drawn, so 4096 tokens scroll as 16 do.
// Hovering a token keeps only its lines; lines fainter than the threshold are hidden.
import { shownToken } from '../../src/core/words';
import type { HeadLines } from '../../src/protocol';
import { headColor } from './colors';
import { axisNames } from './kinds';
import { element, type HeadsPage, labelled, quoted, weightText } from './page';
import { predictionTip } from './predictionTip';

const ROW = 16;
const COLUMN = 150;
const SPAN = 240;
const WIDTH = 2 * COLUMN + SPAN;
/** Lines are stroked in buckets of equal opacity: one path per head and bucket. */
const BUCKETS = 16;

export interface HeadViewPart {
  section: HTMLElement;
  canvas: HTMLCanvasElement;
  /** The lines drawn now (after threshold and hover), for export. */
  drawnLines(): { head: number; query: number; key: number; weight: number }[];
  /** Hover as the mouse would over a token: side and index; undefined clears. */
  hover(side: 'query' | 'key', index: number | undefined): void;
  /** Keeps to one query's lines, that token marked and scrolled to (a generation's step); undefined: every query. */
  focus(query: number | undefined): void;
  /** The stack grew by queries and keys (a generation's live views, live.ts): rows made and lines asked again. */
  grow(): void;
}

export function headView(page: HeadsPage): HeadViewPart {
  const { info } = page;
  const section = element('section', undefined, { id: 'heads-lines' });
  const layer = element('select', undefined, { id: 'lines-layer', 'aria-label': 'Layer' });
  for (let l = 0; l < info.layerCount; l++) layer.append(element('option', `Layer ${l}`, { value: String(l) }));
  const headBoxes = element('span', undefined, { id: 'lines-heads', class: 'heads' });
  const boxes = Array.from({ length: info.headCount }, (_, head) => {
    const box = element('input', undefined, { type: 'checkbox', 'data-head': String(head), 'aria-label': `Head ${head}` });
    box.checked = head === 0;
    const label = labelled(` ${head}`, box);
    label.prepend(box);
    label.style.borderBottom = `3px solid ${headColor(head)}`;
    headBoxes.append(label);
    return box;
  });
  const topK = element('input', undefined, { id: 'lines-k', type: 'number', min: '1', max: '64', value: '5', 'aria-label': 'Top-k keys per query' });
  const threshold = element('input', undefined, { id: 'lines-threshold', type: 'range', min: '0', max: '1', step: '0.01', value: '0.05', 'aria-label': 'Threshold' });
  const thresholdText = element('span', '0.05', { id: 'lines-threshold-value' });
  const reading = element('p', 'Hover a token to see only its lines.', { id: 'lines-hover', class: 'meta', role: 'status' });
  const scroller = element('div', undefined, { id: 'lines-scroller', class: 'lines-scroller' });
  const spacer = element('div', undefined, { class: 'lines-spacer' });
  const canvas = element('canvas', undefined, { id: 'lines-canvas', 'aria-label': 'Lines from each query to the keys it attends to' });
  scroller.append(canvas, spacer);
  // A model run's tokens also tell what the model predicts there, on hover.
  const tip = predictionTip(page);
  if (tip) scroller.append(tip.element);
  const controls = element('div', undefined, { class: 'controls' });
  controls.append(labelled('Layer ', layer), labelled('Heads ', headBoxes), labelled('Top-k ', topK), labelled('Threshold ', threshold), thresholdText);
  section.append(controls, reading);
  // An encoder–decoder run's kind says which tokens each column holds (the target and the source for cross-attention).
  if (info.kind) {
    const names = axisNames(info);
    section.append(element('p', `Left: ${names.rows} tokens; right: ${names.cols} tokens.`, { class: 'meta', id: 'lines-columns' }));
  }
  section.append(scroller);

  let rows = 0;
  const size = () => {
    rows = Math.max(info.queryCount, info.keyCount);
    spacer.style.height = `${rows * ROW}px`;
  };
  size();
  let lines: HeadLines | undefined;
  let hovered: { side: 'query' | 'key'; index: number } | undefined;
  /** The query a generation's step shows: its lines only, unless a hover says otherwise. */
  let focused: number | undefined;

  const visible = () => {
    const top = scroller.scrollTop;
    const height = Math.min(scroller.clientHeight || 600, rows * ROW);
    return { top, height };
  };

  /** Calls `each` for every line shown now. */
  const forEachLine = (each: (head: number, query: number, key: number, weight: number) => void) => {
    if (!lines) return;
    const cut = Number(threshold.value);
    const perHead = info.queryCount * lines.k;
    const only = hovered ?? (focused === undefined ? undefined : { side: 'query', index: focused });
    lines.heads.forEach((head, h) => {
      for (let query = 0; query < info.queryCount; query++) {
        if (only?.side === 'query' && only.index !== query) continue;
        for (let r = 0; r < lines!.k; r++) {
          const at = h * perHead + query * lines!.k + r;
          const weight = lines!.weights[at];
          if (!(weight >= cut) || weight <= 0) break; // sorted: the rest are fainter
          const key = lines!.keys[at];
          if (hovered?.side === 'key' && hovered.index !== key) continue;
          each(head, query, key, weight);
        }
      }
    });
  };

  const paint = () => {
    const { top, height } = visible();
    canvas.width = WIDTH;
    canvas.height = height;
    canvas.style.top = `${top}px`;
    const context = canvas.getContext('2d')!;
    const style = getComputedStyle(document.body);
    const foreground = style.getPropertyValue('--vscode-foreground').trim() || '#333';
    context.clearRect(0, 0, WIDTH, height);
    const yOf = (index: number) => index * ROW + ROW / 2 - top;
    // Lines: bucketed by opacity, one path per head and bucket.
    const paths = new Map<string, Path2D>();
    forEachLine((head, query, key, weight) => {
      const y1 = yOf(query);
      const y2 = yOf(key);
      if ((y1 < 0 && y2 < 0) || (y1 > height && y2 > height)) return;
      const bucket = Math.min(BUCKETS - 1, Math.floor(weight * BUCKETS));
      const name = `${head}:${bucket}`;
      let path = paths.get(name);
      if (!path) paths.set(name, (path = new Path2D()));
      path.moveTo(COLUMN, y1);
      path.lineTo(COLUMN + SPAN, y2);
    });
    context.lineWidth = 2;
    for (const [name, path] of paths) {
      const [head, bucket] = name.split(':').map(Number);
      context.strokeStyle = headColor(head);
      context.globalAlpha = (bucket + 1) / BUCKETS;
      context.stroke(path);
    }
    context.globalAlpha = 1;
    // Tokens of the visible rows.
    context.font = '12px sans-serif';
    context.textBaseline = 'middle';
    const first = Math.max(0, Math.floor(top / ROW));
    const last = Math.min(rows, Math.ceil((top + height) / ROW));
    for (let i = first; i < last; i++) {
      for (const side of ['query', 'key'] as const) {
        const tokens = side === 'query' ? info.tokens : info.keyTokens;
        if (i >= tokens.length) continue;
        const isHovered = hovered?.side === side && hovered.index === i;
        const isFocused = side === 'query' && focused === i;
        context.fillStyle = foreground;
        context.globalAlpha = hovered && !isHovered ? 0.6 : 1;
        context.font = isFocused ? 'bold 12px sans-serif' : '12px sans-serif';
        context.textAlign = side === 'query' ? 'right' : 'left';
        context.fillText(shortToken(tokens[i]), side === 'query' ? COLUMN - 6 : COLUMN + SPAN + 6, yOf(i), COLUMN - 8);
      }
    }
    context.globalAlpha = 1;
    canvas.dataset.lines = String(countLines());
  };

  const countLines = () => {
    let count = 0;
    forEachLine(() => count++);
    return count;
  };

  const hover = (side: 'query' | 'key', index: number | undefined) => {
    hovered = index === undefined ? undefined : { side, index };
    if (hovered && lines) {
      const parts: string[] = [];
      forEachLine((head, query, key, weight) => parts.push(`head ${head}: ${side === 'query' ? quoted(info.keyTokens[key]) : quoted(info.tokens[query])} ${weightText(weight)}`));
      const token = side === 'query' ? info.tokens[hovered.index] : info.keyTokens[hovered.index];
      reading.textContent = `${side === 'query' ? 'Query' : 'Key'} ${quoted(token)} (${hovered.index}) ${side === 'query' ? '→' : '←'} ${parts.length ? parts.join(', ') : 'no line above the threshold'}`;
    } else reading.textContent = 'Hover a token to see only its lines.';
    paint();
  };

  const request = async () => {
    const heads = boxes.filter((box) => box.checked).map((box) => Number(box.dataset.head));
    const k = Math.max(1, Math.min(64, Math.floor(Number(topK.value) || 1)));
    if (heads.length === 0) {
      lines = undefined;
      return paint();
    }
    const answer = await page.ask({ kind: 'lines', layer: Number(layer.value), heads, k }, 'lines');
    if (answer?.kind !== 'lines') return;
    lines = answer.lines;
    paint();
  };

  canvas.addEventListener('mousemove', (event) => {
    const box = canvas.getBoundingClientRect();
    const x = event.clientX - box.left;
    const index = Math.floor((event.clientY - box.top + scroller.scrollTop) / ROW);
    const side: 'query' | 'key' | undefined = x < COLUMN ? 'query' : x > COLUMN + SPAN ? 'key' : undefined;
    const count = side === 'query' ? info.queryCount : info.keyCount;
    const next = side && index < count ? { side, index } : undefined;
    if (next?.side !== hovered?.side || next?.index !== hovered?.index) hover(next?.side ?? 'query', next?.index);
    tip?.hover(next?.index, event.offsetX, event.offsetY + scroller.scrollTop);
  });
  canvas.addEventListener('mouseleave', () => {
    hover('query', undefined);
    tip?.hover(undefined, 0, 0);
  });
  scroller.addEventListener('scroll', () => requestAnimationFrame(paint));
  threshold.addEventListener('input', () => {
    thresholdText.textContent = Number(threshold.value).toFixed(2);
    paint();
  });
  for (const control of [layer, topK, ...boxes]) control.addEventListener('change', () => void request());
  const drawnLines = () => {
    const all: { head: number; query: number; key: number; weight: number }[] = [];
    forEachLine((head, query, key, weight) => all.push({ head, query, key, weight }));
    return all;
  };
  const focus = (query: number | undefined) => {
    focused = query;
    canvas.dataset.focused = query === undefined ? '' : String(query);
    if (query !== undefined) scroller.scrollTop = Math.max(0, query * ROW - (scroller.clientHeight || 600) / 2);
    paint();
  };
  const grow = () => {
    size();
    void request();
  };
  void request();
  return { section, canvas, drawnLines, hover, focus, grow };
}

function shortToken(token: string): string {
  const shown = shownToken(token);
  return shown.length > 20 ? `${shown.slice(0, 19)}…` : shown;
}
