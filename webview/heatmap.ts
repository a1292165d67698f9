// One heatmap card: title, formula, the plotly heatmap (hover tooltip, click to reveal the source,
// zoom), a one-line reading, a keyboard-reachable table of the values and export buttons. Large
// matrices arrive as a max-pooled overview; zooming into one fetches the exact region.
import type { MatrixKey, MatrixView, PanelState } from '../src/protocol';
import { cellText, named, num } from './format';
import { loadPlotly, plotlyIfLoaded } from './plotlyLoader';
import { LABEL_PITCH, labelStep, shownToken } from '../src/core/words';
import { plotlyText } from './plotlyText';
import { heatmapPreview, type PreviewRange } from './preview';
import { colorScaleOf, type ThemeColors } from './theme';
import { button } from './toolkit';

export interface Axis {
  kind: 'query' | 'key' | 'dim' | 'token';
  tokens?: string[];
}

const AXIS_TITLES: Record<Axis['kind'], string> = { query: 'queries', key: 'keys', dim: 'dimensions', token: 'tokens' };

/** One cell of a heatmap in source coordinates; `exact` is false for a pooled block. */
export interface Cell {
  row: number;
  col: number;
  rowEnd: number; // exclusive; row + 1 when exact
  colEnd: number;
  value: number;
  exact: boolean;
}

export interface HeatmapSpec {
  id: string;
  title: string;
  formula?: string;
  reading?: string;
  key: MatrixKey;
  head: number;
  view: MatrixView;
  rows: Axis;
  cols: Axis;
  /** weights: fixed 0…1; values: auto range; mask: two colours, blocked vs allowed. */
  scale: 'weights' | 'values' | 'mask';
  /** Tooltip text of a cell (may look up the same cell in related matrices). */
  describe(cell: Cell): string;
}

export interface HeatmapContext {
  state: PanelState;
  colors: ThemeColors;
  compact: boolean;
  reveal(key: MatrixKey, head: number, row: number, col: number): void;
  setZoom(id: string, region: PanelState['zoom'][string] | undefined): void;
  requestRegion(key: MatrixKey, head: number, region: PanelState['zoom'][string]): Promise<MatrixView | null>;
  exportImage(format: 'png' | 'svg', fileName: string, data: string): void;
  exportMatrix(key: MatrixKey, head: number, format: 'csv' | 'json'): void;
  /** The card with this id in the render being replaced, if any: its plot is updated in place. */
  previousCard(id: string): HTMLElement | undefined;
}

/** Numbers are printed in the cells of matrices up to this size. */
const MAX_CELLS_WITH_NUMBERS = 16;
/** Heatmaps with more cells than this are drawn as one scaled image. */
const LARGE_CELLS = 128 * 128;
/** The table view lists at most this many rows and columns of displayed cells. */
const MAX_TABLE_SIDE = 64;

const tooltip = (() => {
  const element = document.createElement('div');
  element.id = 'tooltip';
  element.setAttribute('role', 'tooltip');
  element.hidden = true;
  document.body.append(element);
  return element;
})();

/** The preview whose cell the tooltip describes, if one does (plotly's hover has its own unhover). */
let tooltipFrom: Element | undefined;

function showTooltip(text: string, x: number, y: number, from?: Element): void {
  tooltipFrom = from;
  tooltip.textContent = text;
  tooltip.hidden = false;
  const { width, height } = tooltip.getBoundingClientRect();
  tooltip.style.left = `${Math.max(4, Math.min(x + 14, window.innerWidth - width - 4))}px`;
  tooltip.style.top = `${Math.max(4, y + 18 + height > window.innerHeight ? y - height - 10 : y + 18)}px`;
}

function hideTooltip(): void {
  tooltip.hidden = true;
}

export function isPooled(view: MatrixView): boolean {
  return view.rowBlock > 1 || view.colBlock > 1;
}

export function cellAt(view: MatrixView, displayRow: number, displayCol: number): Cell {
  const row = view.rowStart + displayRow * view.rowBlock;
  const col = view.colStart + displayCol * view.colBlock;
  return {
    row,
    col,
    rowEnd: Math.min(row + view.rowBlock, view.sourceRows),
    colEnd: Math.min(col + view.colBlock, view.sourceCols),
    value: view.data[displayRow * view.cols + displayCol],
    exact: !isPooled(view),
  };
}

