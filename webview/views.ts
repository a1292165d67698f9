// The panel's views — Steps, Heads, Mask, Gradients, Checks — as heatmap cards and text, built
// from the data the host sent. Rendering only: every number shown comes from the engine's result.
import type { HeadView, MatrixKey, MatrixView, PanelData, PanelState, ResultView, VariantsAnswer, VariantsQuery } from '../src/protocol';
import { bytes, flops, named, num, percent } from './format';
import { blockText, heatmapCard, textElement, isPooled, outdatedViews, type Axis, type Cell, type HeatmapCard, type HeatmapContext, type HeatmapSpec } from './heatmap';
import { button } from './toolkit';

export type Block = HeatmapCard | HTMLElement;

export interface ViewContext extends HeatmapContext {
  data: PanelData;
  result: ResultView;
  openHeadSteps(head: number): void;
  /** A larger result's Variants views of a head, or a walk, from the host (asked once per result). */
  requestVariants(query: VariantsQuery): Promise<VariantsReply>;
}

export type VariantsReply = { answer: VariantsAnswer } | { error: string };

/** Projections are drawn when every matrix involved is at most this many rows and columns. */
const SMALL_PROBLEM = 16;

const STEP_NAMES: Record<Exclude<PanelState['step'], 'all'>, string> = {
  projections: 'Projections X → Q, K, V',
  scores: '1 · scores QKᵀ',
  scaled: '2 · scaled',
  masked: '3 · mask',
  weights: '4 · softmax weights',
  output: '5 · output A·V',
};

export const STEP_CHOICES = [
  { value: 'all', label: 'All steps' },
  ...Object.entries(STEP_NAMES).map(([value, label]) => ({ value, label })),
];


function axes(data: PanelData) {
  const query: Axis = { kind: 'query', tokens: data.tokens };
  const key: Axis = { kind: 'key', tokens: data.keyTokens ?? data.tokens };
  const dim: Axis = { kind: 'dim' };
  const token: Axis = { kind: 'token', tokens: data.tokens };
  return { query, key, dim, token };
}

/** The value at source (row, col) of a view when the view holds it exactly. */
function exactValue(view: MatrixView | null, row: number, col: number): number | undefined {
  if (!view || isPooled(view) || outdatedViews.has(view)) return undefined;
  const r = row - view.rowStart;
  const c = col - view.colStart;
  return r >= 0 && c >= 0 && r < view.rows && c < view.cols ? view.data[r * view.cols + c] : undefined;
}

/**
 * `query i (token) → key j (token): score, scaled, mask, weight` for every attention-shaped map;
 * a gradient map (dA, dS) adds its own value. A pooled cell names its block and the map's value.
 * In the zoomed detail of a pooled map only that map's cells are exact (the other steps are
 * overviews): the tooltip gives its value and leaves out the steps it does not know.
 */
function attentionTooltip(head: HeadView, data: PanelData, label: string, gradient: boolean): (cell: Cell) => string {
  const { query, key } = axes(data);
  return (cell) => {
    if (!cell.exact) return `${blockText(cell, query, key)}: ${label} ${num(cell.value)}`;
    const parts: string[] = [];
    const known = (name: string, view: MatrixView | null) => {
      const value = exactValue(view, cell.row, cell.col);
      if (value !== undefined) parts.push(`${name} ${num(value)}`);
    };
    known('score', head.scores);
    known('scaled', head.scaled);
    if (head.mask) known('mask', head.mask);
    else parts.push('mask none');
    known('weight', head.weights);
    if (gradient || !parts.some((part) => part.startsWith(`${label} `))) parts.push(`${label} ${num(cell.value)}`);
    return `${named('query', cell.row, query.tokens)} → ${named('key', cell.col, key.tokens)}: ${parts.join(', ')}`;
  };
}

/** Weights given alone: `query i → key j: given weight 0.25` (there are no scores to name). */
function givenTooltip(data: PanelData): (cell: Cell) => string {
  const { query, key } = axes(data);
  return (cell) => (cell.exact ? `${named('query', cell.row, query.tokens)} → ${named('key', cell.col, key.tokens)}: given weight ${num(cell.value)}` : `${blockText(cell, query, key)}: given weight ${num(cell.value)}`);
}

