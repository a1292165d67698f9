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
