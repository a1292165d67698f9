// Choosing one kind of attention of a run (design.md §4: views select a kind): the stack of that
// kind, or why the run has none. Shared by the worker's views and the CLI.
import type { AttentionKind, AttentionStack } from './stack';

export const ATTENTION_KINDS: readonly AttentionKind[] = ['encoder', 'decoder', 'cross'];

/** The stack of `kind` in `run` (the run itself when no kind is named); a RangeError when it has none. */
export function ofKind(run: AttentionStack, kind: AttentionKind | undefined): AttentionStack {
  if (kind === undefined || run.kind === kind) return run;
  const stack = run.kinds?.[kind];
  if (!stack) throw new RangeError(`This run has no ${kind} attention.`);
  return stack;
}

/** The kinds `run` has, in the order encoder, decoder, cross (none for a run of one kind). */
export function kindsOf(run: AttentionStack): AttentionKind[] {
  return ATTENTION_KINDS.filter((kind) => run.kinds?.[kind]);
}
