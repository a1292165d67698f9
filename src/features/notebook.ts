// Notebooks in VS Code's notebook editor. Each cell is a TextDocument of its own (scheme
// `vscode-notebook-cell`), but a problem may span cells, so a cell is read as part of its whole
// notebook: the cells in order, with the arrays their outputs printed (core/parse/notebook.ts),
// read in the worker as text documents are.
// Every cell of a notebook shares that one reading — positions carry the cell they are in — and
// the same entry in `Results`, so a run started from any cell shows in all of them. The surfaces
// place things with `rangeIn`/`lensPositionIn`: what lies in another cell is not shown here. Which
// cell a position is in: host/notebookCells.ts, shared with the panel.
import * as vscode from 'vscode';
import exampleNotebook from '../../examples/12-notebook.ipynb';
import type { NotebookCell } from '../core/parse/notebook';
import type { Diagnostic, Problem, Range } from '../core/types';
import type { WorkerReading } from '../protocol';
import type { AttentionWorker } from '../worker/client';
import type { Analysis, AnalyzedEvent } from './documentAnalysis';
import { cellOf, documentHolding } from '../host/notebookCells';
import type { Results } from '../host/results';
import { toVsDiagnostic } from './vsDiagnostic';
import { toVsRange } from './vsRange';

const STDOUT_MIME = 'application/vnd.code.notebook.stdout';
const TEXT_MIME = 'text/plain';

/**
 * Where a range the reader gave lies in this document, or undefined when it is elsewhere: in
 * another cell, or in an output (outputs are not text documents).
 */
export function rangeIn(document: vscode.TextDocument, range: Range): vscode.Range | undefined {
  const cell = range.start.cell === undefined ? undefined : cellOf(document);
  if (range.start.cell !== cell?.index || range.start.output !== undefined) return undefined;
  return toVsRange(range);
}

/** Where in this document a CodeLens for `range` goes: a printed array's on the last line of its
 * cell, just above the output. */
export function lensPositionIn(document: vscode.TextDocument, range: Range): vscode.Position | undefined {
  if (range.start.output !== undefined && range.start.cell === cellOf(document)?.index) return new vscode.Position(document.lineCount - 1, 0);
  return rangeIn(document, range)?.start;
}

/**
 * Where the lenses of a whole problem go in this document: at its start — and when that is in a
 * Markdown cell, which shows no CodeLens until it is edited, also above its first matrix in a
 * code cell.
 */
export function problemLensPositionIn(document: vscode.TextDocument, problem: Problem): vscode.Position | undefined {
  const start = lensPositionIn(document, problem.directiveRange ?? problem.range);
  const first = (problem.directiveRange ?? problem.range).start.cell;
  if (start || first === undefined) return start;
  const found = cellOf(document);
  if (!found || found.notebook.cellAt(first).kind !== vscode.NotebookCellKind.Markup) return undefined;
  const inCode = problem.matrices.find(({ nameRange }) => nameRange.start.cell !== undefined && found.notebook.cellAt(nameRange.start.cell).kind === vscode.NotebookCellKind.Code);
  return inCode && lensPositionIn(document, inCode.nameRange);
}

/** The text of a range the reader gave, from whichever cell of the notebook holds it. */
export function textAt(document: vscode.TextDocument, range: Range): string {
  return (documentHolding(document, range) ?? document).getText(toVsRange(range));
}

function decode(item: vscode.NotebookCellOutputItem): string {
  return new TextDecoder().decode(item.data);
}

/** A cell as the reader takes it: kind, text, and the text of its plain-text and stdout outputs. */
function readerCell(cell: vscode.NotebookCell): NotebookCell {
  const outputs: NotebookCell['outputs'] = [];
  for (const output of cell.outputs) {
    for (const item of output.items) {
      if (item.mime === STDOUT_MIME) outputs.push({ kind: 'stream', text: decode(item) });
      else if (item.mime === TEXT_MIME) outputs.push({ kind: 'result', text: decode(item) });
    }
  }
  return { kind: cell.kind === vscode.NotebookCellKind.Code ? 'code' : 'markdown', source: cell.document.getText(), outputs };
}

/**
 * Opens the user's copy of examples/12-notebook.ipynb, outputs included, in the notebook editor:
 * written to the extension's storage on first use (later edits to it are kept). Not an untitled
 * notebook: code-server 4.100 fails to back up an untitled notebook created with outputs.
 */
export async function openExampleNotebook(storage: vscode.Uri): Promise<vscode.NotebookEditor> {
  const copy = vscode.Uri.joinPath(storage, 'example-notebook.ipynb');
  const exists = await vscode.workspace.fs.stat(copy).then(
    () => true,
    () => false,
  );
  if (!exists) await vscode.workspace.fs.writeFile(copy, new TextEncoder().encode(exampleNotebook));
  return vscode.window.showNotebookDocument(await vscode.workspace.openNotebookDocument(copy));
}

interface NotebookReading {
  /** What the reading was made from: the notebook's version (cells, outputs) and each cell's text version. */
  signature: string;
  analysis: Analysis;
  cells: vscode.Uri[];
}

/** Reads notebooks (in the worker) for the DocumentAnalyzer, which hands it every cell document. */
export class NotebookAnalyzer implements vscode.Disposable {
  private readonly byNotebook = new Map<string, NotebookReading>();
  private readonly pending = new Map<string, { signature: string; analysis: Promise<Analysis> }>();
  private readonly collection = vscode.languages.createDiagnosticCollection('attention-lens-notebooks');
  private readonly subscriptions: vscode.Disposable[];
  /** Readings of every notebook are numbered in one sequence, so a newer one always has a larger version. */
  private readings = 0;