/** The given weights' card of one head: beside the computed ones, with how far apart they are. */
function givenCard(context: ViewContext, head: number, view: HeadView, title: string): HeatmapCard | undefined {
  if (!view.givenWeights) return undefined;
  const difference = view.givenMaxDifference ?? NaN;
  const reading = context.result.givenOnly
    ? 'As given: nothing here computed them. Add Q and K (or X with W_Q and W_K) to compare them with the math.'
    : `max |given − computed| = ${num(difference, 3)}${Number.isNaN(difference) ? ' (a NaN in one of them: PyTorch gives NaN for a fully masked row, this engine 0)' : ''}`;
  return attentionCard(context, head, 'givenWeights', view.givenWeights, { title, formula: context.result.givenOnly ? undefined : 'The program’s (or the note’s) weights A, beside the computed A above', reading });
}

/** `query i (token), dim j: output 0.33` for maps whose columns are feature dimensions. */
function rowDimTooltip(rows: Axis, label: string): (cell: Cell) => string {
  return (cell) =>
    cell.exact
      ? `${named(rows.kind, cell.row, rows.tokens)}, dim ${cell.col + 1}: ${label} ${num(cell.value)}`
      : `${blockText(cell, rows, { kind: 'dim' })}: ${label} ${num(cell.value)}`;
}

function extremes(view: MatrixView): { min: number; max: number; minAt: number; maxAt: number } {
  let min = Infinity, max = -Infinity, minAt = -1, maxAt = -1;
  view.data.forEach((value, index) => {
    if (!Number.isFinite(value)) return;
    if (value < min) [min, minAt] = [value, index];
    if (value > max) [max, maxAt] = [value, index];
  });
  return { min, max, minAt, maxAt };
}

function cellName(view: MatrixView, index: number, data: PanelData): string {
  const { query, key } = axes(data);
  const row = view.rowStart + Math.floor(index / view.cols) * view.rowBlock;
  const col = view.colStart + (index % view.cols) * view.colBlock;
  return `${named('query', row, query.tokens)} → ${named('key', col, key.tokens)}`;
}

function scaleFormula(data: PanelData): string {
  const { scale, score } = data.options;
  if (score !== 'scaled_dot' && score !== 'dot' && score !== 'general') return `S' = S (no scaling for ${score} scores)`;
  if (scale !== undefined) return `S' = S × ${num(scale, 6)}`;
  if (score === 'dot') return "S' = S (score=dot: scale 1)";
  const dk = data.dk ?? 1;
  return `S' = S / √d_k = S / √${dk} = S × ${num(1 / Math.sqrt(dk), 6)}`;
}

function scoreFormula(data: PanelData): string {
  switch (data.options.score) {
    case 'general':
      return 'S = Q · W_a · Kᵀ (Luong general)';
    case 'additive':
      return 'S_ij = vₐᵀ · tanh(W₁ q_i + W₂ k_j) (Bahdanau additive)';
    case 'gaussian':
      return 'S_ij = −‖q_i − k_j‖² / 2σ² (Gaussian)';
    default:
      return 'S = Q · Kᵀ (row i, column j: query i · key j)';
  }
}

function maskReading(head: HeadView, data: PanelData): string {
  if (!head.mask) return "No mask: S'' = S'.";
  let blocked = 0;
  for (const value of head.mask.data) if (value === -Infinity) blocked++;
  const kind = data.options.causal ? `causal, aligned ${data.options.causal}` : 'from the file';
  const cells = head.mask.rows * head.mask.cols;
  return isPooled(head.mask)
    ? `Mask ${kind}; ${blocked} of ${cells} overview blocks are entirely blocked.`
    : `${blocked} of ${cells} cells blocked (−∞, weight 0) — mask ${kind}.`;
}

/** "row 2 sums to 1.000000; query 2 (am) puts 48% on key 1 (I)". */
function weightsReading(head: HeadView, data: PanelData, result: ResultView): string {
  const weights = head.weights;
  if (isPooled(weights)) {
    return `Every row sums to 1 within ${num(result.checks.rowSumsMaxError, 2)}; the overview shows the largest weight of each block.`;
  }
  const { query, key } = axes(data);
  const row = Math.min(1, weights.rows - 1);
  let sum = 0, best = 0, bestAt = 0;
  for (let c = 0; c < weights.cols; c++) {
    const value = weights.data[row * weights.cols + c];
    sum += value;
    if (value > best) [best, bestAt] = [value, c];
  }
  if (sum === 0) return `Row ${row + 1} is fully masked: its weights and output are 0.`;
  return `Row ${row + 1} sums to ${sum.toFixed(6)}; ${named('query', row, query.tokens)} puts ${percent(best)} on ${named('key', bestAt, key.tokens)}.`;
}

