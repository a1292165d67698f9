// One webview showing Attention Lens data — the panel beside the editor or the bottom view — and
// the host's side of its messages. Every message is validated first; a malformed one is logged
// and dropped.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AttentionSpec, Matrix } from '../core/types';
import { parseWebviewMessage, type DeferredViews, type HostToWebview, type VariantsAnswer, type VariantsQuery, type MatrixView, type PanelState, type Region, type ResultView, type ViewRef, type WebviewToHost } from '../protocol';
import { renderReportHtml } from '../report/standaloneHtml';
import { COMMANDS } from '../host/commandIds';
import { isDetachedUri } from '../host/debugUri';
import { documentHolding } from '../host/notebookCells';
import type { DocumentRun, Results } from '../host/results';
import { deferOffScreen, sameLayout } from '../views/deferral';
import { heldBackWithoutRuledNumbers, withoutRuledNumbers } from '../views/derived';
import { newNonce, panelHtml, type WebviewMode } from '../views/html';
import { labelsOf, matrixExportText } from '../views/matrixExport';
import { matrixOf } from '../views/matrixKeys';
import { viewOf } from '../views/matrixView';
import { panelDataOf } from '../views/model';
import { sourceRanges } from './reveal';

export interface Log {
  info(message: string): void;
  warn(message: string): void;
}

export interface DtypeRequest {
  uri: vscode.Uri;
  problemIndex: number;
  dtype: 'float64' | 'float32';
}

export interface SessionDeps {
  extensionUri: vscode.Uri;
  results: Results;
  log: Log;
  onDtype(request: DtypeRequest): void;
  /** A region of a matrix on shared memory, pooled in the engine worker. */
  regionOf: RegionPooler;
  variantsOf: VariantsComputer;
  /** When the extension host was told of the document's last edit (performance.timeOrigin + now). */
  editedAt(uri: string): number | undefined;
}

export type RegionPooler = (matrix: Matrix, region: Region) => Promise<MatrixView>;

/** A larger problem's Variants views of one head, or one query tile's walk, computed in the worker. */
export type VariantsComputer = (spec: AttentionSpec, query: VariantsQuery, output?: Matrix) => Promise<VariantsAnswer>;

/** The webview options both surfaces use: scripts on, resources only from dist/ and media/. */
function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist'), vscode.Uri.joinPath(extensionUri, 'media')],
  };
}

