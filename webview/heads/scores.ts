// The heads page's "Head scores" tab (issue 27, docs/analysis.md): each score as a layers × heads
// map, a table of the heads sortable by any score and filtered by a condition ("induction > 0.4"),
// the rollout as a token × token map with bars over the input tokens for one output position, and
// attention flow on request. The worker computes everything; this draws on canvas and builds the
// table with DOM calls (tokens are text, never markup).
import { scoresCsv } from '../../src/core/heads/scores';
import type { HeadsAnswer, HostToHeadsView, StackInfo } from '../../src/protocol';
import { RAMP, rampIndex } from './colors';
import { canvasExport, fileStem } from './exportImage';
import { element, labelled, quoted, weightText } from './page';
import type { HeadsPageContext, HeadsPlugin } from './plugin';
import { drawScoreMap } from './scoreMap';

type Scores = Extract<HeadsAnswer, { kind: 'scores' }>['scores'];
type ScoreName = keyof Scores;
const NAMES: ScoreName[] = ['previous_token', 'duplicate_token', 'induction', 'first_token', 'entropy', 'local'];

/** Request ids of this tab: far above the page's own, which count from 1. */
const SCORES_REQUEST = 1_000_001;
const FLOW_REQUEST = 1_000_002;

interface Filter {
  name: ScoreName;
  above: boolean;
  threshold: number | undefined;
}

/** Does a head's value pass the filter? A null value passes no threshold. */
export function passes(value: number | null, filter: Filter): boolean {
  if (filter.threshold === undefined) return true;
  if (value === null) return false;
  return filter.above ? value > filter.threshold : value < filter.threshold;
}

