// What `npm test` (scripts/test-all.mjs) reads from a suite's log: how many tests passed, failed
// and were skipped, and why each skip happened (the lines test/skip.ts prints).

/** A line of test/skip.ts: a skipped test and its reason. */
const SKIP_LINE = /^\s*skipped: (.*)$/;

/**
 * The test counts a suite printed: our runners' `N passed, N failed[, N skipped]`, mocha's
 * `N passing` / `N failing` / `N pending`, or node:test's `# pass N`, `# fail N` and `# cancelled N`
 * (both failed), `# skipped N` and `# todo N` (both skipped). Null when it printed none.
 */
export function countTests(lines) {
  let counts = null;
  const set = (key, value, add = false) => {
    counts ??= { passed: 0, failed: 0, skipped: 0 };
    counts[key] = (add ? counts[key] : 0) + Number(value);
  };
  for (const line of lines) {
    let match;
    if ((match = /(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$/.exec(line))) {
      set('passed', match[1]);
      set('failed', match[2]);
      set('skipped', match[3] ?? 0);
    } else if ((match = /^\s*(\d+) passing\b/.exec(line))) {
      set('passed', match[1]);
    } else if ((match = /^\s*(\d+) failing\b/.exec(line))) {
      set('failed', match[1]);
    } else if ((match = /^\s*(\d+) pending\b/.exec(line))) {
      set('skipped', match[1]);
    } else if (/^# tests \d+$/.test(line)) {
      // node:test's closing block: its failed and skipped lines add up from here.
      set('failed', 0);
      set('skipped', 0);
    } else if ((match = /^# pass (\d+)$/.exec(line))) {
      set('passed', match[1]);
    } else if ((match = /^# (?:fail|cancelled) (\d+)$/.exec(line))) {
      // A cancelled test (a timeout, a parent that failed) did not pass either.
      set('failed', match[1], true);
    } else if ((match = /^# (?:skipped|todo) (\d+)$/.exec(line))) {
      // node:test reports its skipped and its todo tests apart: both are tests that did not run.
      set('skipped', match[1], true);
    }
  }
  return counts;
}

/** The reasons of the skips a suite's log names, in order. */
export function skipReasons(lines) {
  return lines.map((line) => SKIP_LINE.exec(line)?.[1]).filter((reason) => reason !== undefined);
}
