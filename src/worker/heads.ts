// The heads views' side of the worker: open stacks, held under an id until their view closes,
// and the answers the page draws (pooled thumbnails, top-k lines, one head), all computed here.
// The analyses of a stack (head scores, rollout, comparisons) read the same stacks (stackOf).
import { maxPoolFast } from '../core/engine/fast';
import { analyseStack, stackFlow } from '../core/heads/analysis';
import { pooledDifference } from '../core/heads/compare';
import { divergences } from '../core/heads/divergence';
import { loadSavedAttentions } from '../core/heads/load';
import { headLines, poolGrid } from '../core/heads/pool';
import type { AttentionStack } from '../core/heads/stack';
import { stackOfResult } from '../core/heads/stackOfResult';
import { MAX_CELLS_PER_SIDE, viewOf } from '../panel/model';
import type { HeadsAnswer, HeadsQuery, StackInfo, WorkerHeadsAdoptRequest, WorkerHeadsOpenRequest, WorkerHeadsQueryRequest, WorkerHeadsResponse } from '../protocol';

const stacks = new Map<number, AttentionStack>();
let nextStack = 1;

export function stackOf(id: number): AttentionStack | undefined {
  return stacks.get(id);
}

export function openHeads(request: WorkerHeadsOpenRequest | WorkerHeadsAdoptRequest): WorkerHeadsResponse {
  try {
    const { stack, title, notes } = request.type === 'headsOpen' ? opened(request) : adopted(request);
    return holdStack(request.id, stack, title, notes);
  } catch (error) {
    return { type: 'headsFailed', id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
}

/** Holds a stack made elsewhere in the worker (a model run) for a heads view. */
export function holdStack(request: number, stack: AttentionStack, title: string, notes: string[]): WorkerHeadsResponse {
  const id = nextStack++;
  stacks.set(id, stack);
  return { type: 'headsOpened', id: request, stack: id, info: infoOf(stack, title, notes) };
}

export function closeHeads(stack: number): void {
  stacks.delete(stack);
}

export async function answerHeads(request: WorkerHeadsQueryRequest): Promise<WorkerHeadsResponse> {
  const stack = stacks.get(request.stack);
  if (!stack) return { type: 'headsFailed', id: request.id, error: 'This view\'s attentions were let go (the worker restarted): open them again.' };
  const other = request.other === undefined ? undefined : stacks.get(request.other);
  if (request.other !== undefined && !other) return { type: 'headsFailed', id: request.id, error: 'The run compared with was let go (the worker restarted): choose it again.' };
  const failure = outOfRange(stack, request.query);
  if (failure) return { type: 'headsFailed', id: request.id, error: failure };
  try {
    return { type: 'headsAnswer', id: request.id, answer: await answerQuery(stack, request.query, other) };
  } catch (error) {
    // Attention flow past its size limit, and runs of different shapes, say so (a RangeError).
    if (error instanceof RangeError) return { type: 'headsFailed', id: request.id, error: error.message };
    throw error;
  }
}

/** What the page draws for `query`, `other` being the run compared with (B; this stack is A).
 * Exported for the browser tests, which stand in for the host. */
export async function answerQuery(stack: AttentionStack, query: HeadsQuery, other?: AttentionStack): Promise<HeadsAnswer> {
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
  }
}

function compared(other: AttentionStack | undefined): AttentionStack {
  if (!other) throw new RangeError('Choose a run to compare with first (the Compare tab).');
  return other;
}

function outOfRange(stack: AttentionStack, query: HeadsQuery): string | undefined {
  if (query.kind === 'scores' || query.kind === 'flow' || query.kind === 'divergence') return undefined;
  if (query.kind === 'predict') return query.position < stack.queryCount ? undefined : `There are ${stack.queryCount} tokens (0–${stack.queryCount - 1}).`;
  const layers = query.kind === 'grid' ? query.layers : [query.layer];
  const heads = query.kind === 'grid' || query.kind === 'lines' ? query.heads : [query.head];
  if (layers.some((layer) => layer >= stack.layerCount)) return `There are ${stack.layerCount} layers (0–${stack.layerCount - 1}).`;
  if (heads.some((head) => head >= stack.headCount)) return `There are ${stack.headCount} heads (0–${stack.headCount - 1}).`;
  return undefined;
}

function opened(request: WorkerHeadsOpenRequest) {
  const { stack, notes } = loadSavedAttentions(request.path, { maxElements: request.maxElements }, request.ids);
  return { stack, notes, title: stack.source.kind === 'saved' ? stack.source.file : request.path };
}

function adopted(request: WorkerHeadsAdoptRequest) {
  const source = { kind: 'problem' as const, document: request.document, problem: request.problem };
  const stack = stackOfResult({ heads: request.weights.map((weights) => ({ weights })) }, { source, tokens: request.tokens, keyTokens: request.keyTokens });
  return { stack, notes: [], title: request.title };
}

function infoOf(stack: AttentionStack, title: string, notes: string[]): StackInfo {
  const { tokens, keyTokens, layerCount, headCount, queryCount, keyCount } = stack;
  return { title, source: stack.source.kind, tokens, keyTokens, layerCount, headCount, queryCount, keyCount, notes };
}