function mountScores(section: HTMLElement, context: HeadsPageContext): void {
  const { info } = context;
  const status = element('p', 'Computing the head scores…', { class: 'meta', id: 'scores-status', role: 'status' });
  section.append(status);
  context.post({ type: 'query', requestId: SCORES_REQUEST, query: { kind: 'scores' } });

  let scores: Scores | undefined;
  const select = (id: string, options: string[]) => {
    const node = element('select', undefined, { id });
    for (const option of options) node.append(element('option', option, { value: option }));
    return node;
  };
  const shown = select('scores-shown', NAMES);
  const filterName = select('scores-filter-name', NAMES);
  const filterSide = select('scores-filter-side', ['>', '<']);
  const threshold = element('input', undefined, { id: 'scores-threshold', type: 'number', step: '0.05', placeholder: 'any' });
  const order = element('button', 'Highest first', { id: 'scores-order' });
  const toModelView = element('button', 'Show in model view', { id: 'scores-to-model-view' });
  let descending = true;
  const map = element('canvas', undefined, { id: 'scores-map', tabindex: '0' });
  const table = element('table', undefined, { id: 'scores-table' });
  const counted = element('p', '', { class: 'meta', id: 'scores-count' });
  const fileBase = fileStem(info.title);
  const exportImage = (format: 'png' | 'svg') => {
    const fileName = `${fileBase}-${shown.value}.${format}`;
    context.post(canvasExport(map, format, fileName, `${info.title}: ${shown.value}`));
  };
  const exportTable = (format: 'csv' | 'json') => {
    if (!scores) return;
    const fileName = `${fileBase}-head-scores.${format}`;
    context.post({ type: 'export', format, fileName, text: format === 'csv' ? scoresCsv(scores) : JSON.stringify({ scores }) + '\n' });
  };
  const csv = element('button', 'CSV', { 'data-export': 'scores-csv' });
  const json = element('button', 'JSON', { 'data-export': 'scores-json' });
  csv.addEventListener('click', () => exportTable('csv'));
  json.addEventListener('click', () => exportTable('json'));
  const png = element('button', 'PNG', { 'data-export': 'scores-png' });
  const svg = element('button', 'SVG', { 'data-export': 'scores-svg' });
  png.addEventListener('click', () => exportImage('png'));
  svg.addEventListener('click', () => exportImage('svg'));
  const controls = element('div', undefined, { class: 'controls' });
  const filterControls = element('span');
  filterControls.append('Show heads with ', filterName, filterSide, threshold);
  controls.append(labelled('Score', shown), filterControls, order, toModelView, png, svg, csv, json);

  const filter = (): Filter => {
    const text = threshold.value.trim();
    const value = text === '' ? undefined : Number(text);
    threshold.classList.toggle('invalid', value !== undefined && !Number.isFinite(value));
    return { name: filterName.value as ScoreName, above: filterSide.value === '>', threshold: value !== undefined && Number.isFinite(value) ? value : undefined };
  };

  const draw = () => {
    if (!scores) return;
    const name = shown.value as ScoreName;
    const grid = scores[name];
    const current = filter();
    drawScoreMap(map, grid, (layer, head) => passes(scores![current.name][layer][head], current));
    const heads = grid.flatMap((row, layer) => row.map((value, head) => ({ layer, head, value }))).filter(({ layer, head }) => passes(scores![current.name][layer][head], current));
    // Null last whichever the order: a head the score does not apply to is not "lowest".
    heads.sort((a, b) => (a.value === null ? 1 : b.value === null ? -1 : descending ? b.value - a.value : a.value - b.value) || a.layer - b.layer || a.head - b.head);
    const header = element('tr');
    for (const title of ['layer', 'head', ...NAMES]) header.append(element('th', title));
    const rows = heads.map(({ layer, head }) => {
      const row = element('tr', undefined, { 'data-layer': String(layer), 'data-head': String(head), tabindex: '0' });
      row.append(element('td', String(layer)), element('td', String(head)), ...NAMES.map((n) => element('td', scoreText(scores![n][layer][head]))));
      row.addEventListener('click', () => context.openHead(layer, head));
      row.addEventListener('keydown', (event) => event.key === 'Enter' && context.openHead(layer, head));
      return row;
    });
    table.replaceChildren(header, ...rows);
    counted.textContent = `${heads.length} of ${info.layerCount * info.headCount} heads shown, by ${name}, ${descending ? 'highest' : 'lowest'} first.`;
  };
  for (const control of [shown, filterName, filterSide]) control.addEventListener('change', draw);
  threshold.addEventListener('input', draw);
  order.addEventListener('click', () => {
    descending = !descending;
    order.textContent = descending ? 'Highest first' : 'Lowest first';
    draw();
  });

  // The model view (grid.ts) shows a set of layers × a set of heads, chosen in its Layers and Heads
  // fields: the filter's heads go there as the layers and heads they lie in, and the view redraws.
  toModelView.addEventListener('click', () => {
    if (!scores) return;
    const current = filter();
    const kept = scores[current.name].flatMap((row, layer) => row.flatMap((value, head) => (passes(value, current) ? [{ layer, head }] : [])));
    if (kept.length === 0) return;
    const list = (values: number[]) => [...new Set(values)].sort((a, b) => a - b).join(', ');
    for (const [id, value] of [['grid-layers', list(kept.map((h) => h.layer))], ['grid-heads', list(kept.map((h) => h.head))]]) {
      const field = document.getElementById(id) as HTMLInputElement | null;
      if (!field) return;
      field.value = value;
      field.dispatchEvent(new Event('change'));
    }
    document.getElementById('tab-heads-model')?.click();
  });

  const rollout = element('div', undefined, { id: 'scores-rollout' });
  const flowButton = element('button', 'Attention flow', { id: 'scores-flow' });
  const flowOut = element('div', undefined, { id: 'scores-flow-out' });
  flowButton.addEventListener('click', () => {
    flowOut.replaceChildren(element('p', 'Computing attention flow…', { class: 'meta' }));
    context.post({ type: 'query', requestId: FLOW_REQUEST, query: { kind: 'flow' } });
  });

  const receive = (message: HostToHeadsView): boolean => {
    if (message.type === 'error' && (message.requestId === SCORES_REQUEST || message.requestId === FLOW_REQUEST)) {
      (message.requestId === SCORES_REQUEST ? status : flowOut).replaceChildren(element('span', message.message, { class: 'error' }));
      return true;
    }
    if (message.type !== 'answer') return false;
    if (message.requestId === SCORES_REQUEST && message.answer.kind === 'scores') {
      scores = message.answer.scores;
      status.textContent = 'Head scores of every layer × head (docs/analysis.md gives the definitions; — : no query qualifies).';
      section.append(controls, map, counted, table, element('h2', 'Rollout'), rollout, flowButton, flowOut);
      draw();
      if (message.answer.rollout) showMatrix(rollout, message.answer.rollout, info.tokens, 'rollout');
      const note = rolloutNote(info);
      if (note) rollout.append(element('p', note, { class: 'meta', id: 'scores-rollout-note' }));
      return true;
    }
    if (message.requestId === FLOW_REQUEST && message.answer.kind === 'flow') {
      flowOut.replaceChildren();
      showMatrix(flowOut, message.answer.flow, info.tokens, 'flow');
      return true;
    }
    return false;
  };
  receiver = receive;
}