function outputReading(head: HeadView, data: PanelData): string {
  const { weights } = head;
  if (isPooled(weights)) return 'Each output row is the weighted average of the value rows, with that query’s weights.';
  const row = Math.min(1, weights.rows - 1);
  const terms = Array.from({ length: weights.cols }, (_, c) => ({ c, w: weights.data[row * weights.cols + c] }))
    .filter((term) => term.w > 0)
    .sort((a, b) => b.w - a.w);
  const shown = terms.slice(0, 3).map((term) => `${num(term.w, 2)}·V[${data.keyTokens?.[term.c] ?? data.tokens?.[term.c] ?? `k${term.c + 1}`}]`);
  return `Row ${row + 1} of O = ${shown.join(' + ')}${terms.length > 3 ? ' + …' : ''} — a weighted average of the value rows.`;
}

function headTitle(head: number, data: PanelData, view: HeadView): string {
  if (data.options.heads <= 1) return '';
  const kv = data.options.kvHeads && data.options.kvHeads !== data.options.heads ? `, KV head ${view.kvHead + 1}` : '';
  return ` — head ${head + 1}${kv}`;
}

function attentionCard(context: ViewContext, head: number, key: 'scores' | 'scaled' | 'masked' | 'weights' | 'givenWeights' | 'dA' | 'dS', view: MatrixView, text: { title: string; formula?: string; reading?: string }): HeatmapCard {
  const headView = context.result.heads[head];
  const { query, key: keyAxis } = axes(context.data);
  const label = key === 'scores' ? 'score' : key === 'weights' ? 'weight' : key === 'givenWeights' ? 'given' : key;
  const spec: HeatmapSpec = {
    id: `h${head + 1}-${key}`,
    key,
    head,
    view,
    rows: query,
    cols: keyAxis,
    scale: key === 'weights' || key === 'givenWeights' ? 'weights' : 'values',
    describe: context.result.givenOnly ? givenTooltip(context.data) : attentionTooltip(headView, context.data, label, key === 'dA' || key === 'dS'),
    ...text,
  };
  return heatmapCard(spec, context);
}

function valuesCard(context: ViewContext, id: string, key: MatrixKey, head: number, view: MatrixView, rows: Axis, cols: Axis, label: string, text: { title: string; formula?: string; reading?: string }, describe?: (cell: Cell) => string): HeatmapCard {
  return heatmapCard({ id, key, head, view, rows, cols, scale: 'values', describe: describe ?? rowDimTooltip(rows, label), ...text }, context);
}

function isSmall(result: ResultView): boolean {
  const views = [result.input, result.heads[0]?.Q, result.heads[0]?.K, result.heads[0]?.V].filter((view): view is MatrixView => !!view);
  return views.every((view) => view.sourceRows <= SMALL_PROBLEM && view.sourceCols <= SMALL_PROBLEM);
}

/** The Steps tab's formulas with what the variants add: RoPE in the scores, the temperature and
 * softcap in the scaling, ALiBi in the additive matrix. */
function withVariants(step: 'scores' | 'scaled' | 'masked', formula: string, options: PanelData['options']): string {
  const { rope, temperature, softcap, alibi } = options;
  if (step === 'scores' && rope !== undefined) return `S = RoPE(Q) · RoPE(K)ᵀ: Q and K turned by their positions (base ${rope}) — before and after in the Variants tab`;
  if (step === 'scaled') {
    const t = temperature !== undefined ? `, then / T = ${num(temperature, 6)}` : '';
    const c = softcap !== undefined ? `, then C·tanh(s / C) with C = ${num(softcap, 6)} (softcap)` : '';
    return formula + t + c;
  }
  if (step === 'masked' && alibi) return "S'' = S' + M, M = ALiBi's −m·|i − j| (this head's slope) + the mask (−∞ where blocked)";
  return formula;
}

