// Reads every supported document in the worker (parse → spec; the extension host only sends the
// text and keeps the reading), publishes its diagnostics in the Problems panel and stores the read
// in `Results`. The host never reads, copies or posts a whole large document in one turn of its
// event loop: the text goes to the worker once, in slices cut one per turn, and after that only
// as the edits the user makes. The reading comes back with its large matrices on shared memory,
// so CodeLens, hovers and runs use it at once and no large matrix is copied.
//
// While the user types: a document that reads cheaply is read again at once (so live update can
// follow within milliseconds); an expensive one after the delay readDelay.ts chooses. Errors appear
// only once typing has paused for `debounceMs` — half-typed numbers do not flash red — while a
// fix clears them at once.
import * as vscode from 'vscode';
import type { Diagnostic } from '../core/types';
import * as path from 'node:path';
import type { TextChange, WorkerReading } from '../protocol';
import type { AttentionWorker } from '../worker/client';
import type { Analysis, AnalyzedEvent } from './documentAnalysis';
import { isSupported } from './languages';
import { CELL_SCHEME } from '../host/notebookCells';
import { NotebookAnalyzer } from './notebook';
import type { Results } from '../host/results';
import { readDelayMs, readSettings, SECTION } from './settings';
import { TensorReferenceWatcher } from './tensorReferences';
import { toVsDiagnostic } from './vsDiagnostic';

/** Characters of text per slice sent to the worker: cutting and posting one takes about 1 ms. */
const SLICE_CHARS = 2 ** 20;

export class DocumentAnalyzer implements vscode.Disposable {
  private readonly byUri = new Map<string, Analysis>();
  private readonly reading = new Map<string, { version: number; analysis: Promise<Analysis> }>();
  /** The worker's copy of each document: its text at `version`, held by worker `generation`. */
  private readonly copies = new Map<string, { generation: number; version: number }>();
  /** Edits made since the worker's copy, sent with the next read. */
  private readonly unsent = new Map<string, { version: number; changes: TextChange[] }[]>();
  private readonly readTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly publishTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly lastEdit = new Map<string, number>();
  private readonly collection = vscode.languages.createDiagnosticCollection('attention-lens');
  private readonly analyzed = new vscode.EventEmitter<AnalyzedEvent>();
  readonly onDidAnalyze = this.analyzed.event;
  /** A notebook cell is read with its whole notebook. */
  private readonly notebooks: NotebookAnalyzer;
  /** Watches the tensor files texts load (`X = np.load("acts.npy")`, read in the worker). */
  private readonly tensorFiles: TensorReferenceWatcher;

  constructor(
    private readonly results: Results,
    private readonly worker: AttentionWorker,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.notebooks = new NotebookAnalyzer(results, worker, (event) => this.analyzed.fire(event), log);
    this.tensorFiles = new TensorReferenceWatcher((uri) => {
      const document = vscode.workspace.textDocuments.find((open) => open.uri.toString() === uri);
      if (document) this.reread(document);
    });
  }

  /** When the document's last edit reached the extension host (performance.timeOrigin + now). */
  editedAt(uri: string): number | undefined {
    const at = this.lastEdit.get(uri);
    return at === undefined ? undefined : performance.timeOrigin + at;
  }

  /** The last reading of the document, of whatever version (undefined before the first). */
  latest(document: vscode.TextDocument): Analysis | undefined {
    if (document.uri.scheme === CELL_SCHEME) return this.notebooks.latest(document);
    return this.byUri.get(document.uri.toString());
  }

  /** The reading of the document's current version: the cached one, or read now. */
  read(document: vscode.TextDocument): Promise<Analysis> {
    if (document.uri.scheme === CELL_SCHEME) return this.notebooks.read(document);
    const key = document.uri.toString();
    const cached = this.byUri.get(key);
    if (cached && cached.version === document.version) return Promise.resolve(cached);
    const pending = this.reading.get(key);
    if (pending && pending.version === document.version) return pending.analysis;
    clear(this.readTimers, key);
    const analysis = this.readNow(document).finally(() => {
      if (this.reading.get(key)?.analysis === analysis) this.reading.delete(key);
    });
    this.reading.set(key, { version: document.version, analysis });
    return analysis;
  }

