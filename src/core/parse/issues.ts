import type { Severity } from '../types';

/** A diagnostic while reading, by text offsets; turned into line/character ranges once at the end. */
export interface ReadIssue {
  start: number;
  end: number;
  severity: Severity;
  code: string;
  message: string;
  suggestion?: string;
}

/** numpy and torch print large arrays in summary, the middle left out as `...`. */
export function printedSummaryMessage(name: string): string {
  return `${name} was printed in summary (numpy/torch elide the middle of large arrays with "..."), so its numbers cannot be read; print it whole, e.g. after np.set_printoptions(threshold=sys.maxsize).`;
}
