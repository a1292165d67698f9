// How long after an edit a document is read (and, with live update, run) again. No `vscode`
// import: the policy is tested on its own (test/unit/features/readDelay.test.ts).

/** A read this fast is repeated on every keystroke. */
export const CHEAP_READ_MS = 3;
/** The longest an edit waits before its document is read again, however costly reading it is. */
export const MAX_READ_DELAY_MS = 300;

/**
 * The user's `attentionLens.debounceMs` when set; else at once for a document that read in under
 * CHEAP_READ_MS last time (live update follows every keystroke), else twice what its last read
 * cost, at most MAX_READ_DELAY_MS — so fast typing never queues reads of a costly file, and
 * nothing waits a fixed delay it does not need. A document never read yet waits nothing.
 */
export function readDelay(lastReadMs: number | undefined, debounceMs: number | undefined): number {
  if (debounceMs !== undefined) return debounceMs;
  if (lastReadMs === undefined || lastReadMs < CHEAP_READ_MS) return 0;
  return Math.min(MAX_READ_DELAY_MS, Math.ceil(2 * lastReadMs));
}