  constructor(
    private readonly results: Results,
    private readonly worker: AttentionWorker,
    private readonly analyzed: (event: AnalyzedEvent) => void,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.subscriptions = [
      this.collection,
      // Outputs changed (a cell ran) or cells came and went: read again.
      vscode.workspace.onDidChangeNotebookDocument(({ notebook, contentChanges, cellChanges }) => {
        const outputs = cellChanges.some((change) => change.outputs !== undefined);
        if ((contentChanges.length > 0 || outputs) && notebook.cellCount > 0) this.readInBackground(notebook);
      }),
      vscode.workspace.onDidOpenNotebookDocument((notebook) => {
        if (notebook.cellCount > 0) this.readInBackground(notebook);
      }),
      vscode.workspace.onDidCloseNotebookDocument((notebook) => this.forget(notebook)),
      // A run stored under one cell shows in every cell of its notebook.
      results.onDidChange(({ uri }) => this.share(uri)),
    ];
  }

  /** The last reading of the cell's notebook, of whatever version (undefined before the first). */
  latest(document: vscode.TextDocument): Analysis | undefined {
    const found = cellOf(document);
    return found && this.byNotebook.get(found.notebook.uri.toString())?.analysis;
  }

  /**
   * The reading of the cell's notebook as it is now: the cached one, the one on its way, or a new
   * one from the worker when a cell or an output changed. A cell whose notebook is not open yet
   * reads as empty (not as a text of its own: its notebook is read when it opens).
   */
  read(document: vscode.TextDocument): Promise<Analysis> {
    const found = cellOf(document);
    if (!found) return Promise.resolve({ version: 0, parse: { problems: [], diagnostics: [] }, specs: [], diagnostics: [], statistics: [], readMs: 0 });
    const key = found.notebook.uri.toString();
    const cells = found.notebook.getCells();
    const signature = `${found.notebook.version}:${cells.map((cell) => cell.document.version).join(',')}`;
    const cached = this.byNotebook.get(key);
    if (cached?.signature === signature) return Promise.resolve(cached.analysis);
    const pending = this.pending.get(key);
    if (pending?.signature === signature) return pending.analysis;
    const analysis = this.worker
      .readCells(cells.map(readerCell))
      .then((reading) => this.adopt(document, found.notebook, signature, cells, reading))
      .finally(() => {
        if (this.pending.get(key)?.analysis === analysis) this.pending.delete(key);
      });
    this.pending.set(key, { signature, analysis });
    return analysis;
  }

  private readInBackground(notebook: vscode.NotebookDocument): void {
    this.read(notebook.cellAt(0).document).catch((error: unknown) => this.log.warn(`could not read ${notebook.uri.fsPath}: ${String(error)}`));
  }

  /** Keeps a reading, publishes its diagnostics on each cell and gives every cell its entry in `Results`. */
  private adopt(document: vscode.TextDocument, notebook: vscode.NotebookDocument, signature: string, cells: vscode.NotebookCell[], { parse, specs, statistics, readMs }: WorkerReading): Analysis {
    const diagnostics = [...parse.diagnostics, ...specs.flatMap((s) => s.diagnostics)];
    const analysis: Analysis = { version: ++this.readings, parse, specs, diagnostics, statistics, readMs };
    if (notebook.isClosed) return analysis;
    const key = notebook.uri.toString();
    const uris = cells.map((cell) => cell.document.uri);
    const before = this.byNotebook.get(key);
    this.byNotebook.set(key, { signature, analysis, cells: uris });
    this.publish(cells, diagnostics);

    // Earlier runs stay (by problem index) until new ones replace them, as in a text document.
    const previous = this.results.get(document.uri.toString());
    const runs = parse.problems.map((_, index) => previous?.runs[index]);
    for (const uri of before?.cells ?? []) if (!uris.some((kept) => kept.toString() === uri.toString())) this.results.delete(uri.toString());
    for (const uri of uris) this.results.set({ uri: uri.toString(), version: analysis.version, parse, runs });
    this.analyzed({ document, analysis, hadRuns: previous?.runs.some(Boolean) ?? false });
    return analysis;
  }

  forget(notebook: vscode.NotebookDocument): void {
    const reading = this.byNotebook.get(notebook.uri.toString());
    this.byNotebook.delete(notebook.uri.toString());
    for (const uri of reading?.cells ?? []) {
      this.collection.delete(uri);
      this.results.delete(uri.toString());
    }
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
  }

  /** Each diagnostic on its cell; one about a printed array on the last line of its cell. */
  private publish(cells: vscode.NotebookCell[], diagnostics: Diagnostic[]): void {
    const byCell = cells.map(() => [] as vscode.Diagnostic[]);
    for (const diagnostic of diagnostics) {
      const { cell, output } = diagnostic.range.start;
      if (cell === undefined || !cells[cell]) continue;
      const document = cells[cell].document;
      if (output === undefined) byCell[cell].push(toVsDiagnostic(diagnostic));
      else byCell[cell].push(toVsDiagnostic({ ...diagnostic, message: `In the printed output: ${diagnostic.message}` }, document.lineAt(document.lineCount - 1).range));
    }
    cells.forEach((cell, index) => this.collection.set(cell.document.uri, byCell[index]));
  }

  /** Copies the runs stored under one cell to the other cells of its notebook. */
  private share(uri: string): void {
    const run = this.results.get(uri);
    if (!run) return;
    for (const reading of this.byNotebook.values()) {
      if (!reading.cells.some((cell) => cell.toString() === uri)) continue;
      for (const cell of reading.cells) {
        const other = this.results.get(cell.toString());
        if (other && other.runs !== run.runs && other.version === run.version) this.results.set({ ...other, runs: run.runs });
      }
    }
  }
}