/** "queries 9–16 × keys 1–8 (max of the 8×8 block)" for a pooled cell. */
export function blockText(cell: Cell, rows: Axis, cols: Axis): string {
  const span = (start: number, end: number, axis: Axis) =>
    end - start === 1 ? named(axis.kind, start, axis.tokens) : `${AXIS_TITLES[axis.kind]} ${start + 1}–${end}`;
  return `${span(cell.row, cell.rowEnd, rows)} × ${span(cell.col, cell.colEnd, cols)} (max of the ${cell.rowEnd - cell.row}×${cell.colEnd - cell.col} block)`;
}

/** The label of row or column `index` on an axis: its token (Ġ, ▁ as ␣), else q1, k1, d1… */
export function axisLabel(axis: Axis, index: number): string {
  const token = axis.tokens?.[index];
  return token === undefined ? `${axis.kind[0]}${index + 1}` : shownToken(token);
}

/**
 * Tick positions (display indices) and texts: every cell while each label has a line of its own
 * (`pitch` CSS px per cell, `room` px per label), else every k-th token — 1, 2 or 5 × 10ⁿ — from
 * the first. Without a pitch (no layout known), every cell up to 32, else about ten.
 */
export function ticks(count: number, start: number, block: number, axis: Axis, pitch?: number, room = LABEL_PITCH): { tickvals: number[]; ticktext: string[] } {
  const tickvals = [];
  if (pitch === undefined) {
    const step = count <= 32 ? 1 : Math.ceil(count / 10);
    for (let i = 0; i < count; i += step) tickvals.push(i);
  } else {
    const step = labelStep(pitch, block, room);
    // Display index of each multiple of the step (0, 10, 20 … in tokens), however the view starts.
    for (let token = Math.ceil(start / step) * step; token < start + count * block; token += step) tickvals.push(Math.floor((token - start) / block));
  }
  return { tickvals, ticktext: tickvals.map((i) => plotlyText(axisLabel(axis, start + i * block))) };
}

function finiteExtremes(view: MatrixView): { min: number; max: number } {
  let min = Infinity;
  let max = -Infinity;
  for (const value of view.data) {
    if (!Number.isFinite(value)) continue;
    if (value < min) min = value;
    if (value > max) max = value;
  }
  if (min > max) return { min: 0, max: 1 };
  return min === max ? { min: min - 0.5, max: max + 0.5 } : { min, max };
}

/**
 * The values the colour scale spans. Weights start at 0 and end at the largest weight shown, so
 * that a long sequence's small weights (≈ 1/n) still spread over the whole scale; RdBu is centred
 * on 0; other values span their own range, as plotly's auto range does.
 */
function colorRange(spec: HeatmapSpec, view: MatrixView, state: PanelState): PreviewRange {
  if (spec.scale === 'mask') return { scale: 'mask', zmin: 0, zmax: 1 };
  const { min, max } = finiteExtremes(view);
  if (spec.scale === 'weights') return { scale: 'weights', zmin: 0, zmax: Math.max(max, Number.MIN_VALUE) };
  if (state.colorScale === 'RdBu') {
    const extent = Math.max(Math.abs(min), Math.abs(max));
    return { scale: 'values', zmin: -extent, zmax: extent };
  }
  return { scale: 'values', zmin: min, zmax: max };
}

function showsNumbers(spec: HeatmapSpec, view: MatrixView, state: PanelState): boolean {
  const small = view.rows <= MAX_CELLS_WITH_NUMBERS && view.cols <= MAX_CELLS_WITH_NUMBERS;
  return small && (state.showNumbers || spec.scale === 'mask');
}

function zMatrix(view: MatrixView, scale: HeatmapSpec['scale']): (number | null)[][] {
  const z: (number | null)[][] = [];
  for (let r = 0; r < view.rows; r++) {
    const row: (number | null)[] = new Array(view.cols);
    for (let c = 0; c < view.cols; c++) {
      const value = view.data[r * view.cols + c];
      row[c] = scale === 'mask' ? (value === -Infinity ? 1 : 0) : Number.isFinite(value) ? value : null;
    }
    z.push(row);
  }
  return z;
}

