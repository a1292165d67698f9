// The heads page's "Compare" tab (issue 27, docs/analysis.md): this page's run is A; a second run
// of the same shape is B — another text or checkpoint of a model run, another saved file — chosen
// through the host, which pairs the two stacks in the worker. The tab shows the Jensen–Shannon
// divergence of every layer × head as a map and a ranked list, and for a clicked head B − A on a
// diverging scale, with A, B and the difference on hover. The worker computes; this draws.
import { divergenceCsv, ranked } from '../../src/core/heads/compare';
import type { ComparedRun, CompareWith, DifferenceMap, HostToHeadsView } from '../../src/protocol';
import { divergingColor } from './colors';
import { labelledMap } from './axes';
import { canvasExport, fileStem, pngBase64 } from './exportImage';
import { element, spanLabel, weightText } from './page';
import type { HeadsPageContext, HeadsPlugin } from './plugin';
import { drawScoreMap, headAt } from './scoreMap';

/** Request ids of this tab: far above the page's own (from 1) and apart from the scores tab's. */
const DIVERGENCE_REQUEST = 1_000_101;
const DIFFERENCE_REQUEST = 1_000_102;
/** The difference heatmap's largest side in pixels, as the opened head's. */
const MAX_SIDE = 600;

const WAYS: Record<StackSourceKind, { with: CompareWith; label: string }[]> = {
  model: [
    { with: 'text', label: 'Compare with another text…' },
    { with: 'checkpoint', label: 'Compare with another checkpoint…' },
  ],
  saved: [{ with: 'file', label: 'Compare with another file…' }],
  problem: [],
};
type StackSourceKind = HeadsPageContext['info']['source'];

