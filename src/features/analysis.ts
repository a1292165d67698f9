// Reads every supported document: parse + spec on the extension host (the reader is a linear
// scanner: ~0.5 ms for a note, ~6 ms for a 2048-token file here), diagnostics in the Problems
// panel, the read stored in `Results`.
//
// While the user types: a document that reads cheaply is read again at once (so live update can
// follow within milliseconds); an expensive one after `attentionLens.debounceMs`. Errors appear
// only once typing has paused for `debounceMs` — half-typed numbers do not flash red — while a
// fix clears them at once.
import * as vscode from 'vscode';
import { parseDocument } from '../core/parse';
import { hasReferences, resolveReferences } from '../core/parse/tensors/resolve';
import { buildSpec } from '../core/spec';
import type { AttentionSpec, Diagnostic, ParseResult } from '../core/types';
import { isSupported } from './languages';
import type { Results } from './results';
import { readSettings } from './settings';
import type { TensorReferenceFiles } from './tensorReferences';
import { toVsRange } from './vsRange';

/** A read this fast is repeated on every edit instead of waiting for the debounce. */
const CHEAP_READ_MS = 3;

export interface Analysis {
  version: number;
  parse: ParseResult;
  /** One per problem, same order as `parse.problems`. */
  specs: { spec?: AttentionSpec; diagnostics: Diagnostic[] }[];
  /** Reader and spec diagnostics together. */
  diagnostics: Diagnostic[];
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

export class DocumentAnalyzer implements vscode.Disposable {
  private readonly byUri = new Map<string, Analysis>();
  private readonly readTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly publishTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly lastEdit = new Map<string, number>();
  /** Tensor reads in flight, per document (see `settled`). */
  private readonly resolving = new Map<string, Promise<void>>();
  private readonly collection = vscode.languages.createDiagnosticCollection('attention-lens');
  private readonly analyzed = new vscode.EventEmitter<AnalyzedEvent>();
  readonly onDidAnalyze = this.analyzed.event;

  constructor(
    private readonly results: Results,
    private readonly log: vscode.LogOutputChannel,
    private readonly tensorFiles?: TensorReferenceFiles,
  ) {}

  /** The read of the document's current version (read now if it is not cached). */
  analyze(document: vscode.TextDocument): Analysis {
    const key = document.uri.toString();
    const cached = this.byUri.get(key);
    if (cached && cached.version === document.version) return cached;
    clear(this.readTimers, key);

    const started = performance.now();
    const parse = parseDocument(document.getText());
    const analysis = this.adopt(document, parse, started);
    if (this.tensorFiles && hasReferences(parse)) {
      const resolved = this.resolveTensors(document, analysis, this.tensorFiles);
      this.resolving.set(key, resolved);
      void resolved.finally(() => {
        if (this.resolving.get(key) === resolved) this.resolving.delete(key);
      });
    }
    return analysis;
  }

  /** Resolves once the tensors the current text loads have been read (at once when it loads none). */
  async settled(document: vscode.TextDocument): Promise<void> {
    this.analyze(document);
    await this.resolving.get(document.uri.toString());
  }

  /** Reads the tensors the text names (`X = np.load("acts.npy")`) in the worker, then adopts the
   * read with them, unless the document changed meanwhile. */
  private async resolveTensors(document: vscode.TextDocument, analysis: Analysis, files: TensorReferenceFiles): Promise<void> {
    const started = performance.now();
    const parse = await resolveReferences(analysis.parse, files.loaderFor(document));
    if (!document.isClosed && this.byUri.get(document.uri.toString()) === analysis) this.adopt(document, parse, started);
  }

  /** Makes `parse` the document's current read: specs, diagnostics, results, event. */
  private adopt(document: vscode.TextDocument, parse: ParseResult, started: number): Analysis {
    const key = document.uri.toString();
    const specs = parse.problems.map((problem) => buildSpec(problem));
    const diagnostics = [...parse.diagnostics, ...specs.flatMap((s) => s.diagnostics)];
    const analysis: Analysis = { version: document.version, parse, specs, diagnostics, readMs: performance.now() - started };
    this.byUri.set(key, analysis);
    this.log.debug(`read ${document.uri.fsPath}: ${parse.problems.length} problems in ${analysis.readMs.toFixed(1)} ms`);
    this.publish(document, diagnostics);

    // Earlier runs stay (by problem index) until new ones replace them, so no surface blanks out
    // while the user types; each run records the version it was computed from.
    const previous = this.results.get(key);
    const runs = parse.problems.map((_, index) => previous?.runs[index]);
    this.results.set({ uri: key, version: document.version, parse, runs });
    this.analyzed.fire({ document, analysis, hadRuns: previous?.runs.some(Boolean) ?? false });
    return analysis;
  }

  /** After an edit: read again now if reading is cheap, else once typing pauses. */
  edited(document: vscode.TextDocument): void {
    const key = document.uri.toString();
    this.lastEdit.set(key, performance.now());
    clear(this.readTimers, key);
    if ((this.byUri.get(key)?.readMs ?? Infinity) < CHEAP_READ_MS) {
      this.analyze(document);
      return;
    }
    const read = () => {
      this.readTimers.delete(key);
      if (!document.isClosed) this.analyze(document);
    };
    this.readTimers.set(key, setTimeout(read, readSettings(document.uri).debounceMs));
  }

  forget(document: vscode.TextDocument): void {
    const key = document.uri.toString();
    clear(this.readTimers, key);
    clear(this.publishTimers, key);
    this.lastEdit.delete(key);
    this.byUri.delete(key);
    this.collection.delete(document.uri);
    this.results.delete(key);
  }

  dispose(): void {
    for (const timers of [this.readTimers, this.publishTimers]) {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    }
    this.collection.dispose();
    this.analyzed.dispose();
  }

  private publish(document: vscode.TextDocument, diagnostics: Diagnostic[]): void {
    const key = document.uri.toString();
    clear(this.publishTimers, key);
    const quietFor = performance.now() - (this.lastEdit.get(key) ?? -Infinity);
    const wait = readSettings(document.uri).debounceMs - quietFor;
    const set = () => this.collection.set(document.uri, diagnostics.map(toVsDiagnostic));
    if (diagnostics.length === 0 || wait <= 0) {
      set();
      return;
    }
    this.publishTimers.set(
      key,
      setTimeout(() => {
        this.publishTimers.delete(key);
        if (!document.isClosed) set();
      }, wait),
    );
  }
}

function clear(timers: Map<string, ReturnType<typeof setTimeout>>, key: string): void {
  const timer = timers.get(key);
  if (timer !== undefined) clearTimeout(timer);
  timers.delete(key);
}

/** Reads open documents now, edited ones as they change, and forgets closed ones. */
export function registerAnalysis(
  context: vscode.ExtensionContext,
  results: Results,
  log: vscode.LogOutputChannel,
  tensorFiles?: TensorReferenceFiles,
): DocumentAnalyzer {
  const analyzer = new DocumentAnalyzer(results, log, tensorFiles);
  context.subscriptions.push(
    analyzer,
    vscode.workspace.onDidOpenTextDocument((document) => {
      if (isSupported(document)) analyzer.analyze(document);
    }),
    vscode.workspace.onDidChangeTextDocument((event) => {
      if (isSupported(event.document) && event.contentChanges.length > 0) analyzer.edited(event.document);
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