function cellTexts(view: MatrixView, scale: HeatmapSpec['scale']): string[][] {
  const text: string[][] = [];
  for (let r = 0; r < view.rows; r++) {
    const row: string[] = [];
    for (let c = 0; c < view.cols; c++) {
      const value = view.data[r * view.cols + c];
      row.push(scale === 'mask' ? (value === -Infinity ? '✕' : '') : cellText(value));
    }
    text.push(row);
  }
  return text;
}

function trace(spec: HeatmapSpec, view: MatrixView, context: HeatmapContext): object {
  const small = view.rows <= MAX_CELLS_WITH_NUMBERS && view.cols <= MAX_CELLS_WITH_NUMBERS;
  const { colors, state } = context;
  const base = {
    type: 'heatmap',
    z: zMatrix(view, spec.scale),
    hoverinfo: 'none',
    // Above ~16k cells plotly paints one pixel per cell and scales the image (much faster than
    // one rectangle per cell); blocks stay sharp because the canvas is scaled without smoothing.
    ...(view.rows * view.cols > LARGE_CELLS ? { zsmooth: 'fast' } : {}),
    xgap: small ? 1 : 0,
    ygap: small ? 1 : 0,
    ...(showsNumbers(spec, view, state)
      ? { text: cellTexts(view, spec.scale), texttemplate: '%{text}', textfont: { family: colors.fontFamily, size: 11 } }
      : {}),
  };
  if (spec.scale === 'mask') {
    return { ...base, zmin: 0, zmax: 1, colorscale: [[0, colors.background], [0.5, colors.background], [0.5, colors.blocked], [1, colors.blocked]], showscale: false };
  }
  const colorscale = colorScaleOf(state.colorScale, colors);
  const bar = { colorbar: { thickness: 10, outlinewidth: 0, tickfont: { color: colors.foreground, size: 10 } } };
  const { zmin, zmax } = colorRange(spec, view, state);
  return { ...base, ...bar, colorscale, zmin, zmax };
}

/** Height of the whole plot (plotly's layout height), known before plotly is loaded. */
function plotHeight(view: MatrixView, compact: boolean): number {
  const cell = view.rows <= MAX_CELLS_WITH_NUMBERS ? (compact ? 22 : 30) : Math.max(1, Math.min(30, 480 / view.rows));
  return Math.max(compact ? 140 : 180, Math.min(compact ? 320 : 540, view.rows * cell + 80));
}

/** plotly's margins; the preview fills the same plot area (panel.css reads these variables). */
const MARGIN = { l: 70, r: 10, t: 44, b: 10 };
/** About what plotly's colour bar and its labels take right of the cells. */
const COLOUR_BAR = 60;

function layout(spec: HeatmapSpec, view: MatrixView, context: HeatmapContext): object {
  const { colors, compact } = context;
  const height = plotHeight(view, compact);
  const font = { family: colors.fontFamily, color: colors.foreground, size: compact ? 10 : 11 };
  const axis = { ...font, showgrid: false, zeroline: false, ticks: '', tickfont: font, linecolor: colors.grid };
  // Labels as dense as they stay legible: the plot area's height is known, its width is the page's
  // less the margins and the colour bar; columns' labels slant past 8, and slanted need 1/sin 45° more room.
  const areaWidth = Math.max(100, (document.body?.clientWidth || 600) - MARGIN.l - MARGIN.r - COLOUR_BAR);
  const areaHeight = height - MARGIN.t - MARGIN.b;
  const y = ticks(view.rows, view.rowStart, view.rowBlock, spec.rows, areaHeight / view.rows);
  const upright = ticks(view.cols, view.colStart, view.colBlock, spec.cols, areaWidth / view.cols);
  const x = upright.tickvals.length > 8 ? ticks(view.cols, view.colStart, view.colBlock, spec.cols, areaWidth / view.cols, LABEL_PITCH / Math.SQRT1_2) : upright;
  const zoom = context.state.zoom[spec.id];
  const toDisplay = (value: number, start: number, block: number) => (value - start) / block - 0.5;
  return {
    height,
    margin: MARGIN,
    paper_bgcolor: 'rgba(0,0,0,0)',
    plot_bgcolor: colors.muted,
    font,
    dragmode: compact ? false : 'zoom',
    xaxis: {
      ...axis, ...x, side: 'top', tickangle: x.tickvals.length > 8 ? -45 : 0,
      title: { text: AXIS_TITLES[spec.cols.kind], font, standoff: 4 },
      ...(zoom ? { range: [toDisplay(zoom.colStart, view.colStart, view.colBlock), toDisplay(zoom.colEnd, view.colStart, view.colBlock)] } : {}),
    },
    yaxis: {
      ...axis, ...y,
      title: { text: AXIS_TITLES[spec.rows.kind], font, standoff: 4 },
      autorange: zoom ? undefined : 'reversed',
      ...(zoom ? { range: [toDisplay(zoom.rowEnd, view.rowStart, view.rowBlock), toDisplay(zoom.rowStart, view.rowStart, view.rowBlock)] } : {}),
    },
  };
}

