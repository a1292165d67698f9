// The heads views' side of the worker: open stacks, held under an id until their view closes,
// and answered here with what the page draws (shaped by views/heads.ts). The analyses of a stack
// (head scores, rollout, comparisons) read the same stacks (stackOf).
import { loadSavedAttentions } from '../core/heads/load';
import type { AttentionStack } from '../core/heads/stack';
import { stackOfResult } from '../core/heads/stackOfResult';
import type { WorkerHeadsAdoptRequest, WorkerHeadsOpenRequest, WorkerHeadsQueryRequest, WorkerHeadsResponse } from '../protocol';
import { answerQuery, infoOf, outOfRange } from '../views/heads';

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

function opened(request: WorkerHeadsOpenRequest) {
  const { stack, notes } = loadSavedAttentions(request.path, { maxElements: request.maxElements }, request.ids);
  return { stack, notes, title: stack.source.kind === 'saved' ? stack.source.file : request.path };
}

function adopted(request: WorkerHeadsAdoptRequest) {
  const source = { kind: 'problem' as const, document: request.document, problem: request.problem };
  const stack = stackOfResult({ heads: request.weights.map((weights) => ({ weights })) }, { source, tokens: request.tokens, keyTokens: request.keyTokens });
  return { stack, notes: [], title: request.title };
}