export function stepsView(context: ViewContext): Block[] {
  const { data, result, state } = context;
  const head = Math.min(state.head, result.heads.length - 1);
  const view = result.heads[head];
  const suffix = headTitle(head, data, view);
  const { query, key, dim, token } = axes(data);
  const wants = (step: PanelState['step']) => state.step === 'all' || state.step === step;
  const blocks: Block[] = [];
  const sub = data.options.heads > 1 ? `${head + 1}` : '';
  if (result.givenOnly) {
    const given = givenCard(context, head, view, `Attention weights as given${suffix}`);
    return given ? [given] : [];
  }
  if (wants('projections') && isSmall(result)) {
    if (result.input) {
      blocks.push(valuesCard(context, 'input', 'input', head, result.input, token, dim, 'X', { title: 'Input X', formula: 'X: one row per token (with positional encoding when given)' }));
    }
    const source = result.input ? 'X' : 'given';
    blocks.push(
      valuesCard(context, `h${head + 1}-Q`, 'Q', head, view.Q, query, dim, 'Q', { title: `Queries Q${sub}${suffix}`, formula: source === 'X' ? `Q${sub} = X · W_Q${sub}` : 'Q as given in the file' }),
      valuesCard(context, `h${head + 1}-K`, 'K', head, view.K, key, dim, 'K', { title: `Keys K${sub}${suffix}`, formula: source === 'X' ? `K${sub} = X · W_K${sub}` : 'K as given in the file' }),
      valuesCard(context, `h${head + 1}-V`, 'V', head, view.V, key, dim, 'V', { title: `Values V${sub}${suffix}`, formula: source === 'X' ? `V${sub} = X · W_V${sub}` : 'V as given in the file' }),
    );
  } else if (state.step === 'projections') {
    blocks.push(textElement('p', 'message', `Projections are drawn for problems up to ${SMALL_PROBLEM}×${SMALL_PROBLEM}; this one is larger.`));
  }
  if (wants('scores')) {
    const { max, maxAt } = extremes(view.scores);
    blocks.push(attentionCard(context, head, 'scores', view.scores, {
      title: `1 · Scores${suffix}`,
      formula: withVariants('scores', scoreFormula(data), data.options),
      reading: maxAt >= 0 ? `Largest score: ${cellName(view.scores, maxAt, data)} = ${num(max)}.` : undefined,
    }));
  }
  if (wants('scaled')) {
    const before = extremes(view.scores);
    const after = extremes(view.scaled);
    blocks.push(attentionCard(context, head, 'scaled', view.scaled, {
      title: `2 · Scaled scores${suffix}`,
      formula: withVariants('scaled', scaleFormula(data), data.options),
      reading: `Range [${num(before.min)}, ${num(before.max)}] becomes [${num(after.min)}, ${num(after.max)}]: smaller spreads keep the softmax from saturating.`,
    }));
  }
  if (wants('masked')) {
    const reading = maskReading(view, data);
    if (view.mask) {
      blocks.push(attentionCard(context, head, 'masked', view.masked, { title: `3 · Masked scores${suffix}`, formula: withVariants('masked', "S'' = S' + M (M = 0 where allowed, −∞ where blocked)", data.options), reading }));
    } else {
      const card = textElement('section', 'card');
      card.append(textElement('h3', '', `3 · Mask${suffix}`), textElement('p', 'reading', reading));
      blocks.push(card);
    }
  }
  if (wants('weights')) {
    blocks.push(attentionCard(context, head, 'weights', view.weights, {
      title: `4 · Attention weights A${sub}${suffix}`,
      formula: "A = softmax(S'') row by row: A_ij = exp(S''_ij − max_j) / Σ_j exp(S''_ij − max_j)",
      reading: weightsReading(view, data, result),
    }));
    const given = givenCard(context, head, view, `4b · Weights as given${suffix}`);
    if (given) blocks.push(given);
  }
  if (wants('output')) {
    blocks.push(valuesCard(context, `h${head + 1}-output`, 'output', head, view.output, query, dim, 'output', {
      title: `5 · Output O${sub}${suffix}`,
      formula: `O${sub} = A${sub} · V${sub}`,
      reading: outputReading(view, data),
    }));
  }
  return blocks;
}