/** The source region a plotly relayout event zoomed to, or undefined when it was reset. */
function zoomOf(event: Record<string, unknown>, view: MatrixView): PanelState['zoom'][string] | undefined | 'unchanged' {
  if (event['xaxis.autorange'] || event['yaxis.autorange']) return undefined;
  const x0 = event['xaxis.range[0]'];
  const y0 = event['yaxis.range[0]'];
  if (typeof x0 !== 'number' || typeof y0 !== 'number') return 'unchanged';
  const x1 = event['xaxis.range[1]'] as number;
  const y1 = event['yaxis.range[1]'] as number;
  const toSource = (display: number, start: number, block: number, size: number) =>
    Math.max(0, Math.min(size, Math.round(start + (display + 0.5) * block)));
  const colStart = toSource(Math.min(x0, x1), view.colStart, view.colBlock, view.sourceCols);
  const colEnd = toSource(Math.max(x0, x1), view.colStart, view.colBlock, view.sourceCols);
  const rowStart = toSource(Math.min(y0, y1), view.rowStart, view.rowBlock, view.sourceRows);
  const rowEnd = toSource(Math.max(y0, y1), view.rowStart, view.rowBlock, view.sourceRows);
  if (colEnd <= colStart || rowEnd <= rowStart) return 'unchanged';
  return { rowStart, rowEnd, colStart, colEnd };
}

function fileBase(spec: HeatmapSpec): string {
  return `attention-${spec.id}`.replace(/[^\w.-]/g, '-');
}

function tableView(spec: HeatmapSpec, view: MatrixView): HTMLElement {
  const details = document.createElement('details');
  details.className = 'table-view';
  const summary = document.createElement('summary');
  summary.textContent = `Table of values (${view.sourceRows}×${view.sourceCols}${isPooled(view) ? `, overview: max of ${view.rowBlock}×${view.colBlock} blocks` : ''})`;
  details.append(summary);
  details.addEventListener('toggle', () => {
    if (!details.open || details.querySelector('table')) return;
    const rows = Math.min(view.rows, MAX_TABLE_SIDE);
    const cols = Math.min(view.cols, MAX_TABLE_SIDE);
    const scroller = document.createElement('div');
    scroller.className = 'table-scroll';
    scroller.tabIndex = 0;
    scroller.setAttribute('role', 'region');
    scroller.setAttribute('aria-label', `${spec.title}: values`);
    const table = document.createElement('table');
    const caption = document.createElement('caption');
    caption.textContent = rows < view.rows || cols < view.cols ? `${spec.title} (first ${rows}×${cols} cells)` : spec.title;
    const head = document.createElement('tr');
    head.append(document.createElement('th'));
    for (let c = 0; c < cols; c++) {
      const th = document.createElement('th');
      th.scope = 'col';
      th.textContent = axisLabel(spec.cols, view.colStart + c * view.colBlock);
      head.append(th);
    }
    table.append(caption, head);
    for (let r = 0; r < rows; r++) {
      const tr = document.createElement('tr');
      const th = document.createElement('th');
      th.scope = 'row';
      th.textContent = axisLabel(spec.rows, view.rowStart + r * view.rowBlock);
      tr.append(th);
      for (let c = 0; c < cols; c++) {
        const cell = cellAt(view, r, c);
        const td = document.createElement('td');
        td.textContent = num(cell.value);
        td.title = spec.describe(cell);
        tr.append(td);
      }
      table.append(tr);
    }
    scroller.append(table);
    details.append(scroller);
  });
  return details;
}