/** What the rollout shown is, or why there is none: an encoder–decoder run's kinds differ (docs/encoder-decoder.md). */
function rolloutNote(info: StackInfo): string {
  if (info.kind === 'cross') {
    return 'No rollout for cross-attention: rollout multiplies each layer’s token-to-token mixing, with the residual’s identity, through the layers, which needs the same tokens on both sides of every layer. A cross-attention layer maps target positions to source positions, and the next layer’s cross-attention starts from the target again, so its layers do not chain. Choose Encoder for how the source tokens mix through the encoder, Decoder for the target’s own mixing, and the Alignment tab for each layer’s cross-attention.';
  }
  if (info.kind === 'decoder') return 'The decoder’s self-attention alone: what reaches each target position from the source through cross-attention is not in this rollout (see the Alignment tab).';
  if (info.kind === 'encoder') return 'The encoder’s self-attention: how the source tokens mix on their way to the encoder’s output, which every cross-attention layer reads.';
  return info.queryCount === info.keyCount ? '' : 'Rollout needs self-attention (as many keys as queries).';
}

function scoreText(value: number | null): string {
  return value === null ? '—' : value.toFixed(3);
}

/** An [n × n] map on canvas and, for a chosen output position, bars over the input tokens. */
function showMatrix(target: HTMLElement, matrix: Float32Array | Float64Array, tokens: string[], id: string): void {
  const n = tokens.length;
  const canvas = element('canvas', undefined, { id: `scores-${id}-map` });
  const scale = Math.max(1, Math.floor(320 / n));
  canvas.width = n * scale;
  canvas.height = n * scale;
  const context = canvas.getContext('2d');
  if (context) {
    const image = context.createImageData(n, n);
    let top = 0;
    for (const value of matrix) top = Math.max(top, value);
    for (let k = 0; k < n * n; k++) {
      const at = rampIndex(matrix[k], top);
      image.data.set([RAMP[at], RAMP[at + 1], RAMP[at + 2], 255], k * 4);
    }
    // Drawn at one pixel per cell, then scaled up without smoothing.
    const cells = element('canvas');
    cells.width = n;
    cells.height = n;
    cells.getContext('2d')?.putImageData(image, 0, 0);
    context.imageSmoothingEnabled = false;
    context.drawImage(cells, 0, 0, n * scale, n * scale);
  }
  const position = element('input', undefined, { type: 'number', min: '0', max: String(n - 1), value: String(n - 1), id: `scores-${id}-position` });
  const bars = element('div', undefined, { id: `scores-${id}-bars` });
  const drawBars = () => {
    const i = Math.min(n - 1, Math.max(0, Math.round(Number(position.value)) || 0));
    bars.replaceChildren(
      ...tokens.map((token, j) => {
        const row = element('div', undefined, { class: 'bar-row' });
        const bar = element('span', undefined, { class: 'bar' });
        Object.assign(bar.style, { display: 'inline-block', height: '0.8em', margin: '0 0.4em', background: 'var(--vscode-charts-blue, #3794ff)', width: `${Math.round(matrix[i * n + j] * 200)}px` });
        row.append(element('span', `${quoted(token)} (${j})`, { class: 'bar-label' }), bar, element('span', weightText(matrix[i * n + j])));
        return row;
      }),
    );
  };
  position.addEventListener('input', drawBars);
  drawBars();
  const controls = element('div', undefined, { class: 'controls' });
  controls.append(labelled('Output position', position));
  target.append(canvas, controls, bars);
}

/** The shown stack's handler (a new stack mounts the tab again and replaces it). */
let receiver: ((message: HostToHeadsView) => boolean) | undefined;

export const scoresPlugin: HeadsPlugin = {
  id: 'scores',
  title: 'Head scores',
  mount: mountScores,
  receive: (message) => receiver?.(message) ?? false,
};
