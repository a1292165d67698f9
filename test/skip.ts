// The one way a test skips itself: it says why in the log, on a line `npm test`
// (scripts/test-all.mjs) gathers under its summary, and mocha counts the test as pending, which
// every runner reports and `npm test` adds up as skipped.

/** The marker scripts/test-all.mjs looks for: keep the two in step. */
export const SKIP_PREFIX = 'skipped:';

/** Skips the running test (call it with the test's `this`), naming the reason. */
export function skipBecause(context: Mocha.Context, reason: string): never {
  console.log(`    ${SKIP_PREFIX} ${context.test?.fullTitle() ?? 'a test'} — ${reason}`);
  context.skip();
}
