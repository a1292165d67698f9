// The model view: every chosen layer × head as a thumbnail of its attention map, all on one
// canvas. The worker pools each map to the thumbnail's cells (max or mean, the user's choice, said
// above the grid); the page paints cells to pixels, answers hovers from the pooled numbers it
// holds, and moves a keyboard focus over the heads (arrows; Enter opens).
// A picture run's thumbnails are the picture under one token's attention instead (overlay.ts):
// the class token's, or the pointed-at patch's — the worker sends that one row of each head
// (layers × heads × patches floats, a `rows` query), not the n × n maps.
import { quantity } from '../../src/core/words';
import { DEFAULT_THUMBNAIL_SIDE, type PictureInfo, type PooledGrid, type PoolMode } from '../../src/protocol';
import { RAMP, rampIndex } from './colors';
import { paintOverlay, pictureCanvas, type ThumbnailPicture, thumbnailPicture } from './overlay';
import { element, type HeadsPage, labelled, parseSelection, spanLabel, wallClock, weightText } from './page';

const GAP = 6;
const LABEL = 28;
const SIZES = [32, 48, 64, 96];

export interface GridView {
  section: HTMLElement;
  canvas: HTMLCanvasElement;
  /** The thumbnail at (x, y) in the canvas's CSS pixels, and the hover text there. */
  hoverAt(x: number, y: number): string | undefined;
  /** Whether the thumbnails have been drawn. */
  drawn(): boolean;
  thumbnail(): number;
  /** Each thumbnail's largest cell (the top of its colour ramp). */
  tops(): Float32Array;
  /** The canvas's size in CSS pixels (its backing store holds devicePixelRatio times more). */
  cssSize(): { width: number; height: number };
  /** What the legend says each thumbnail and cell is. */
  legend(): string;
  /** Asks again for what it shows: the stack grew (a generation's live views, live.ts). */
  refresh(): void;
}

/** A picture run's overlays as last received: row `query` of each layer × head over the patches. */
interface Overlays {
  query: number;
  layers: number[];
  heads: number[];
  /** [layer][head][patch]. */
  data: Float32Array;
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
  const picture = info.picture;
  // A picture run: the thumbnails as overlays on the picture (or as attention maps), from a token.
  const show = element('select', undefined, { id: 'grid-show', 'aria-label': 'Thumbnails' });
  show.append(element('option', 'attention over the picture', { value: 'picture' }), element('option', 'attention maps', { value: 'map' }));
  const from = element('select', undefined, { id: 'grid-query', 'aria-label': 'Attention from' });
  info.tokens.forEach((token, i) => from.append(element('option', token, { value: String(i) })));
  const opacity = element('input', undefined, { id: 'grid-opacity', type: 'range', min: '0', max: '1', step: '0.05', value: '0.6', 'aria-label': 'Overlay opacity' });
  const legend = element('p', '', { id: 'grid-legend', class: 'meta' });
  const canvas = element('canvas', undefined, { id: 'grid-canvas', tabindex: '0', role: 'grid', 'aria-label': 'Every layer and head: arrows move, Enter opens' });
  const tooltip = element('div', '', { id: 'grid-tooltip', class: 'tooltip', role: 'tooltip' });
  const wrapper = element('div', undefined, { class: 'canvas-wrapper' });
  wrapper.append(canvas, tooltip);
  const controls = element('div', undefined, { class: 'controls' });
  if (picture) controls.append(labelled('Show ', show), labelled(' from ', from), labelled(' opacity ', opacity));
  controls.append(labelled('Pooling ', mode), labelled('Thumbnail ', size), labelled('Layers ', layers), labelled('Heads ', heads));
  section.append(controls, legend, wrapper);

  let shown: PooledGrid | undefined;
  let overlays: Overlays | undefined;
  /** The patch the pointer is on (its token index), whose attention the overlays show meanwhile. */
  let pointed: number | undefined;
  /** Where the pointer is on the canvas (CSS pixels), while it is. */
  let pointer: { x: number; y: number } | undefined;
  const source = picture && pictureCanvas(picture);
  let thumbnail: { key: string; picture: ThumbnailPicture } | undefined;
  const overlaid = () => picture !== undefined && show.value === 'picture';
  /** The layers and heads drawn, whichever the thumbnails are. */
  const listed = () => (overlaid() ? overlays : shown);
  let tops = new Float32Array(0);
  let side = DEFAULT_THUMBNAIL_SIDE;
  let focus = { layer: 0, head: 0 };

  const origin = (l: number, h: number) => ({ x: LABEL + h * (side + GAP), y: LABEL + l * (side + GAP) });

  /** The canvas's size in CSS pixels: hit-testing and drawing work in these. */
  let cssWidth = 0;
  let cssHeight = 0;
  let paintedRatio = 1;

