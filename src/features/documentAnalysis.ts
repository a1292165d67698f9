// A document's reading as the features keep it (DocumentAnalyzer in analysis.ts for text, the
// NotebookAnalyzer in notebook.ts for a notebook's cells), and the event that announces a new one.
import type * as vscode from 'vscode';
import type { MatrixStatistics } from '../core/statistics';
import type { AttentionSpec, Diagnostic, ParseResult } from '../core/types';

export interface Analysis {
  version: number;
  parse: ParseResult;
  /** One per problem, same order as `parse.problems`. */
  specs: { spec?: AttentionSpec; diagnostics: Diagnostic[] }[];
  /** Reader and spec diagnostics together. */
  diagnostics: Diagnostic[];
  /** Per problem, per matrix: min/max/mean for hovers. */
  statistics: MatrixStatistics[][];
  /** Milliseconds the worker spent reading. */
  readMs: number;
}

export interface AnalyzedEvent {
  document: vscode.TextDocument;
  analysis: Analysis;
  /** The document had results before this read (live update re-runs those). */
  hadRuns: boolean;
}

export function hasErrors(analysis: Analysis): boolean {
  return analysis.diagnostics.some((diagnostic) => diagnostic.severity === 'error');
}