/** What the event handlers of a plot read: the spec and view it shows now (updated in place). */
interface PlotBinding {
  spec: HeatmapSpec;
  view: MatrixView;
  context: HeatmapContext;
  onZoom?: (event: Record<string, unknown>) => void;
}

const bindings = new WeakMap<HTMLElement, PlotBinding>();

/**
 * Draws the plot, or updates the one already in `root` (Plotly.react changes data and layout in
 * place: no rebuild, no flicker). Its handlers are bound once and read the current binding.
 */
async function drawPlot(root: HTMLElement, binding: PlotBinding): Promise<void> {
  const { spec, view, context } = binding;
  if (showsAlready(root, view, spec, context)) {
    bindings.set(root, binding);
    return;
  }
  const Plotly = await loadPlotly();
  // A newer render may have replaced this plot while plotly was loading.
  if (!root.isConnected) return;
  // The preview of these numbers (a newer render may put its own before this draw ends).
  const preview = root.querySelector(':scope > .preview');
  const plot = await Plotly.react(root, [trace(spec, view, context)], layout(spec, view, context), {
    displayModeBar: false,
    responsive: true,
    doubleClick: 'reset',
    showTips: false,
  });
  preview?.remove();
  if (preview && tooltipFrom === preview) hideTooltip();
  // A newer render may have purged and replaced this plot while plotly was drawing it.
  if (!root.isConnected || typeof plot.on !== 'function') return;
  drawnAs.set(root, { view, settings: drawSettings(spec, context) });
  const bound = bindings.has(root);
  bindings.set(root, binding);
  if (bound) return;
  const cellOf = (x: number, y: number) => {
    const current = bindings.get(root)!;
    return { current, cell: cellAt(current.view, Math.round(y), Math.round(x)) };
  };
  plot.on('plotly_hover', (event) => {
    const point = event.points[0];
    if (!point) return;
    const { current, cell } = cellOf(point.x, point.y);
    showTooltip(current.spec.describe(cell), event.event.clientX, event.event.clientY);
  });
  plot.on('plotly_unhover', hideTooltip);
  plot.on('plotly_click', (event) => {
    const point = event.points[0];
    if (!point) return;
    const { current, cell } = cellOf(point.x, point.y);
    current.context.reveal(current.spec.key, current.spec.head, cell.row, cell.col);
  });
  plot.on('plotly_relayout', (event) => bindings.get(root)?.onZoom?.(event));
}

/** What each plot shows: a view, drawn with these settings. A render that would draw the same
 * again (a card whose numbers an update held back, or did not change) leaves the plot as it is. */
const drawnAs = new WeakMap<HTMLElement, { view: MatrixView; settings: string }>();

function drawSettings(spec: HeatmapSpec, context: HeatmapContext): string {
  const { state, colors, compact } = context;
  return JSON.stringify([spec.scale, spec.title, spec.rows, spec.cols, state.colorScale, state.showNumbers, state.zoom[spec.id] ?? null, colors, compact]);
}

function showsAlready(plot: HTMLElement, view: MatrixView, spec: HeatmapSpec, context: HeatmapContext): boolean {
  const drawn = drawnAs.get(plot);
  return drawn !== undefined && drawn.view === view && drawn.settings === drawSettings(spec, context) && !plot.querySelector(':scope > .preview');
}

/**
 * The plot div of a card: the earlier render's (already plotted, updated in place) or a new one.
 * Either shows the preview of the new numbers at once, in the plot's cells, until plotly has drawn
 * them (drawPlot removes it): plotly takes 10–30 ms a plot, the preview well under one, so an
 * edit's numbers are on screen in the next frame. Not over a zoomed plot, whose cells it would not
 * match. The height is the plot's from the start: no jump.
 */