  const paint = () => {
    const grid = listed();
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
    tops = new Float32Array(grid.layers.length * grid.heads.length);
    const deviceSide = Math.round(side * ratio);
    if (overlaid()) paintOverlays(pixels, width, ratio, deviceSide);
    else paintMaps(pixels, width, ratio, deviceSide);
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
    if (overlays && overlaid()) outlineQuery(context, overlays);
    drawFocus(context);
    canvas.dataset.painted = String(grid.layers.length * grid.heads.length);
    // Which token's overlays are on screen (tests and the bench wait for them); none for maps.
    if (overlaid() && overlays) canvas.dataset.overlay = String(overlays.query);
    else delete canvas.dataset.overlay;
    paintedRatio = ratio;
  };

  /** Each thumbnail the picture under its head's row (overlay.ts), the picture scaled once per size. */
  const paintOverlays = (pixels: Uint8ClampedArray, width: number, ratio: number, deviceSide: number) => {
    const drawn = overlays as Overlays;
    const key = `${deviceSide}`;
    if (thumbnail?.key !== key) thumbnail = { key, picture: thumbnailPicture(picture as PictureInfo, source as HTMLCanvasElement, deviceSide) };
    const patches = (picture as PictureInfo).grid[0] * (picture as PictureInfo).grid[1];
    const alpha = Number(opacity.value);
    for (let l = 0; l < drawn.layers.length; l++) {
      for (let h = 0; h < drawn.heads.length; h++) {
        const index = l * drawn.heads.length + h;
        const { x, y } = origin(l, h);
        tops[index] = paintOverlay(pixels, width, Math.round(x * ratio), Math.round(y * ratio), thumbnail.picture, drawn.data.subarray(index * patches, (index + 1) * patches), alpha);
      }
    }
  };

  /** The patch the overlays are from, outlined in each thumbnail (none for the class token). */
  const outlineQuery = (context: CanvasRenderingContext2D, drawn: Overlays) => {
    const { prefix, grid: [rows, cols] } = picture as PictureInfo;
    const p = drawn.query - prefix;
    if (p < 0) return;
    const box = pictureBox();
    const cellW = box.patchW;
    const cellH = box.patchH;
    context.strokeStyle = '#ff2d55';
    context.lineWidth = 1;
    for (let l = 0; l < drawn.layers.length; l++) {
      for (let h = 0; h < drawn.heads.length; h++) {
        const { x, y } = origin(l, h);
        if (p < rows * cols) context.strokeRect(x + (p % cols) * cellW + 0.5, y + Math.floor(p / cols) * cellH + 0.5, cellW - 1, cellH - 1);
      }
    }
  };

  /** The picture's box in a thumbnail (CSS pixels, from its top left) and a patch's size there. */
  const pictureBox = () => {
    const { width, height, patchSize } = picture as PictureInfo;
    const scale = side / Math.max(width, height);
    return { width: width * scale, height: height * scale, patchW: patchSize * scale, patchH: patchSize * scale };
  };

  const paintMaps = (pixels: Uint8ClampedArray, width: number, ratio: number, deviceSide: number) => {
    const grid = shown as PooledGrid;
    const cells = grid.rows * grid.cols;
    // Each cell spans side/rows CSS pixels: device pixel → cell, nearest.
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
  };
  // A zoom or a move to another screen changes the ratio (and fires resize): paint for the new one.
  window.addEventListener('resize', () => {
    if (listed() && (window.devicePixelRatio || 1) !== paintedRatio) paint();
  });

  const drawFocus = (context: CanvasRenderingContext2D) => {
    const { x, y } = origin(focus.layer, focus.head);
    context.strokeStyle = getComputedStyle(document.body).getPropertyValue('--vscode-focusBorder').trim() || '#007fd4';
    context.lineWidth = 2;
    context.strokeRect(x - 2, y - 2, side + 4, side + 4);
  };

  /** The thumbnail at (x, y), CSS pixels: its indices in the drawn lists and where in it. */
  const thumbnailAt = (x: number, y: number) => {
    const grid = listed();
    if (!grid) return undefined;
    const h = Math.floor((x - LABEL) / (side + GAP));
    const l = Math.floor((y - LABEL) / (side + GAP));
    if (h < 0 || l < 0 || h >= grid.heads.length || l >= grid.layers.length) return undefined;
    const inX = x - LABEL - h * (side + GAP);
    const inY = y - LABEL - l * (side + GAP);
    if (inX >= side || inY >= side) return undefined;
    return { l, h, inX, inY };
  };

  /** An attention map's cell at (x, y). */
  const at = (x: number, y: number) => {
    const hit = thumbnailAt(x, y);
    if (!hit || !shown || overlaid()) return undefined;
    return { l: hit.l, h: hit.h, row: Math.min(shown.rows - 1, Math.floor((hit.inY * shown.rows) / side)), col: Math.min(shown.cols - 1, Math.floor((hit.inX * shown.cols) / side)) };
  };

