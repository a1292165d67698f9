// The attention panel beside the editor (a WebviewPanel that survives restarts through its
// serializer) and the compact "Attention" view in the bottom panel area (a WebviewView), both
// following the problem under the cursor and updating when results change.
import * as vscode from 'vscode';
import { rangeContains } from '../core/location';
import type { Range } from '../core/types';
import { COMMANDS } from '../host/commandIds';
import { isDetachedUri } from '../host/debugUri';
import { readerPosition } from '../host/notebookCells';
import type { DocumentRun, Results } from '../host/results';
import { parsePanelState } from '../protocol';
import { WebviewSession, type DtypeRequest, type Log, type SessionDeps } from './session';

export const PANEL_VIEW_TYPE = 'attentionLens.panel';
export const BOTTOM_VIEW_ID = 'attentionLens.attentionView';

export interface PanelApi {
  /** Opens (or reveals) the panel beside the editor on this problem and head. */
  show(uri: vscode.Uri, problemIndex?: number, head?: number): void;
  /**
   * Before a run whose result the panel will show: makes the panel if there is none (true then),
   * so that its page loads while the run computes. Follow with `show`, even if the run is cancelled.
   */
  openForRun(uri: vscode.Uri, problemIndex?: number): boolean;
  /** The user picked a dtype in the panel: re-run that problem with it. */
  onDidRequestDtype: vscode.Event<DtypeRequest>;
  /** What the panel beside the editor shows, while it is open. */
  shownUri(): vscode.Uri | undefined;
}

interface Cursor {
  uri: vscode.Uri;
  problemIndex: number;
  head: number | undefined;
}

/** The problem (and per-head matrix, if any) under an editor's cursor. */
function cursorOf(editor: vscode.TextEditor, run: DocumentRun | undefined): Cursor | undefined {
  if (!run) return undefined;
  const position = readerPosition(editor.document, editor.selection.active);
  const contains = (range: Range) => rangeContains(range, { start: position, end: position });
  const problem = run.parse.problems.find((p) => contains(p.range));
  if (!problem) return undefined;
  const def = problem.matrices.find((m) => m.head !== undefined && contains(m.range));
  return { uri: editor.document.uri, problemIndex: problem.index, head: def?.head };
}

export function registerPanel(context: vscode.ExtensionContext, results: Results, engine: Pick<SessionDeps, 'regionOf' | 'variantsOf' | 'editedAt'>, log: Log = console): PanelApi {
  const dtypeRequests = new vscode.EventEmitter<DtypeRequest>();
  const deps: SessionDeps = { extensionUri: context.extensionUri, results, log, ...engine, onDtype: (request: DtypeRequest) => dtypeRequests.fire(request) };
  let panel: { webviewPanel: vscode.WebviewPanel; session: WebviewSession } | undefined;
  let bottom: WebviewSession | undefined;

  const adopt = (webviewPanel: vscode.WebviewPanel): WebviewSession => {
    const session = new WebviewSession(webviewPanel.webview, 'panel', deps, (title) => {
      webviewPanel.title = `Attention: ${title}`;
    });
    panel = { webviewPanel, session };
    webviewPanel.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'attention.svg');
    webviewPanel.onDidDispose(() => {
      session.dispose();
      if (panel?.session === session) panel = undefined;
    });
    return session;
  };

  const create = (): WebviewSession =>
    // Kept alive while hidden behind another editor: a page made again costs a second or more
    // (VS Code's webview service worker, plotly's 4.8 MB evaluated again) against nothing.
    adopt(vscode.window.createWebviewPanel(PANEL_VIEW_TYPE, 'Attention', { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, { retainContextWhenHidden: true }));

  const show = (uri: vscode.Uri, problemIndex = 0, head?: number) => {
    if (panel) panel.webviewPanel.reveal(panel.webviewPanel.viewColumn, true); // stays where the user put it
    (panel?.session ?? create()).show(uri, problemIndex, head);
  };

  /** Makes the panel, if there is none, as a run starts: its page loads while the run computes. */
  const openForRun = (uri: vscode.Uri, problemIndex = 0): boolean => {
    if (panel) return false;
    create().show(uri, problemIndex, undefined, true);
    return true;
  };

  context.subscriptions.push(
    dtypeRequests,
    { dispose: () => panel?.webviewPanel.dispose() },
    vscode.window.registerWebviewPanelSerializer(PANEL_VIEW_TYPE, {
      async deserializeWebviewPanel(webviewPanel: vscode.WebviewPanel, saved: unknown) {
        const session = adopt(webviewPanel);
        const state = parsePanelState(saved);
        if (!state?.uri) return;
        const uri = vscode.Uri.parse(state.uri);
        // A paused program's arrays went with its debug session, a model's head with its run: nothing to show again.
        if (isDetachedUri(uri)) return webviewPanel.dispose();
        session.show(uri, state.problemIndex);
        // After a restart nothing has run yet: compute what the panel showed before.
        if (!results.get(state.uri)?.runs[state.problemIndex]?.result) {
          void vscode.commands.executeCommand(COMMANDS.runProblem, uri, state.problemIndex).then(undefined, (error: unknown) => log.warn(`Attention panel: could not re-run after restore: ${String(error)}`));
        }
      },
    }),
    vscode.window.registerWebviewViewProvider(BOTTOM_VIEW_ID, {
      resolveWebviewView(view: vscode.WebviewView) {
        const session = new WebviewSession(view.webview, 'compact', deps);
        bottom = session;
        view.onDidDispose(() => {
          session.dispose();
          if (bottom === session) bottom = undefined;
        });
        const editor = vscode.window.activeTextEditor;
        const cursor = editor && cursorOf(editor, results.get(editor.document.uri.toString()));
        if (cursor) session.show(cursor.uri, cursor.problemIndex, cursor.head);
      },
    }),
    // Both surfaces follow the problem under the cursor; the bottom view also follows its head.
    vscode.window.onDidChangeTextEditorSelection(({ textEditor }) => {
      const cursor = cursorOf(textEditor, results.get(textEditor.document.uri.toString()));
      if (!cursor) return;
      const moved = (session: WebviewSession) =>
        session.uri?.toString() !== cursor.uri.toString() || session.problemIndex !== cursor.problemIndex;
      if (bottom && (moved(bottom) || cursor.head !== undefined)) bottom.show(cursor.uri, cursor.problemIndex, cursor.head);
      if (panel?.webviewPanel.visible && moved(panel.session)) panel.session.show(cursor.uri, cursor.problemIndex, cursor.head);
    }),
    results.onDidChange(({ uri }) => {
      for (const session of [panel?.session, bottom]) if (session?.uri?.toString() === uri) session.refresh();
    }),
  );
  return { show, openForRun, onDidRequestDtype: dtypeRequests.event, shownUri: () => panel?.session.uri };
}
