// The heads views' pages as the worker shapes them from an AttentionStack: what the page knows of
// a stack (StackInfo) and what it draws for each question (pooled thumbnails, top-k lines, one
// head, the analyses and comparisons). No `vscode` import: the worker holds the stacks and answers
// with these; the browser tests and the benchmarks call the same functions.
import { maxPoolFast } from '../core/engine/fast';
import { analyseStack, layerMean, stackFlow } from '../core/heads/analysis';
import { pooledDifference } from '../core/heads/compare';
import { divergences } from '../core/heads/divergence';
import { headLines, poolGrid } from '../core/heads/pool';
import { kindsOf, ofKind } from '../core/heads/kinds';
import type { AttentionStack } from '../core/heads/stack';
import { routingPairs } from '../core/model/experts';
import type { ModelRun } from '../core/model/run';
import type { AttentionRow, GenerationInfo, HeadsAnswer, HeadsQuery, KindInfo, PictureInfo, StackInfo } from '../protocol';
import { MAX_CELLS_PER_SIDE, viewOf } from './matrixView';

/** What the page draws for `query`, `other` being the run compared with (B; this stack is A).
 * The worker answers with it; the browser tests, which stand in for the host, call it too. */
export async function answerQuery(run: AttentionStack, query: HeadsQuery, otherRun?: AttentionStack): Promise<HeadsAnswer> {
  // The kind asked for, of this run and of the one compared with (views select a kind: design.md §4).
  const stack = ofKind(run, query.attention);
  const other = otherRun && ofKind(otherRun, query.attention);
  switch (query.kind) {
    case 'grid':
      return { kind: 'grid', grid: await poolGrid(stack, query.size, query.mode, query.layers, query.heads) };
    case 'lines':
      return { kind: 'lines', lines: headLines(stack, query.layer, query.heads, query.k) };
    case 'head': {
      const { layer, head } = query;
      const weights = stack.weights(layer, head);
      // A new array either way (the view travels by transfer; the stack keeps its numbers), in the
      // weights' own precision: float32 weights as float32, exact and half the bytes that the host
      // passes on to the page (1 MB, not 2, for a 512-token head); a problem's float64 ones exact.
      const view = viewOf({ rows: stack.queryCount, cols: stack.keyCount, data: weights }, undefined, maxPoolFast);
      return { kind: 'head', layer, head, view: weights instanceof Float32Array ? { ...view, data: Float32Array.from(view.data) } : view };
    }
    case 'rows':
      return { ...query, data: queryRows(stack, query) };
    case 'layerMean':
      return { kind: 'layerMean', layer: query.layer, view: viewOf({ rows: stack.queryCount, cols: stack.keyCount, data: layerMean(stack, query.layer) }, undefined, maxPoolFast) };
    case 'scores':
      return { kind: 'scores', ...(await analyseStack(stack)) };
    case 'flow':
      return { kind: 'flow', flow: stackFlow(stack) };
    case 'divergence':
      return { kind: 'divergence', divergence: await divergences(stack, compared(other)) };
    case 'difference':
      return { kind: 'difference', difference: pooledDifference(stack, compared(other), query.layer, query.head, MAX_CELLS_PER_SIDE) };
    case 'predict':
      // A model run's LM head row, on demand (the page's token hover); null for other stacks.
      return { kind: 'predict', position: query.position, prediction: (await stack.predictAt?.(query.position)) ?? null };
    case 'row':
      return { kind: 'row', row: await attentionRow(stack, query.position) };
  }
}

/** Row `query` of one head [keyCount]: computed alone where the stack can, else cut from the head. */
function rowOf(stack: AttentionStack, layer: number, head: number, query: number): Float32Array | Float64Array {
  return stack.row?.(layer, head, query) ?? stack.weights(layer, head).subarray(query * stack.keyCount, (query + 1) * stack.keyCount);
}

/** Row `query` of each listed layer × head, keys from `keyStart` on: [layer][head][key − keyStart]. */
function queryRows(stack: AttentionStack, { query, keyStart, layers, heads }: Extract<HeadsQuery, { kind: 'rows' }>): Float32Array {
  const width = stack.keyCount - keyStart;
  const data = new Float32Array(layers.length * heads.length * width);
  layers.forEach((layer, l) =>
    heads.forEach((head, h) => {
      data.set(rowOf(stack, layer, head, query).subarray(keyStart), (l * heads.length + h) * width);
    }),
  );
  return data;
}

/**
 * Row `position` of every layer × head. A causal stack's keys past the row are zero and left out:
 * the row of a generated step has the keys up to it, which is what the page draws as it grows.
 */