export function headsView(context: ViewContext): Block[] {
  const { data, result } = context;
  const { query, dim, token } = axes(data);
  const grid = textElement('div', 'head-grid');
  const cards: HeatmapCard[] = [];
  result.heads.forEach((view, head) => {
    const cell = textElement('div', 'head-cell');
    cell.append(button(`Head ${head + 1}${view.kvHead !== head ? ` (KV ${view.kvHead + 1})` : ''}: open steps`, () => context.openHeadSteps(head)));
    const difference = view.givenMaxDifference;
    const compared = difference !== undefined && !result.givenOnly ? ` — given: max |Δ| ${num(difference, 3)}` : '';
    const card = attentionCard(context, head, 'weights', view.weights, { title: `Weights A${head + 1}${result.givenOnly ? ' (as given)' : compared}` });
    cell.append(card.element);
    grid.append(cell);
    cards.push(card);
  });
  const blocks: Block[] = [{ element: grid, draw: async () => { for (const card of cards) await card.draw(); } }];
  if (result.givenOnly) return blocks;
  const heads = result.heads.length;
  blocks.push(valuesCard(context, 'concat', 'concat', 0, result.concat, query, dim, 'concat', {
    title: 'Concat of the head outputs',
    formula: heads > 1 ? `Concat(O1 … O${heads}): the heads side by side` : 'One head: the concat is its output',
  }));
  if (result.WO) {
    blocks.push(valuesCard(context, 'WO', 'WO', 0, result.WO, { kind: 'dim' }, dim, 'W_O', { title: 'Output projection W_O', formula: 'W_O: concat dimension → model dimension' },
      (cell) => (cell.exact ? `concat dim ${cell.row + 1} → output dim ${cell.col + 1}: W_O ${num(cell.value)}` : `${blockText(cell, { kind: 'dim' }, dim)}: W_O ${num(cell.value)}`)));
  }
  blocks.push(valuesCard(context, 'layerOutput', 'layerOutput', 0, result.layerOutput, query, dim, 'output', {
    title: result.WO ? 'Output ΔE = Concat · W_O' : 'Output ΔE = Concat',
  }));
  if (result.residual && result.input) {
    const input = result.input;
    const delta = result.layerOutput;
    blocks.push(valuesCard(context, 'residual', 'residual', 0, result.residual, token, dim, "E'", {
      title: "Residual E' = E + ΔE",
      formula: 'Each token’s embedding moves by the attention output',
    }, (cell) => {
      if (!cell.exact) return `${blockText(cell, token, dim)}: E' ${num(cell.value)}`;
      const e = exactValue(input, cell.row, cell.col) ?? NaN;
      const d = exactValue(delta, cell.row, cell.col) ?? NaN;
      return `${named('token', cell.row, token.tokens)}, dim ${cell.col + 1}: E' ${num(cell.value)} = E ${num(e)} + ΔE ${num(d)}`;
    }));
  }
  return blocks;
}

export function maskView(context: ViewContext): Block[] {
  const { data, result, state } = context;
  const head = Math.min(state.head, result.heads.length - 1);
  const view = result.heads[head];
  if (!view.mask) return [textElement('p', 'message', 'No mask was applied: every query may attend to every key. Add `causal` to the directive or an `M`/`mask` matrix.')];
  const { query, key } = axes(data);
  const mask = view.mask;
  const card = heatmapCard({
    id: `h${head + 1}-mask`,
    key: 'mask',
    head,
    view: mask,
    rows: query,
    cols: key,
    scale: 'mask',
    title: `Mask${headTitle(head, data, view)}`,
    formula: data.options.causal ? `Causal mask, aligned ${data.options.causal}: query i may attend to key j when j ≤ i${data.options.causal === 'bottom-right' ? ' + (L_k − L_q)' : ''}` : 'Mask from the file (boolean false or −∞ entries block; padding blocks whole key columns)',
    reading: maskReading(view, data),
    describe: (cell) => cell.exact
      ? `${named('query', cell.row, query.tokens)} → ${named('key', cell.col, key.tokens)}: ${cell.value === -Infinity ? 'blocked (mask −∞)' : `may attend (mask ${num(cell.value)})`}`
      : `${blockText(cell, query, key)}: ${cell.value === -Infinity ? 'all blocked' : 'some allowed'}`,
  }, context);
  const legend = textElement('p', 'legend');
  legend.append(textElement('span', 'swatch allowed'), ' may attend (adds 0)  ', textElement('span', 'swatch blocked'), ' blocked (adds −∞, weight 0)');
  card.element.insertBefore(legend, card.element.querySelector('.reading'));
  return [card];
}