  /** The patch under (x, y) in an overlay thumbnail, as r·cols + c; undefined off the patches. */
  const patchAt = (x: number, y: number) => {
    const hit = thumbnailAt(x, y);
    if (!hit || !picture || !overlaid()) return undefined;
    const box = pictureBox();
    const r = Math.floor(hit.inY / box.patchH);
    const c = Math.floor(hit.inX / box.patchW);
    const [rows, cols] = picture.grid;
    return r < rows && c < cols ? { ...hit, patch: r * cols + c } : undefined;
  };

  const hoverAt = (x: number, y: number): string | undefined => {
    if (overlaid()) {
      const hit = patchAt(x, y);
      if (!hit || !overlays || !picture) return undefined;
      const patches = picture.grid[0] * picture.grid[1];
      const value = overlays.data[(hit.l * overlays.heads.length + hit.h) * patches + hit.patch];
      return `Layer ${overlays.layers[hit.l]} · head ${overlays.heads[hit.h]} · ${info.tokens[overlays.query]} → ${info.tokens[picture.prefix + hit.patch]}: ${weightText(value)}`;
    }
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
    mode.disabled = overlaid();
    from.disabled = opacity.disabled = !overlaid();
    if (overlaid()) return requestOverlays(layerList, headList);
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
    stamp(receivedAt, shown.data.byteLength);
  };

  /** When the data arrived and when its paint reached the screen (the next frame), with its bytes: the benches read them. */
  const stamp = (receivedAt: number, bytes: number) => {
    const paintedAt = wallClock();
    requestAnimationFrame(() => {
      canvas.dataset.timing = JSON.stringify({ receivedAt, paintedAt, shownAt: wallClock(), bytes });
    });
  };

  /** A picture run's overlays from the pointed-at patch, else the chosen token. */
  const requestOverlays = async (layerList: number[], headList: number[]) => {
    const { prefix } = picture as PictureInfo;
    const query = pointed ?? Number(from.value);
    const answer = await page.ask({ kind: 'rows', query, keyStart: prefix, layers: layerList, heads: headList }, 'grid');
    if (answer?.kind !== 'rows' || !overlaid()) return;
    const receivedAt = wallClock();
    overlays = answer;
    focus = { layer: Math.min(focus.layer, overlays.layers.length - 1), head: Math.min(focus.head, overlays.heads.length - 1) };
    legend.textContent =
      `${quantity(overlays.layers.length, 'layer')} × ${quantity(overlays.heads.length, 'head')}: each thumbnail the picture under that head's attention from ${info.tokens[overlays.query]} to each patch, ` +
      `its colour and opacity from 0 to the thumbnail's largest patch weight. Point at a patch for its attention; a click opens that head.`;
    paint();
    // The tooltip under a still pointer names the weights now drawn.
    if (pointer && !tooltip.hidden) tooltip.textContent = hoverAt(pointer.x, pointer.y) ?? '';
    stamp(receivedAt, overlays.data.byteLength);
  };

  /** The pointer moved onto another patch (or off the patches: undefined): the overlays follow it. */
  const point = (patch: number | undefined) => {
    const token = patch === undefined ? undefined : (picture as PictureInfo).prefix + patch;
    if (token === pointed) return;
    pointed = token;
    void request();
  };

  for (const control of [mode, size, show, from]) control.addEventListener('change', () => void request());
  opacity.addEventListener('input', paint);
  for (const control of [layers, heads]) control.addEventListener('change', () => void request());

  /** The event's point in the canvas's CSS pixels (whatever its backing store's resolution). */
  const local = (event: MouseEvent) => {
    const box = canvas.getBoundingClientRect();
    return { x: ((event.clientX - box.left) * cssWidth) / box.width, y: ((event.clientY - box.top) * cssHeight) / box.height };
  };
  canvas.addEventListener('mousemove', (event) => {
    const { x, y } = local(event);
    if (overlaid()) point(patchAt(x, y)?.patch);
    pointer = { x, y };
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
    pointer = undefined;
    if (overlaid()) point(undefined);
  });
  canvas.addEventListener('click', (event) => {
    const { x, y } = local(event);
    const hit = thumbnailAt(x, y);
    const grid = listed();
    if (!hit || !grid) return;
    // On a picture a click also keeps the clicked patch as the token the overlays are from.
    const clicked = patchAt(x, y);
    if (clicked && picture) from.value = String(picture.prefix + clicked.patch);
    focus = { layer: hit.l, head: hit.h };
    paint();
    page.openHead(grid.layers[hit.l], grid.heads[hit.h]);
  });
  canvas.addEventListener('keydown', (event) => {
    const shown = listed();
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
  return { section, canvas, hoverAt, drawn: () => listed() !== undefined, thumbnail: () => side, tops: () => tops, cssSize: () => ({ width: cssWidth, height: cssHeight }), legend: () => legend.textContent ?? '', refresh: () => void request() };
}

function clamp(value: number, count: number): number {
  return Math.max(0, Math.min(count - 1, value));
}