export async function attentionRow(stack: AttentionStack, position: number): Promise<AttentionRow> {
  const keys = stack.lowerTriangular ? position + 1 : stack.keyCount;
  const weights = new Float32Array(stack.layerCount * stack.headCount * keys);
  const put = (layer: number, head: number, row: Float32Array | Float64Array) => weights.set(row.subarray(0, keys), (layer * stack.headCount + head) * keys);
  for (let layer = 0; layer < stack.layerCount; layer++) {
    // A stack that computes one row for less than its head (a model run) is asked for the row alone.
    if (stack.headGroups && !stack.row) await stack.headGroups(layer, async (first, heads) => heads.forEach((all, h) => put(layer, first + h, all.subarray(position * stack.keyCount))));
    else for (let head = 0; head < stack.headCount; head++) put(layer, head, rowOf(stack, layer, head, position));
  }
  return { position, layers: stack.layerCount, heads: stack.headCount, keys, weights };
}

/** A generation as the host and the page keep it: the steps without their attention rows (the run keeps those). */
export function generationInfo(run: Pick<ModelRun, 'generation'>): GenerationInfo | undefined {
  if (!run.generation) return undefined;
  return { ...run.generation, steps: run.generation.steps.map(({ attention: _attention, ...step }) => step) };
}

function compared(other: AttentionStack | undefined): AttentionStack {
  if (!other) throw new RangeError('Choose a run to compare with first (the Compare tab).');
  return other;
}

/** Why `query` asks for what `stack` does not have (a layer, head or token past its counts). */
export function outOfRange(run: AttentionStack, query: HeadsQuery): string | undefined {
  if (query.attention !== undefined && run.kind !== query.attention && !run.kinds?.[query.attention]) return `This run has no ${query.attention} attention.`;
  const stack = ofKind(run, query.attention);
  if (query.kind === 'scores' || query.kind === 'flow' || query.kind === 'divergence') return undefined;
  if (query.kind === 'predict' || query.kind === 'row') return query.position < stack.queryCount ? undefined : `There are ${stack.queryCount} tokens (0–${stack.queryCount - 1}).`;
  if (query.kind === 'rows' && (query.query >= stack.queryCount || query.keyStart >= stack.keyCount)) return `There are ${stack.queryCount} queries and ${stack.keyCount} keys.`;
  const layers = query.kind === 'grid' || query.kind === 'rows' ? query.layers : [query.layer];
  const heads = query.kind === 'grid' || query.kind === 'lines' || query.kind === 'rows' ? query.heads : query.kind === 'layerMean' ? [] : [query.head];
  if (layers.some((layer) => layer >= stack.layerCount)) return `There are ${stack.layerCount} layers (0–${stack.layerCount - 1}).`;
  if (heads.some((head) => head >= stack.headCount)) return `There are ${stack.headCount} heads (0–${stack.headCount - 1}).`;
  return undefined;
}

/** What the page knows of a stack: its labels and counts, never its weights. */
export function infoOf(stack: AttentionStack, title: string, notes: string[]): StackInfo {
  const { tokens, keyTokens, layerCount, headCount, queryCount, keyCount } = stack;
  // A mixture of experts' routing is small (layers × tokens × top-k): the page gets it whole.
  const routing = stack.routing && { experts: stack.routing.experts, topK: stack.routing.topK, layers: routingPairs(stack.routing, queryCount) };
  const picture = pictureOf(stack);
  const kinds = stack.kinds && kindsOf(stack).map((kind) => kindInfo(stack.kinds![kind]!));
  const generation = generationInfo(stack as AttentionStack & Partial<Pick<ModelRun, 'generation'>>);
  return {
    title, source: stack.source.kind, tokens, keyTokens, layerCount, headCount, queryCount, keyCount, notes,
    ...(routing ? { routing } : {}), ...(picture ? { picture } : {}), ...(stack.kind ? { kind: stack.kind } : {}), ...(kinds ? { kinds } : {}),
    ...(generation ? { generation } : {}),
  };
}

/** A kind's labels and counts, for the page's selector. */
function kindInfo(stack: AttentionStack): KindInfo {
  const { tokens, keyTokens, layerCount, headCount, queryCount, keyCount } = stack;
  return { kind: stack.kind!, tokens, keyTokens, layerCount, headCount, queryCount, keyCount };
}

/** What the heads page needs to draw a picture run's overlays (webview/heads/picture.ts); undefined for any other stack. */
export function pictureOf(stack: AttentionStack): PictureInfo | undefined {
  const run = stack as AttentionStack & Partial<Pick<ModelRun, 'patchGrid' | 'picture' | 'predictions'>>;
  if (!run.patchGrid || !run.picture) return undefined;
  const [rows, cols] = run.patchGrid;
  const labels = (run.predictions ?? []).filter((p) => p.kind === 'label').flatMap((p) => p.top.map((t) => ({ label: t.token, probability: t.probability })));
  return { ...run.picture, grid: [rows, cols], prefix: run.tokens.length - rows * cols, labels };
}