export class WebviewSession implements vscode.Disposable {
  uri: vscode.Uri | undefined;
  problemIndex = 0;
  /** Head to show when the next data goes out (the bottom view follows the cursor's head). */
  focusHead: number | undefined;
  state: PanelState | undefined;
  /** What the page shows now: a refresh that would send the same result again sends only
   * whether it is out of date (a keystroke must not re-send and redraw every matrix). `since`:
   * the number of the first data post of this problem. */
  private shown: { key: string; result: ResultView | undefined; since: number } | undefined;
  /** Data posts so far: each is numbered, for the views it holds back. */
  private updates = 0;
  /** The heatmaps the page last said were on screen, after drawing update `update`. */
  private onScreen: { update: number; views: ViewRef[] } | undefined;
  /** The views the last update held back (views/deferral.ts), until the page asks for them. */
  private deferred: { update: number; views: DeferredViews } | undefined;
  /** How many times a page of this webview has said 'ready'. */
  private pageLoads = 0;
  /** The problem's run was started with the panel and has not ended yet. */
  private computing = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    readonly webview: vscode.Webview,
    readonly mode: WebviewMode,
    private readonly deps: SessionDeps,
    /** Told the title of each problem shown (the panel's tab shows it). */
    private readonly onTitle: (title: string) => void = () => {},
  ) {
    webview.options = webviewOptions(deps.extensionUri);
    const { script, css } = inlineAssets(deps.extensionUri);
    webview.html = panelHtml({
      cspSource: webview.cspSource,
      script,
      css,
      assetsUri: `${webview.asWebviewUri(vscode.Uri.joinPath(deps.extensionUri, 'dist', 'panel')).toString()}/`,
      nonce: newNonce(),
      mode,
      title: 'Attention',
    });
    this.disposables.push(webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)));
  }

  /**
   * Shows this problem (and head) of this document (posted at once: VS Code hands a page that is
   * still loading what was posted when it has loaded). `computing`: its run has started (the page,
   * made while it computes, says so until it ends).
   */
  show(uri: vscode.Uri, problemIndex: number, head?: number, computing = false): void {
    this.uri = uri;
    this.problemIndex = problemIndex;
    this.focusHead = head;
    this.computing = computing;
    this.refresh();
  }

  refresh(): void {
    if (!this.uri) return;
    const run = this.deps.results.get(this.uri.toString());
    const problems = run?.parse.problems ?? [];
    const problemRun = run?.runs[this.problemIndex];
    const data = panelDataOf({
      uri: this.uri.toString(),
      fileName: path.basename(this.uri.path),
      problems,
      problemIndex: Math.min(this.problemIndex, Math.max(0, problems.length - 1)),
      result: problemRun?.result,
      message: problemRun?.error ?? (run || this.computing ? undefined : 'This file has not been read yet: run attention on it.'),
      computing: this.computing,
    });
    const stale = run && problemRun?.result && problemRun.version !== run.version ? staleReason(run) : undefined;
    this.onTitle(data.title);
    const key = JSON.stringify([data.uri, data.problemIndex, data.title, data.problems, data.message]);
    if (this.focusHead === undefined && this.shown?.key === key && this.shown.result === data.result) {
      this.post({ type: 'stale', ...(stale ? { stale } : {}) });
      return;
    }
    const update = ++this.updates;
    const since = this.shown?.key === key ? this.shown.since : update;
    const split = this.withoutOffScreenViews(data.result, update, since);
    const posted = split && withoutRuledNumbers(split);
    this.shown = { key, result: data.result, since };
    const editedAt = this.deps.editedAt(this.uri.toString());
    const timing = problemRun?.result && {
      ...(editedAt !== undefined ? { editedAt } : {}),
      sentAt: performance.timeOrigin + performance.now(),
      workerMs: problemRun.elapsedMs,
      computeMs: problemRun.result.elapsedMs,
    };
    this.post({
      type: 'data',
      data: { ...data, ...(posted ? { result: posted } : {}), ...(stale ? { stale } : {}), ...(timing ? { timing } : {}) },
      update,
      ...(this.focusHead !== undefined ? { focusHead: this.focusHead } : {}),
    });
    this.focusHead = undefined;
  }

  /**
   * A new result of the problem the page shows, or of another laid out alike (a model run's next
   * head: at 512 tokens its first post was 11.5 MB), with the large views of heatmaps off screen
   * held back (the page keeps its own there, marked out of date, and asks for these once it has
   * drawn).
   */
  private withoutOffScreenViews(result: ResultView | undefined, update: number, since: number): ResultView | undefined {
    this.deferred = undefined;
    const held = this.shown?.result;
    if (!result || !held || !this.onScreen) return result;
    // The page's report of its screen holds for this problem since it was first shown, or for any result laid out as the one it reported on.
    if (this.onScreen.update < since && !(this.onScreen.update === update - 1 && sameLayout(result, held))) return result;
    const split = deferOffScreen(result, held, this.onScreen.views);
    if (split.deferred.length > 0) this.deferred = { update, views: split.deferred };
    return split.update;
  }

  private post(message: HostToWebview): void {
    void this.webview.postMessage(message);
  }

  private receive(raw: unknown): void {
    const message = parseWebviewMessage(raw);
    if (!message) {
      this.deps.log.warn(`Attention panel: ignored a malformed message from the webview: ${JSON.stringify(raw)?.slice(0, 200)}`);
      return;
    }
    void this.handle(message).catch((error: unknown) => {
      this.deps.log.warn(`Attention panel: ${message.type} failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  private current() {
    if (!this.uri) return undefined;
    const run = this.deps.results.get(this.uri.toString());
    const problemRun = run?.runs[this.problemIndex];
    return problemRun?.result ? { uri: this.uri, problem: problemRun.problem, result: problemRun.result } : undefined;
  }

  /**
   * A fast result's matrix is on shared memory: the worker pools it without a copy, and the host's
   * event loop stays free. The reference engine's matrices were moved into the host's own memory
   * with their result; posting one back would copy it whole, so it is pooled here.
   */
  private regionOf(matrix: Matrix, region: Region): Promise<MatrixView> {
    return matrix.data.buffer instanceof SharedArrayBuffer ? this.deps.regionOf(matrix, region) : Promise.resolve(viewOf(matrix, region));
  }

  private async handle(message: WebviewToHost): Promise<void> {
    switch (message.type) {
      case 'ready':
        // What was posted before a new panel's first page said 'ready' waited for that page (VS
        // Code delivers it once the page has loaded: the data travels while the page loads). A
        // page loaded again after that shows nothing yet.
        if (++this.pageLoads === 1 && this.shown) return;
        this.shown = undefined;
        this.onScreen = undefined;
        return this.refresh();
      case 'state':
        this.state = message.state;
        return;
      case 'onScreen':
        this.onScreen = { update: message.update, views: message.views };
        return;
      case 'requestDeferred': {
        const deferred = this.deferred;
        if (deferred?.update !== message.update) return; // superseded: the newer update is on its way
        this.deferred = undefined;
        return this.post({ type: 'deferredViews', update: deferred.update, views: heldBackWithoutRuledNumbers(deferred.views) });
      }
      case 'selectProblem':
        this.problemIndex = message.problemIndex;
        return this.refresh();
      case 'run':
        if (this.uri) await vscode.commands.executeCommand(COMMANDS.runProblem, this.uri, message.problemIndex);
        return;
      case 'setDtype':
        if (this.uri) this.deps.onDtype({ uri: this.uri, problemIndex: this.problemIndex, dtype: message.dtype });
        return;
      case 'reveal':
        return this.reveal(message);
      case 'requestRegion': {
        const shown = this.current();
        const matrix = shown && message.problemIndex === this.problemIndex ? matrixOf(shown.result, shown.problem, message.head, message.matrix) : undefined;
        const { rowStart, rowEnd, colStart, colEnd } = message;
        return this.post({ type: 'region', requestId: message.requestId, view: matrix ? await this.regionOf(matrix, { rowStart, rowEnd, colStart, colEnd }) : null });
      }
      case 'requestVariants':
        return this.post({ type: 'variants', requestId: message.requestId, ...(await this.variantsOf(message)) });
      case 'export': {
        const bytes = message.base64 !== undefined ? Buffer.from(message.base64, 'base64') : new TextEncoder().encode(message.text ?? '');
        return this.save(message.fileName, bytes, message.format === 'png' ? { 'PNG image': ['png'] } : { 'SVG image': ['svg'] });
      }
      case 'exportMatrix': {
        const shown = this.current();
        const matrix = shown && matrixOf(shown.result, shown.problem, message.head, message.matrix);
        if (!shown || !matrix) return;
        const labels = labelsOf(message.matrix, matrix.rows, matrix.cols, shown.problem.tokens, shown.problem.keyTokens);
        const name = `problem${this.problemIndex + 1}-head${message.head + 1}-${message.matrix}`;
        const text = matrixExportText(message.format, name, matrix, labels);
        return this.save(`${name}.${message.format}`, new TextEncoder().encode(text), message.format === 'csv' ? { CSV: ['csv'] } : { JSON: ['json'] });
      }
      case 'exportHtml': {
        const shown = this.current();
        if (!shown) return;
        const read = async (file: string) => new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(this.deps.extensionUri, file)));
        const [script, css] = await Promise.all([read('dist/webview.js'), read('media/panel.css')]);
        const html = renderReportHtml([{ problem: shown.problem, result: shown.result }], { script, css });
        return this.save(`${path.basename(shown.uri.path).replace(/\.[^.]*$/, '')}.attention.html`, new TextEncoder().encode(html), { HTML: ['html'] });
      }
    }
  }

  /** The worker's answer to the page, or why there is none (the worker says which heads and tiles exist). */
  private async variantsOf(message: Extract<WebviewToHost, { type: 'requestVariants' }>): Promise<{ answer: VariantsAnswer } | { error: string }> {
    const problemRun = this.uri && message.problemIndex === this.problemIndex ? this.deps.results.get(this.uri.toString())?.runs[this.problemIndex] : undefined;
    if (!problemRun?.result?.heads.length || !problemRun.spec) return { error: 'This problem has no result to explain: run it first.' };
    const output = message.query.kind === 'flash' ? problemRun.result.heads[message.query.head]?.output : undefined;
    try {
      return { answer: await this.deps.variantsOf(problemRun.spec, message.query, output) };
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Webviews cannot download: the host asks where to save and writes the bytes. */
  private async save(fileName: string, bytes: Uint8Array, filters: Record<string, string[]>): Promise<void> {
    const folder = this.uri && !isDetachedUri(this.uri) ? vscode.Uri.joinPath(this.uri, '..') : vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({
      ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, fileName) } : {}),
      filters,
      title: 'Attention: save export',
    });
    if (!target) return;
    await vscode.workspace.fs.writeFile(target, bytes);
    this.deps.log.info(`Attention panel: wrote ${target.fsPath}`);
  }

  private async reveal(cell: Extract<WebviewToHost, { type: 'reveal' }>): Promise<void> {
    const problemRun = this.uri && this.deps.results.get(this.uri.toString())?.runs[cell.problemIndex];
    if (!this.uri || !problemRun || isDetachedUri(this.uri)) return; // arrays read from a debugger have no text
    // A problem read from a tensor file has no text to reveal.
    if (problemRun.problem.matrices.every((def) => def.source)) return;
    const document = await vscode.workspace.openTextDocument(this.uri);
    const found = sourceRanges((def) => documentHolding(document, def.range), problemRun.problem, { key: cell.matrix, head: cell.head, row: cell.row, col: cell.col });
    if (found.length === 0) return;
    // In a notebook the query's row and a key's row may lie in different cells: select in the first.
    const target = found[0].document;
    const ranges = found.filter((place) => place.document === target).map((place) => place.range);
    const visible = vscode.window.visibleTextEditors.find((editor) => editor.document === target);
    const editor = await vscode.window.showTextDocument(target, { viewColumn: visible?.viewColumn ?? vscode.ViewColumn.One, preserveFocus: false });
    editor.selections = ranges.map((range) => new vscode.Selection(range.start, range.end));
    editor.revealRange(ranges[0], vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  dispose(): void {
    for (const disposable of this.disposables) disposable.dispose();
  }
}

/**
 * The first-paint script and the style sheet, read once (≈ 60 kB): inlined into each page, they
 * spare it two resource requests through the webview's service worker — the most of a cold start
 * that is ours to save. The extension's files are local to its host, so a synchronous read of a
 * few kB once per session is cheaper than making every page wait for an async one.
 */
let inlined: { script: string; css: string } | undefined;
function inlineAssets(extensionUri: vscode.Uri): { script: string; css: string } {
  inlined ??= {
    script: readFileSync(path.join(extensionUri.fsPath, 'dist', 'panel', 'main.js'), 'utf8'),
    css: readFileSync(path.join(extensionUri.fsPath, 'media', 'panel.css'), 'utf8'),
  };
  return inlined;
}

/** Why a result is out of date: the reader's first error, where it is, or a run still going. */
function staleReason(run: DocumentRun): string {
  const error = run.parse.diagnostics.find((diagnostic) => diagnostic.severity === 'error');
  if (!error) return 'the text has changed since this result (it has an error, see Problems, or is still being computed).';
  return `line ${error.range.start.line + 1}: ${error.message}`;
}
