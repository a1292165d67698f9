// Where the user is, for the palette's commands: the editor or page that has the focus, else the
// last one that had it. A heads page has no text editor behind it, so VS Code's activeTextEditor is
// undefined while it is focused; each page tells this module what it shows (a saved file, a run
// problem of a document, a model run), and the commands act on that (features/commands.ts,
// features/heads.ts, features/models.ts).
import * as vscode from 'vscode';
import { isSupported } from './languages';
import { activeTensorFile } from './tensorFile';

/** What a page or editor shows: a text document (a problem of it when known), a saved
 * attentions file, or a model run the worker holds. */
export type Place =
  | { kind: 'document'; uri: vscode.Uri; problem?: number }
  | { kind: 'saved'; uri: vscode.Uri }
  /** `run` is undefined while the run that makes the page is still running. */
  | { kind: 'model'; folder: string; run?: number };

/** A heads page, as the commands can act on it. */
export interface HeadsPlace {
  panel: vscode.WebviewPanel;
  place: Place;
  /** The head last opened on it (a model run's `Show Heatmap Panel` opens that one). */
  openedHead?: { layer: number; head: number };
  /** Saves the page's standalone HTML report to `target` (asked for when not given). */
  exportReport(target?: vscode.Uri): Promise<vscode.Uri | undefined>;
}

const pages = new Set<HeadsPlace>();
let last: Place | undefined;
let lastPage: HeadsPlace | undefined;

/** Follows the active editor: call once on activation. */
export function trackPlaces(context: vscode.ExtensionContext): void {
  const note = () => {
    const editor = vscode.window.activeTextEditor;
    if (editor && isSupported(editor.document)) last = { kind: 'document', uri: editor.document.uri };
    const tensor = activeTensorFile();
    if (tensor && /\.(pt|pth|safetensors|npy|npz)$/i.test(tensor.path)) last = { kind: 'saved', uri: tensor };
  };
  context.subscriptions.push(vscode.window.onDidChangeActiveTextEditor(note), vscode.window.tabGroups.onDidChangeTabs(note));
  note();
}

/** A heads page from its making to its closing: focused, it is where the commands act. */
export function addHeadsPlace(entry: HeadsPlace): vscode.Disposable {
  pages.add(entry);
  const focused = () => {
    if (!entry.panel.active) return;
    last = entry.place;
    lastPage = entry;
  };
  focused();
  const watching = entry.panel.onDidChangeViewState(focused);
  return {
    dispose() {
      watching.dispose();
      pages.delete(entry);
      if (lastPage === entry) lastPage = undefined;
      if (last === entry.place) last = undefined;
    },
  };
}

/** A heads page's source, once known (a model run's page is made before the run ends). */
export function settleHeadsPlace(entry: HeadsPlace, place: Place): void {
  entry.place = place;
  if (entry.panel.active || lastPage === entry) last = place;
}

/** The heads page that has the focus now: the active tab, a webview of that title (a panel's
 * `active` alone stays true for the front page of every editor group). */
export function focusedHeadsPage(): HeadsPlace | undefined {
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  if (!(tab?.input instanceof vscode.TabInputWebview)) return undefined;
  for (const page of pages) if (page.panel.active && page.panel.title === tab.label) return page;
  return undefined;
}

/** The open heads page of a saved file, if any. */
export function savedHeadsPage(uri: vscode.Uri): HeadsPlace | undefined {
  for (const page of pages) if (page.place.kind === 'saved' && page.place.uri.toString() === uri.toString()) return page;
  return undefined;
}

/** The heads page focused now, else the last one focused while it is still open. */
export function recentHeadsPage(): HeadsPlace | undefined {
  return focusedHeadsPage() ?? lastPage;
}

/**
 * Where a command without arguments acts: the focused text editor or tensor file, the focused
 * heads page, a text editor the user still sees, else the last of these that had the focus.
 */
export function currentPlace(): Place | undefined {
  const editor = vscode.window.activeTextEditor;
  if (editor && isSupported(editor.document)) return { kind: 'document', uri: editor.document.uri };
  const tensor = activeTensorFile();
  if (tensor) return { kind: 'saved', uri: tensor };
  const page = focusedHeadsPage();
  if (page) return page.place;
  const visible = vscode.window.visibleTextEditors.find((candidate) => isSupported(candidate.document));
  if (visible) return { kind: 'document', uri: visible.document.uri };
  return last;
}

/** The last model run a heads page showed (focused now or before). */
export function lastModelPlace(): Extract<Place, { kind: 'model' }> | undefined {
  const place = currentPlace();
  if (place?.kind === 'model' && place.run !== undefined) return place;
  for (const page of [lastPage, ...pages]) if (page?.place.kind === 'model' && page.place.run !== undefined) return page.place;
  return undefined;
}
