// One head opened from the model view: its full heatmap on a canvas (pooled by the worker's max
// when over 512 per side, as the panel's overview is) with its tokens on both axes (axes.ts), the
// query, key and weight on hover, and PNG/SVG exports of the map with its labels. The alignment
// view draws a cross-attention head, or a layer's mean, with it too (`id` keeps its ids apart).
import type { HeadsViewToHost, MatrixView, StackInfo } from '../../src/protocol';
import { labelledMap } from './axes';
import { RAMP, rampIndex } from './colors';
import { fileStem, pngBase64 } from './exportImage';
import { axisNames } from './kinds';
import { element, spanLabel, weightText } from './page';

const MAX_SIDE = 600;

/** `head`: a head's number, or 'mean' for the mean of the layer's heads. `id`: the stem of the
 * map's ids ('head': the opened head's, `#heads-head`; else `#<id>-map`). */
export function headMap(info: StackInfo, layer: number, head: number | 'mean', view: MatrixView, post?: (message: HeadsViewToHost) => void, id = 'head'): HTMLElement {
  const section = element('section', undefined, { id: id === 'head' ? 'heads-head' : `${id}-map`, 'data-layer': String(layer), 'data-head': String(head) });
  const pooled = view.rowBlock * view.colBlock > 1;
  const names = axisNames(info);
  const which = head === 'mean' ? `mean of ${info.headCount} heads` : `head ${head}`;
  section.append(
    element('h2', `Layer ${layer} · ${which}`),
    element('p', `${info.queryCount} ${names.rows} tokens (rows) × ${info.keyCount} ${names.cols} tokens (columns)${pooled ? `; each cell the max of ${view.rowBlock}×${view.colBlock} weights` : ''}; colour from 0 to 1.`, { class: 'meta' }),
  );
  const scale = Math.max(1, Math.floor(MAX_SIDE / Math.max(view.rows, view.cols)));
  const canvas = element('canvas', undefined, { id: `${id}-canvas`, tabindex: '0', 'aria-label': `Attention weights of layer ${layer}, ${which}` });
  // Its backing store at the screen's resolution (as the grid's), so the cells' edges stay sharp on HiDPI.
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.round(view.cols * scale * ratio);
  canvas.height = Math.round(view.rows * scale * ratio);
  canvas.style.width = `${view.cols * scale}px`;
  canvas.style.height = `${view.rows * scale}px`;
  const context = canvas.getContext('2d')!;
  const image = context.createImageData(view.cols, view.rows);
  // Bytes written in place: a 512 × 512 view is 262 k cells, and an array per cell cost the click.
  const pixels = image.data;
  for (let i = 0, at = 0; i < view.rows * view.cols; i++, at += 4) {
    const color = rampIndex(view.data[i], 1);
    pixels[at] = RAMP[color];
    pixels[at + 1] = RAMP[color + 1];
    pixels[at + 2] = RAMP[color + 2];
    pixels[at + 3] = 255;
  }
  // Cells drawn 1:1, then scaled without smoothing so each stays a sharp square.
  const cells = element('canvas');
  cells.width = view.cols;
  cells.height = view.rows;
  cells.getContext('2d')!.putImageData(image, 0, 0);
  context.imageSmoothingEnabled = false;
  context.drawImage(cells, 0, 0, canvas.width, canvas.height);
  const map = labelledMap(
    canvas,
    { tokens: info.tokens, start: view.rowStart, block: view.rowBlock, cells: view.rows },
    { tokens: info.keyTokens, start: view.colStart, block: view.colBlock, cells: view.cols },
    scale,
    id === 'head' ? 'map' : id,
  );
  const reading = element('p', `Hover a cell for its ${names.rows}, ${names.cols} and weight.`, { id: `${id}-hover`, class: 'meta', role: 'status' });
  canvas.addEventListener('mousemove', (event) => {
    const box = canvas.getBoundingClientRect();
    const col = Math.floor(((event.clientX - box.left) / box.width) * view.cols);
    const row = Math.floor(((event.clientY - box.top) / box.height) * view.rows);
    if (row < 0 || col < 0 || row >= view.rows || col >= view.cols) return;
    map.hover(row, col);
    const query = spanLabel(info.tokens, view.rowStart + row * view.rowBlock, Math.min(info.queryCount, view.rowStart + (row + 1) * view.rowBlock));
    const key = spanLabel(info.keyTokens, view.colStart + col * view.colBlock, Math.min(info.keyCount, view.colStart + (col + 1) * view.colBlock));
    reading.textContent = `${names.rows} ${query} → ${names.cols} ${key}: ${pooled ? 'max ' : ''}${weightText(view.data[row * view.cols + col])}`;
  });
  if (post) {
    const exports = element('div', undefined, { class: 'controls', id: `${id}-export` });
    const title = `${info.title}: layer ${layer} · ${which}`;
    const base = `${fileStem(info.title)}-L${layer}${head === 'mean' ? '-mean' : `H${head}`}`;
    for (const format of ['png', 'svg'] as const) {
      const button = element('button', format.toUpperCase(), { 'data-export': `${id}-${format}` });
      button.addEventListener('click', () =>
        post(
          format === 'png'
            ? { type: 'export', format, fileName: `${base}.png`, base64: pngBase64(map.exportCanvas()) }
            : { type: 'export', format, fileName: `${base}.svg`, text: map.svg(title) },
        ),
      );
      exports.append(button);
    }
    section.append(exports);
  }
  section.append(map.element, reading);
  return section;
}