function mountCompare(section: HTMLElement, context: HeadsPageContext): void {
  const { info } = context;
  section.append(
    element('p', 'Compares this run (A) with a second run of the same shape (B), head by head: the Jensen–Shannon divergence of the two attention rows of each query, ½KL(a‖m) + ½KL(b‖m) with m = (a + b)/2, in nats (0 to ln 2 ≈ 0.693), averaged over queries.', { class: 'meta' }),
  );
  const ways = WAYS[info.source];
  if (ways.length === 0) {
    section.append(element('p', 'Comparing needs a model run (another text or checkpoint) or saved attentions (another file).', { id: 'compare-unavailable' }));
    return;
  }
  const choose = element('div', undefined, { class: 'controls' });
  for (const way of ways) {
    const button = element('button', way.label, { id: `compare-${way.with}` });
    button.addEventListener('click', () => {
      status.replaceChildren('Choosing the run to compare with…');
      context.post({ type: 'compare', with: way.with });
    });
    choose.append(button);
  }
  const status = element('p', 'Choose a run to compare with.', { class: 'meta', id: 'compare-status', role: 'status' });
  const runs = element('dl', undefined, { id: 'compare-runs' });
  const map = element('canvas', undefined, { id: 'compare-map', tabindex: '0', 'aria-label': 'Divergence of every layer × head' });
  const ranking = element('ol', undefined, { id: 'compare-ranking' });
  const difference = element('div', undefined, { id: 'compare-difference' });
  const exports = element('div', undefined, { class: 'controls', id: 'compare-export' });
  const results = element('div', undefined, { id: 'compare-results', hidden: '' });
  results.append(element('h2', 'Divergence per head'), exports, map, ranking, difference);
  section.append(choose, status, runs, results);

  let divergence: number[][] | undefined;
  const fileBase = `${fileStem(info.title)}-divergence`;
  const exportButton = (label: string, format: 'csv' | 'json' | 'png' | 'svg') => {
    const button = element('button', label, { 'data-export': `compare-${format}` });
    button.addEventListener('click', () => {
      if (!divergence) return;
      const fileName = `${fileBase}.${format}`;
      if (format === 'png' || format === 'svg') context.post(canvasExport(map, format, fileName, `${info.title}: divergence of every layer × head`));
      else context.post({ type: 'export', format, fileName, text: format === 'csv' ? divergenceCsv(divergence) : JSON.stringify({ divergence }) + '\n' });
    });
    exports.append(button);
  };
  exportButton('CSV', 'csv');
  exportButton('JSON', 'json');
  exportButton('PNG', 'png');
  exportButton('SVG', 'svg');

  const open = (layer: number, head: number) => {
    difference.replaceChildren(element('p', `Computing B − A for layer ${layer} · head ${head}…`, { class: 'meta' }));
    context.post({ type: 'query', requestId: DIFFERENCE_REQUEST, query: { kind: 'difference', layer, head } });
  };
  map.addEventListener('click', (event) => {
    const at = headAt(map, event, info.layerCount, info.headCount);
    if (at && divergence) open(at.layer, at.head);
  });

  const showDivergence = (values: number[][]) => {
    divergence = values;
    drawScoreMap(map, values);
    ranking.replaceChildren(
      ...ranked(values).map(({ layer, head, value }) => {
        const item = element('li', `L${layer} H${head}: ${value.toFixed(4)} nats`, { 'data-layer': String(layer), 'data-head': String(head), tabindex: '0' });
        item.addEventListener('click', () => open(layer, head));
        item.addEventListener('keydown', (event) => event.key === 'Enter' && open(layer, head));
        return item;
      }),
    );
    status.textContent = 'Divergence of every layer × head (brighter: more different); the list ranks the heads, highest first. Click a head for B − A.';
    results.hidden = false;
  };

  /** B paired with A: its runs named, and the divergence of this page's kind asked for — or, where
   * an encoder–decoder's kind does not compare, why, and which kinds do. */
  const showPairing = (message: ComparedMessage) => {
    runs.replaceChildren(...runTerms('A', message.a), ...runTerms('B', message.b));
    // The last comparison's numbers go with it: none may show beside the new B's name.
    divergence = undefined;
    results.hidden = true;
    ranking.replaceChildren();
    difference.replaceChildren();
    const refusal = info.kind && message.refused?.[info.kind];
    if (refusal) {
      const comparable = (info.kinds ?? []).map(({ kind }) => kind).filter((kind) => !message.refused?.[kind]);
      status.replaceChildren(element('span', refusal, { class: 'error' }), ` Choose ${comparable.join(' or ')} above to compare.`);
      return;
    }
    status.textContent = 'Computing the divergence of every head…';
    context.post({ type: 'query', requestId: DIVERGENCE_REQUEST, query: { kind: 'divergence' } });
  };

  receiver = (message: HostToHeadsView): boolean => {
    switch (message.type) {
      case 'compared':
        paired = message;
        showPairing(message);
        return true;
      case 'compareFailed':
        status.replaceChildren(element('span', message.message, { class: 'error' }));
        return true;
      case 'error':
        if (message.requestId !== DIVERGENCE_REQUEST && message.requestId !== DIFFERENCE_REQUEST) return false;
        (message.requestId === DIVERGENCE_REQUEST ? status : difference).replaceChildren(element('span', message.message, { class: 'error' }));
        return true;
      case 'answer':
        if (message.requestId === DIVERGENCE_REQUEST && message.answer.kind === 'divergence') showDivergence(message.answer.divergence);
        else if (message.requestId === DIFFERENCE_REQUEST && message.answer.kind === 'difference') difference.replaceChildren(differenceMap(context, message.answer.difference));
        else return false;
        return true;
      default:
        return false;
    }
  };
  // Another kind's page of the same run (the selector mounts this tab again): the same B, this kind.
  if (paired) showPairing(paired);
}

function runTerms(name: 'A' | 'B', run: ComparedRun): HTMLElement[] {
  return [element('dt', `${name}: ${run.title}`, { id: `compare-run-${name.toLowerCase()}` }), element('dd', run.detail)];
}

