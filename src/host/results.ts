import * as vscode from 'vscode';
import type { AttentionResult, AttentionSpec, ParseResult, Problem } from '../core/types';

// The latest read and run of each document: written by the run/diagnostics features, read by
// CodeLens, hovers, the panel, the bottom view and inline heatmaps, so that each of them renders
// the same result and none recomputes it.

export interface ProblemRun {
  problem: Problem;
  /** The document version this run was computed from (older than `DocumentRun.version` after an edit). */
  version: number;
  result?: AttentionResult;
  /** The spec the result was computed from: the panel's views on demand are computed from it. */
  spec?: AttentionSpec;
  error?: string;
  elapsedMs: number;
}

export interface DocumentRun {
  uri: string;
  version: number;
  parse: ParseResult;
  /** Indexed by problem index; undefined until that problem has been run. */
  runs: (ProblemRun | undefined)[];
}

export class Results implements vscode.Disposable {
  private readonly byUri = new Map<string, DocumentRun>();
  private readonly changed = new vscode.EventEmitter<{ uri: string }>();
  readonly onDidChange = this.changed.event;

  get(uri: string): DocumentRun | undefined {
    return this.byUri.get(uri);
  }

  set(run: DocumentRun): void {
    this.byUri.set(run.uri, run);
    this.changed.fire({ uri: run.uri });
  }

  delete(uri: string): void {
    if (this.byUri.delete(uri)) this.changed.fire({ uri });
  }

  dispose(): void {
    this.changed.dispose();
  }
}