  /** After an edit: keep it for the worker's copy; read again now if reading is cheap, else once
   * typing pauses. */
  edited({ document, contentChanges }: vscode.TextDocumentChangeEvent): void {
    const key = document.uri.toString();
    const changes = contentChanges.map((change) => ({ offset: change.rangeOffset, length: change.rangeLength, text: change.text }));
    this.unsent.get(key)?.push({ version: document.version, changes });
    this.lastEdit.set(key, performance.now());
    clear(this.readTimers, key);
    const delay = readDelayMs(document.uri, this.byUri.get(key)?.readMs);
    if (delay === 0) {
      this.readInBackground(document);
      return;
    }
    const read = () => {
      this.readTimers.delete(key);
      if (!document.isClosed) this.readInBackground(document);
    };
    this.readTimers.set(key, setTimeout(read, delay));
  }

  /** Reads the document again though its text has not changed (a setting that changes what is
   * read, such as attentionLens.maxFileMB). */
  reread(document: vscode.TextDocument): void {
    const key = document.uri.toString();
    this.byUri.delete(key);
    this.reading.delete(key);
    this.readInBackground(document);
  }

  /** A read nobody awaits (opening, typing): its outcome reaches the surfaces through `Results`. */
  readInBackground(document: vscode.TextDocument): void {
    this.read(document).catch((error: unknown) => {
      if (!document.isClosed) this.log.warn(`could not read ${document.uri.fsPath}: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  /** Whether anything is kept under the document's URI (a reading, results). */
  holds(document: vscode.TextDocument): boolean {
    const key = document.uri.toString();
    return this.byUri.has(key) || this.reading.has(key) || this.results.get(key) !== undefined;
  }

  forget(document: vscode.TextDocument): void {
    const key = document.uri.toString();
    if (this.results.get(key)?.runs.some(Boolean)) this.log.info(`closed ${document.uri.fsPath}: its results are dropped`);
    clear(this.readTimers, key);
    clear(this.publishTimers, key);
    this.lastEdit.delete(key);
    this.byUri.delete(key);
    this.reading.delete(key);
    this.copies.delete(key);
    this.unsent.delete(key);
    this.worker.forgetDocument(key);
    this.tensorFiles.watch(key, []);
    this.collection.delete(document.uri);
    this.results.delete(key);
  }

  dispose(): void {
    for (const timers of [this.readTimers, this.publishTimers]) {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    }
    this.collection.dispose();
    this.tensorFiles.dispose();
    this.notebooks.dispose();
    this.analyzed.dispose();
  }

  private async readNow(document: vscode.TextDocument): Promise<Analysis> {
    const key = document.uri.toString();
    const version = document.version;
    const settings = readSettings(document.uri);
    const maxChars = settings.maxFileMB * 2 ** 20;
    const tensors = { folder: path.dirname(document.uri.fsPath), maxElements: settings.maxMatrixElements };
    // Twice at most: a worker that restarted (or missed an edit) answers null, and gets the text.
    for (let attempt = 0; attempt < 2; attempt++) {
      if (!(await this.sendCopy(document))) return this.read(document);
      const reading = await this.worker.read(key, version, maxChars, tensors);
      if (reading) return this.adopt(document, version, reading);
      // Edited meanwhile (a settings file VS Code writes twice in a row): the newer version is what to read.
      if (!document.isClosed && document.version !== version) return this.read(document);
      this.copies.delete(key);
    }
    throw new Error('the worker lost the text twice');
  }

  /**
   * Brings the worker's copy of the document to its current version: the edits made since, or
   * else the whole text in slices. False when the document changed meanwhile (read that instead).
   */
  private async sendCopy(document: vscode.TextDocument): Promise<boolean> {
    if (document.isClosed) throw new Error('the document was closed');
    const key = document.uri.toString();
    const version = document.version;
    const copy = this.copies.get(key);
    const held = copy !== undefined && copy.generation === this.worker.generation;
    if (held && copy.version === version) return true;
    const edits = this.unsent.get(key) ?? [];
    if (held && edits.length > 0 && edits[edits.length - 1].version === version) {
      this.worker.sendEdits(key, copy.version, version, edits.flatMap((edit) => edit.changes));
    } else {
      this.copies.delete(key);
      if (!(await this.sendText(document))) return false;
    }
    this.copies.set(key, { generation: this.worker.generation, version });
    this.unsent.set(key, []);
    return true;
  }

  /** The whole text, a slice of whole lines (or of one long line) per turn of the event loop. */
  private async sendText(document: vscode.TextDocument): Promise<boolean> {
    const key = document.uri.toString();
    const version = document.version;
    const end = document.lineAt(document.lineCount - 1).range.end;
    let from = new vscode.Position(0, 0);
    for (;;) {
      if (document.isClosed || document.version !== version) return false;
      const offset = document.offsetAt(from);
      let to = document.positionAt(offset + SLICE_CHARS);
      if (to.line > from.line && !to.isEqual(end)) to = new vscode.Position(to.line, 0);
      this.worker.sendText(key, version, offset, document.getText(new vscode.Range(from, to)));
      if (to.isEqual(end)) return true;
      from = to;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private adopt(document: vscode.TextDocument, version: number, { parse, specs, statistics, readMs, tensorFiles }: WorkerReading): Analysis {
    const key = document.uri.toString();
    const diagnostics = [...parse.diagnostics, ...specs.flatMap((s) => s.diagnostics)];
    const analysis: Analysis = { version, parse, specs, diagnostics, statistics, readMs };
    const current = this.byUri.get(key);
    if (document.isClosed || (current && current.version > version)) return analysis;
    this.byUri.set(key, analysis);
    this.tensorFiles.watch(key, tensorFiles ?? []);
    this.log.debug(`read ${document.uri.fsPath}: ${parse.problems.length} problems in ${readMs.toFixed(1)} ms (worker)`);
    this.publish(document, diagnostics);

    // Earlier runs stay (by problem index) until new ones replace them, so no surface blanks out
    // while the user types; each run records the version it was computed from.
    const previous = this.results.get(key);
    const runs = parse.problems.map((_, index) => previous?.runs[index]);
    this.results.set({ uri: key, version, parse, runs });
    this.analyzed.fire({ document, analysis, hadRuns: previous?.runs.some(Boolean) ?? false });
    return analysis;
  }

  private publish(document: vscode.TextDocument, diagnostics: Diagnostic[]): void {
    const key = document.uri.toString();
    clear(this.publishTimers, key);
    const quietFor = performance.now() - (this.lastEdit.get(key) ?? -Infinity);
    const wait = readSettings(document.uri).debounceMs - quietFor;
    const set = () => this.collection.set(document.uri, diagnostics.map((diagnostic) => toVsDiagnostic(diagnostic)));
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
  worker: AttentionWorker,
  log: vscode.LogOutputChannel,
): DocumentAnalyzer {
  const analyzer = new DocumentAnalyzer(results, worker, log);
  context.subscriptions.push(
    analyzer,
    vscode.workspace.onDidOpenTextDocument((document) => {
      // A new document under a URI seen before (an untitled note closed, then another opened: both
      // Untitled-1 at version 1) must not be answered from the old one's reading.
      if (analyzer.holds(document)) analyzer.forget(document);
      if (isSupported(document)) analyzer.readInBackground(document);
    }),
    vscode.workspace.onDidChangeTextDocument((event) => {
      if (isSupported(event.document) && event.contentChanges.length > 0) analyzer.edited(event);
    }),
    // Unless another document under that URI is open by now (its close told late): that one's reading stays.
    vscode.workspace.onDidCloseTextDocument((document) => {
      if (!vscode.workspace.textDocuments.some((open) => open !== document && open.uri.toString() === document.uri.toString())) analyzer.forget(document);
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      for (const document of vscode.workspace.textDocuments) {
        if (isSupported(document) && event.affectsConfiguration(`${SECTION}.maxFileMB`, document.uri)) analyzer.reread(document);
      }
    }),
  );
  // Documents already open when the extension activates are read after activation returns.
  const initial = setTimeout(() => {
    for (const document of vscode.workspace.textDocuments) if (isSupported(document)) analyzer.readInBackground(document);
  }, 0);
  context.subscriptions.push({ dispose: () => clearTimeout(initial) });
  return analyzer;
}