function plotElement(spec: HeatmapSpec, view: MatrixView, context: HeatmapContext, previous: HTMLElement | undefined): HTMLElement {
  if (previous && showsAlready(previous, view, spec, context)) return previous;
  const height = `${plotHeight(view, context.compact)}px`;
  const preview = () => answering(heatmapPreview({
    rows: view.rows,
    cols: view.cols,
    data: view.data,
    range: colorRange(spec, view, context.state),
    colorScale: context.state.colorScale,
    colors: context.colors,
    numbers: showsNumbers(spec, view, context.state),
  }), spec, view, context);
  if (previous?.classList.contains('js-plotly-plot')) {
    previous.style.height = height;
    previous.querySelector(':scope > .preview')?.remove();
    if (!context.state.zoom[spec.id]) previous.append(preview());
    return previous;
  }
  const plot = document.createElement('div');
  plot.className = 'plot';
  plot.style.height = height;
  plot.style.setProperty('--plot-top', `${MARGIN.t}px`);
  plot.style.setProperty('--plot-left', `${MARGIN.l}px`);
  plot.style.setProperty('--plot-bottom', `${MARGIN.b}px`);
  plot.style.setProperty('--plot-right', `${MARGIN.r + (spec.scale === 'mask' ? 0 : COLORBAR_WIDTH)}px`);
  plot.append(preview());
  return plot;
}

/**
 * A preview answers as its plot will — a hover with the cell's tooltip, a click by showing where the
 * cell comes from — from the first paint on, not only once plotly (~1.5 s later on a new page:
 * fetched, then evaluated) has drawn. Its cells fill its box evenly, as plotly's do the plot area.
 */
function answering(preview: HTMLElement, spec: HeatmapSpec, view: MatrixView, context: HeatmapContext): HTMLElement {
  const cellUnder = (event: MouseEvent): Cell | undefined => {
    const box = preview.getBoundingClientRect();
    const row = Math.floor(((event.clientY - box.top) / box.height) * view.rows);
    const col = Math.floor(((event.clientX - box.left) / box.width) * view.cols);
    return row < 0 || col < 0 || row >= view.rows || col >= view.cols ? undefined : cellAt(view, row, col);
  };
  preview.addEventListener('mousemove', (event) => {
    const cell = cellUnder(event);
    if (cell) showTooltip(spec.describe(cell), event.clientX, event.clientY, preview);
    else hideTooltip();
  });
  preview.addEventListener('mouseleave', hideTooltip);
  preview.addEventListener('click', (event) => {
    const cell = cellUnder(event);
    if (cell) context.reveal(spec.key, spec.head, cell.row, cell.col);
  });
  return preview;
}

/** Room plotly keeps right of the cells for the colour bar and its labels. */
const COLORBAR_WIDTH = 48;

