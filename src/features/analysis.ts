// Reads every supported document: parse + spec on the extension host (cheap: the reader is a
// linear scanner; see the report for measurements), diagnostics in the Problems panel, the read
// stored in `Results`. Edits are re-read after `attentionLens.debounceMs`.
import * as vscode from 'vscode';
import { parseDocument } from '../core/parse';
import { buildSpec } from '../core/spec';
import type { AttentionSpec, Diagnostic, ParseResult } from '../core/types';
import { isSupported } from './languages';
import type { Results } from './results';
import { readSettings } from './settings';
import { toVsRange } from './vsRange';

export interface Analysis {
  version: number;
  parse: ParseResult;
  /** One per problem, same order as `parse.problems`. */
  specs: { spec?: AttentionSpec; diagnostics: Diagnostic[] }[];
  readMs: number;
}

export interface AnalyzedEvent {
  document: vscode.TextDocument;
  analysis: Analysis;
  /** The document had results before this read (live update re-runs those). */
  hadRuns: boolean;
}

export class DocumentAnalyzer implements vscode.Disposable {
  private readonly byUri = new Map<string, Analysis>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly collection = vscode.languages.createDiagnosticCollection('attention-lens');
  private readonly analyzed = new vscode.EventEmitter<AnalyzedEvent>();
  readonly onDidAnalyze = this.analyzed.event;

  constructor(
    private readonly results: Results,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** The read of the document's current version (read now if it is not cached). */
  analyze(document: vscode.TextDocument): Analysis {
    const key = document.uri.toString();
    const cached = this.byUri.get(key);
    if (cached && cached.version === document.version) return cached;
    this.cancelScheduled(key);

    const started = performance.now();
    const parse = parseDocument(document.getText());
    const specs = parse.problems.map((problem) => buildSpec(problem));
    const analysis: Analysis = { version: document.version, parse, specs, readMs: performance.now() - started };
    this.byUri.set(key, analysis);
    this.log.debug(`read ${document.uri.fsPath}: ${parse.problems.length} problems in ${analysis.readMs.toFixed(1)} ms`);

    const diagnostics = [...parse.diagnostics, ...specs.flatMap((s) => s.diagnostics)];
    this.collection.set(document.uri, diagnostics.map(toVsDiagnostic));

    // Earlier runs stay (by problem index) until new ones replace them, so no surface blanks out
    // while the user types; each run records the version it was computed from.
    const previous = this.results.get(key);
    const runs = parse.problems.map((_, index) => previous?.runs[index]);
    this.results.set({ uri: key, version: document.version, parse, runs });
    this.analyzed.fire({ document, analysis, hadRuns: previous?.runs.some(Boolean) ?? false });
    return analysis;
  }

  schedule(document: vscode.TextDocument): void {
    const key = document.uri.toString();
    this.cancelScheduled(key);
    const delay = readSettings(document.uri).debounceMs;
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        if (!document.isClosed) this.analyze(document);
      }, delay),
    );
  }

  forget(document: vscode.TextDocument): void {
    const key = document.uri.toString();
    this.cancelScheduled(key);
    this.byUri.delete(key);
    this.collection.delete(document.uri);
    this.results.delete(key);
  }

  dispose(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.collection.dispose();
    this.analyzed.dispose();
  }

  private cancelScheduled(key: string): void {
    const timer = this.timers.get(key);
    if (timer !== undefined) clearTimeout(timer);
    this.timers.delete(key);
  }
}

/** Reads open documents now, edited ones after the debounce, and forgets closed ones. */
export function registerAnalysis(
  context: vscode.ExtensionContext,
  results: Results,
  log: vscode.LogOutputChannel,
): DocumentAnalyzer {
  const analyzer = new DocumentAnalyzer(results, log);
  context.subscriptions.push(
    analyzer,
    vscode.workspace.onDidOpenTextDocument((document) => {
      if (isSupported(document)) analyzer.analyze(document);
    }),
    vscode.workspace.onDidChangeTextDocument((event) => {
      if (isSupported(event.document) && event.contentChanges.length > 0) analyzer.schedule(event.document);
    }),
    vscode.workspace.onDidCloseTextDocument((document) => analyzer.forget(document)),
  );
  // Documents already open when the extension activates are read after activation returns.
  const initial = setTimeout(() => {
    for (const document of vscode.workspace.textDocuments) if (isSupported(document)) analyzer.analyze(document);
  }, 0);
  context.subscriptions.push({ dispose: () => clearTimeout(initial) });
  return analyzer;
}

function toVsDiagnostic(diagnostic: Diagnostic): vscode.Diagnostic {
  const message = diagnostic.suggestion ? `${diagnostic.message} ${diagnostic.suggestion}` : diagnostic.message;
  const result = new vscode.Diagnostic(toVsRange(diagnostic.range), message, SEVERITY[diagnostic.severity]);
  result.source = 'Attention Lens';
  result.code = diagnostic.code;
  return result;
}

const SEVERITY: Record<Diagnostic['severity'], vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  info: vscode.DiagnosticSeverity.Information,
};