/** B − A of one head on a diverging scale (white at 0, limits ± the largest |B − A| shown). */
function differenceMap(context: HeadsPageContext, map: DifferenceMap): HTMLElement {
  const { info } = context;
  const { rows, cols, rowBlock, colBlock } = map;
  const pooled = rowBlock * colBlock > 1;
  const limit = map.difference.reduce((largest, value) => Math.max(largest, Math.abs(value)), 0);
  const section = element('section', undefined, { id: 'compare-head', 'data-layer': String(map.layer), 'data-head': String(map.head) });
  section.append(
    element('h3', `B − A, layer ${map.layer} · head ${map.head}`),
    element('p', `${info.queryCount} queries × ${info.keyCount} keys${pooled ? `; each cell the entry of largest |B − A| among ${rowBlock}×${colBlock}` : ''}. Red: B attends more than A; blue: less; white: the same. Colour limits ±${weightText(limit)}.`, { class: 'meta', id: 'compare-scale' }),
  );
  const scale = Math.max(1, Math.floor(MAX_SIDE / Math.max(rows, cols)));
  const canvas = element('canvas', undefined, { id: 'compare-difference-canvas', tabindex: '0', 'aria-label': `B − A of layer ${map.layer}, head ${map.head}` });
  canvas.width = cols * scale;
  canvas.height = rows * scale;
  const cells = element('canvas');
  cells.width = cols;
  cells.height = rows;
  const cellContext = cells.getContext('2d');
  const drawing = canvas.getContext('2d');
  if (cellContext && drawing) {
    const image = cellContext.createImageData(cols, rows);
    for (let k = 0; k < rows * cols; k++) image.data.set([...divergingColor(map.difference[k], limit), 255], k * 4);
    cellContext.putImageData(image, 0, 0);
    // Cells drawn 1:1, then scaled without smoothing so each stays a sharp square.
    drawing.imageSmoothingEnabled = false;
    drawing.drawImage(cells, 0, 0, canvas.width, canvas.height);
  }
  // Its tokens on both axes, as an opened head's (axes.ts); the map starts at token 0.
  const labelled = labelledMap(canvas, { tokens: info.tokens, start: 0, block: rowBlock, cells: rows }, { tokens: info.keyTokens, start: 0, block: colBlock, cells: cols }, scale);
  const reading = element('p', 'Hover a cell for A’s and B’s weights and their difference.', { id: 'compare-hover', class: 'meta', role: 'status' });
  canvas.addEventListener('mousemove', (event) => {
    const box = canvas.getBoundingClientRect();
    const col = Math.floor(((event.clientX - box.left) / box.width) * cols);
    const row = Math.floor(((event.clientY - box.top) / box.height) * rows);
    if (row < 0 || col < 0 || row >= rows || col >= cols) return;
    labelled.hover(row, col);
    const cell = row * cols + col;
    const query = Math.floor(map.at[cell] / info.keyCount);
    const key = map.at[cell] % info.keyCount;
    const where = `query ${spanLabel(info.tokens, query, query + 1)} → key ${spanLabel(info.keyTokens, key, key + 1)}`;
    const block = pooled ? `block of queries ${spanLabel(info.tokens, row * rowBlock, Math.min(info.queryCount, (row + 1) * rowBlock))}, largest change at ` : '';
    reading.textContent = `${block}${where}: A ${weightText(map.a[cell])}, B ${weightText(map.b[cell])}, B − A ${signedText(map.difference[cell])}`;
  });
  const exports = element('div', undefined, { class: 'controls', id: 'compare-difference-export' });
  const title = `${info.title}: B − A, layer ${map.layer} · head ${map.head}`;
  for (const format of ['png', 'svg'] as const) {
    const button = element('button', format.toUpperCase(), { 'data-export': `compare-difference-${format}` });
    const fileName = `${fileStem(info.title)}-L${map.layer}H${map.head}-difference.${format}`;
    button.addEventListener('click', () =>
      context.post(format === 'png' ? { type: 'export', format, fileName, base64: pngBase64(labelled.exportCanvas()) } : { type: 'export', format, fileName, text: labelled.svg(title) }),
    );
    exports.append(button);
  }
  section.append(exports, labelled.element, reading);
  return section;
}

/** A difference with its sign, its size written as a weight is. */
function signedText(value: number): string {
  return `${value > 0 ? '+' : value < 0 ? '−' : ''}${weightText(Math.abs(value))}`;
}

/** The shown stack's handler (a new stack mounts the tab again and replaces it). */
let receiver: ((message: HostToHeadsView) => boolean) | undefined;

type ComparedMessage = Extract<HostToHeadsView, { type: 'compared' }>;
/** The run's pairing with B, kept while the run is shown: each kind's page compares that kind. */
let paired: ComparedMessage | undefined;

export const comparePlugin: HeadsPlugin = {
  id: 'compare',
  title: 'Compare',
  mount: mountCompare,
  receive: (message) => {
    // A new run on the page: the host pairs B with it afresh.
    if (message.type === 'stack') paired = undefined;
    return receiver?.(message) ?? false;
  },
};