export function textElement(tag: string, className: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** PNG and SVG of the plot, CSV and JSON of the matrix. */
function actionButtons(spec: HeatmapSpec, plot: HTMLElement, context: HeatmapContext): HTMLElement {
  const actions = document.createElement('div');
  actions.className = 'actions';
  const image = (format: 'png' | 'svg') => async () => {
    const Plotly = await loadPlotly();
    const url = await Plotly.toImage(plot, { format, scale: format === 'png' ? 2 : 1 });
    const payload = url.slice(url.indexOf(',') + 1);
    context.exportImage(format, `${fileBase(spec)}.${format}`, format === 'png' ? payload : decodeURIComponent(payload));
  };
  actions.append(
    button('PNG', image('png'), { title: `Save ${spec.title} as PNG` }),
    button('SVG', image('svg'), { title: `Save ${spec.title} as SVG` }),
    button('CSV', () => context.exportMatrix(spec.key, spec.head, 'csv'), { title: `Save the values of ${spec.title} as CSV` }),
    button('JSON', () => context.exportMatrix(spec.key, spec.head, 'json'), { title: `Save the values of ${spec.title} as JSON` }),
  );
  return actions;
}

/** Views shown in place of ones the host held back (src/views/deferral.ts): older numbers, marked. */
export const outdatedViews = new WeakSet<MatrixView>();

export interface HeatmapCard {
  element: HTMLElement;
  /** Draws the plot; call once the element is in the document (plotly measures it). */
  draw(): Promise<void>;
}

export function heatmapCard(spec: HeatmapSpec, context: HeatmapContext): HeatmapCard {
  const { view } = spec;
  const card = document.createElement('section');
  card.className = 'card heatmap';
  card.id = `card-${spec.id}`;
  Object.assign(card.dataset, { key: spec.key, head: String(spec.head), rows: String(view.rows), cols: String(view.cols) });
  card.append(textElement('h3', '', spec.title));
  if (outdatedViews.has(view)) {
    card.dataset.outdated = '';
    card.append(textElement('p', 'note outdated', 'Updating: these are the last result’s numbers; the new ones are on their way.'));
  }
  if (spec.formula) card.append(textElement('p', 'formula', spec.formula));
  const previous = context.previousCard(card.id);
  const previousPlot = previous?.querySelector<HTMLElement>(':scope > .plot') ?? undefined;
  const plot = plotElement(spec, view, context, previousPlot);
  plot.setAttribute('role', 'img');
  const pooling = isPooled(view) ? `; overview: each cell is the max of a ${view.rowBlock}×${view.colBlock} block, zoom in for exact values` : '';
  plot.setAttribute('aria-label', `${spec.title}: heatmap of ${view.sourceRows}×${view.sourceCols} values${pooling}; the table of values follows`);
  card.append(plot);
  if (isPooled(view)) {
    card.append(textElement('p', 'note', `Overview of ${view.sourceRows}×${view.sourceCols}: each cell is the maximum of a ${view.rowBlock}×${view.colBlock} block (max pooling). Drag to zoom: the zoomed region is shown below with its exact values.`));
  }
  if (spec.reading) card.append(textElement('p', 'reading', spec.reading));
  const detail = document.createElement('div');
  detail.className = 'detail';
  card.append(detail);
  if (!context.compact) {
    const table = tableView(spec, view);
    card.append(table);
    if (previous?.querySelector(':scope > details.table-view')?.hasAttribute('open')) table.setAttribute('open', '');
    // The same card's buttons act on the same plot and matrix: kept, not rebuilt, on an update.
    const kept = plot === previousPlot ? previous?.querySelector<HTMLElement>(':scope > .actions') : null;
    card.append(kept ?? actionButtons(spec, plot, context));
  }

  const showDetail = async (region: PanelState['zoom'][string] | undefined) => {
    for (const drawn of detail.querySelectorAll<HTMLElement>('.js-plotly-plot')) plotlyIfLoaded()?.purge(drawn);
    detail.replaceChildren();
    if (!region || !isPooled(view)) return;
    const exact = await context.requestRegion(spec.key, spec.head, region);
    const heading = document.createElement('h4');
    heading.textContent = `Detail: ${AXIS_TITLES[spec.rows.kind]} ${region.rowStart + 1}–${region.rowEnd} × ${AXIS_TITLES[spec.cols.kind]} ${region.colStart + 1}–${region.colEnd}`;
    if (!exact) {
      heading.textContent += ' — not available here (overview only)';
      detail.append(heading);
      return;
    }
    const detailSpec = { ...spec, id: `${spec.id}-detail` };
    const detailContext = { ...context, state: { ...context.state, zoom: {} } };
    const detailPlot = plotElement(detailSpec, exact, detailContext, undefined);
    detail.append(heading, detailPlot);
    await drawPlot(detailPlot, { spec: detailSpec, view: exact, context: detailContext });
  };

  const draw = async () => {
    await drawPlot(plot, {
      spec,
      view,
      context,
      onZoom: (event) => {
        const region = zoomOf(event, view);
        if (region === 'unchanged') return;
        context.setZoom(spec.id, region);
        void showDetail(region);
      },
    });
    await showDetail(context.state.zoom[spec.id]);
  };
  return { element: card, draw };
}