export function gradientsView(context: ViewContext): Block[] {
  const { data, result, state } = context;
  const head = Math.min(state.head, result.heads.length - 1);
  const view = result.heads[head];
  const gradients = view.gradients;
  if (!gradients) return [textElement('p', 'message', 'Gradients were not computed: add `gradients` to the attention directive (upstream dO defaults to ones).')];
  const { query, key, dim } = axes(data);
  const suffix = headTitle(head, data, view);
  return [
    attentionCard(context, head, 'dS', gradients.dS, { title: `dS — gradient of the scores${suffix}`, formula: 'dS = A ⊙ (dA − rowsum(dA ⊙ A))  (softmax Jacobian)' }),
    attentionCard(context, head, 'dA', gradients.dA, { title: `dA — gradient of the weights${suffix}`, formula: 'dA = dO · Vᵀ' }),
    valuesCard(context, `h${head + 1}-dQ`, 'dQ', head, gradients.dQ, query, dim, 'dQ', { title: `dQ${suffix}`, formula: "dQ = dS · K × scale" }),
    valuesCard(context, `h${head + 1}-dK`, 'dK', head, gradients.dK, key, dim, 'dK', { title: `dK${suffix}`, formula: "dK = dSᵀ · Q × scale" }),
    valuesCard(context, `h${head + 1}-dV`, 'dV', head, gradients.dV, key, dim, 'dV', { title: `dV${suffix}`, formula: 'dV = Aᵀ · dO' }),
  ];
}

function table(caption: string, header: string[], rows: string[][]): HTMLElement {
  const node = document.createElement('table');
  node.className = 'checks';
  node.createCaption().textContent = caption;
  const head = node.createTHead().insertRow();
  for (const text of header) head.append(Object.assign(document.createElement('th'), { textContent: text, scope: 'col' }));
  const body = node.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    row.forEach((text, index) => {
      const cell = index === 0 ? Object.assign(document.createElement('th'), { scope: 'row' }) : document.createElement('td');
      cell.textContent = text;
      tr.append(cell);
    });
  }
  return node;
}

/** The largest error, and how many of the `queries` output rows the rerun compared (64 at most). */
function permutationDetail(checks: ResultView['checks'], queries: number): string {
  if (checks.permutationMaxError === undefined) return 'only for self-attention without masks';
  const compared = checks.permutationRowsChecked ?? queries;
  const sampled = compared < queries ? ` (${compared} of the ${queries} output rows, spread over the sequence)` : '';
  return `max error after permuting X's rows: ${num(checks.permutationMaxError, 3)}${sampled}`;
}

export function checksView(context: ViewContext): Block[] {
  const { checks, cost, warnings, dtype, elapsedMs } = context.result;
  const verdict = (ok: boolean | undefined) => (ok === undefined ? 'not applicable' : ok ? '✓ pass' : '✗ FAIL');
  const blocks: Block[] = [
    table('Checks of this result', ['Check', 'Result', 'Detail'], [
      ['Rows of A sum to 1', verdict(checks.rowsSumToOne), `max |Σ_j A_ij − 1| = ${num(checks.rowSumsMaxError, 3)}`],
      ['0 ≤ A ≤ 1', verdict(checks.weightsInBounds), ''],
      ['Permutation equivariance', verdict(checks.permutationEquivariant), permutationDetail(checks, context.result.layerOutput.sourceRows)],
      context.result.givenOnly ? ['Computed', 'nothing', 'the weights are shown as given'] : ['Computed in', dtype, `${num(elapsedMs, 3)} ms`],
    ]),
    table('Cost: FLOPs (multiply-add = 2) and memory of the n×n attention matrices', ['Shape', 'FLOPs', 'Attention memory'],
      cost.map((entry) => [entry.label, flops(entry.flops), bytes(entry.attentionBytes)])),
  ];
  if (warnings.length) {
    const list = textElement('ul', 'warnings');
    for (const warning of warnings) list.append(textElement('li', '', warning));
    blocks.push(textElement('h3', '', 'Warnings'), list);
  }
  return blocks;
}

/** The bottom view: the weights of one head, compact, same tooltips. */
export function compactView(context: ViewContext): Block[] {
  const head = Math.min(context.state.head, context.result.heads.length - 1);
  const view = context.result.heads[head];
  return [attentionCard(context, head, 'weights', view.weights, { title: `${context.data.title}${headTitle(head, context.data, view)}: weights` })];
}
