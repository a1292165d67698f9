// "Attention: Show Heads": the model view and head view of every layer × head, in their own
// webview panel (one per stack). Sources: a saved attentions file (.pt/.safetensors/.npy/.npz,
// from the command, the explorer, or the tensor file view's "Show heads"), and the multi-head
// problem under the cursor once run. The worker holds the stack and answers what the page draws;
// this host only routes. A click on a head shows its heatmap in the page; a problem's head then
// opens in the step-by-step panel too, a model run's through the model feature's "open a head"
// (features/models.ts). The page's Compare tab pairs a second run (B) with the page's (A): this
// host asks for the text, checkpoint or file, has the worker open it, and names B in the worker
// queries that compare.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { kindRefusals, type KindRefusals, refusalToCompare } from '../core/heads/compare';
import { comparedInput } from '../core/model/input';
import { contentSecurityPolicy, htmlPage, newNonce } from '../views/html';
import { infoOfKind } from '../views/kindInfo';
import type { PanelApi } from '../panel';
import { type AttentionKind, type ComparedRun, type CompareWith, type HostToHeadsView, type ModelRunInput, parseHeadsViewMessage, type StackInfo } from '../protocol';
import { renderHeadsReportHtml } from '../report/headsHtml';
import type { AttentionWorker, OpenedHeads } from '../worker/client';
import type { DocumentAnalyzer } from './analysis';
import { COMMANDS } from '../host/commandIds';
import { problemAtCursor, reportingErrors } from './commands';
import type { GenerationFeed } from './generationFeed';
import type { ModelRunOutcome, ModelRuns } from './models';
import type { Results } from '../host/results';
import { activeTensorFile } from './tensorFile';
import { addHeadsPlace, currentPlace, focusedHeadsPage, type HeadsPlace, type Place, savedHeadsPage, settleHeadsPlace } from './place';
import { readSettings } from './settings';

export const HEADS_VIEW_TYPE = 'attentionLens.heads';
/** Saved attentions may be larger than one matrix: 12 × 12 × 1024² is 151 M numbers. */
const MIN_HEADS_ELEMENTS = 2 ** 28;

export interface HeadsDeps {
  worker: AttentionWorker;
  analyzer: DocumentAnalyzer;
  results: Results;
  panel: PanelApi;
  models: ModelRuns;
  log: vscode.LogOutputChannel;
  errors?: string[];
}

/** Where a heads panel's stack came from: what a click on a head opens. */
type Origin = { kind: 'saved'; uri: vscode.Uri } | { kind: 'problem'; uri: vscode.Uri; problem: number } | { kind: 'model'; folder: string; run: number };

export function registerHeads(context: vscode.ExtensionContext, deps: HeadsDeps): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(COMMANDS.showHeads, reportingErrors(deps, (uri?: vscode.Uri, ids?: number[]) => showHeads(context.extensionUri, deps, uri, ids))),
    vscode.commands.registerCommand(COMMANDS.showModelHeads, (pending: Promise<ModelRunOutcome>, folder: string, feed?: GenerationFeed) => showModelHeads(context.extensionUri, deps, pending, folder, feed)),
  );
}

/** A model run's every layer × head, its predictions in the header: the page is made as the run
 * starts and loads meanwhile. A run that fails or is cancelled closes it (the run says why). A
 * generation's page shows each token as `feed` brings it, before the run ends. */
function showModelHeads(extensionUri: vscode.Uri, deps: HeadsDeps, pending: Promise<ModelRunOutcome>, folder: string, feed?: GenerationFeed): Promise<void> {
  const opening = pending.then(async ({ summary }) => {
    if (!summary) return undefined;
    const origin: Origin = { kind: 'model', folder, run: summary.run };
    return { opened: await deps.worker.modelHeads(summary.run), origin };
  });
  return openPanel(extensionUri, deps, opening, `${path.basename(folder)} (${feed ? 'generating' : 'running'}…)`, { kind: 'model', folder }, feed);
}

/** The page of a place: a saved file, a document's run problem, a model run. */
function placeOf(origin: Origin): Place {
  if (origin.kind === 'saved') return { kind: 'saved', uri: origin.uri };
  if (origin.kind === 'problem') return { kind: 'document', uri: origin.uri, problem: origin.problem };
  return { kind: 'model', folder: origin.folder, run: origin.run };
}

async function showHeads(extensionUri: vscode.Uri, deps: HeadsDeps, uri: vscode.Uri | undefined, ids: number[] | undefined): Promise<void> {
  // From the palette on a heads page: that page is what it shows.
  const focused = uri === undefined ? focusedHeadsPage() : undefined;
  if (focused) return focused.panel.reveal(focused.panel.viewColumn, false);
  const place = uri === undefined ? (activeTensorFile() ? undefined : currentPlace()) : undefined;
  if (place?.kind === 'model' && place.run !== undefined) {
    const summary = deps.models.summary(place.run);
    if (summary) return showModelHeads(extensionUri, deps, Promise.resolve({ summary }), place.folder);
  }
  const target = uri ?? activeTensorFile() ?? vscode.window.activeTextEditor?.document.uri ?? (place?.kind === 'model' ? undefined : place?.uri);
  if (!target) throw new Error('Open saved attentions (.pt, .safetensors, .npy, .npz) or a multi-head problem first.');
  if (/\.(pt|pth|safetensors|npy|npz)$/i.test(target.path)) {
    // A file whose page is open already: that page, not a second read of the same bytes.
    const open = ids === undefined ? savedHeadsPage(target) : undefined;
    if (open) return open.panel.reveal(open.panel.viewColumn, false);
    const maxElements = Math.max(readSettings(target).maxMatrixElements, MIN_HEADS_ELEMENTS);
    // The page loads while the worker reads the file (seconds for a whole model's attentions).
    const opening = deps.worker.openHeads(target.fsPath, maxElements, ids).then((opened) => ({ opened, origin: { kind: 'saved', uri: target } as Origin }));
    return openPanel(extensionUri, deps, opening, `${path.basename(target.fsPath)} (reading…)`, { kind: 'saved', uri: target });
  }
  const problem = await problemOf(deps, target, place?.kind === 'document' && place.uri.toString() === target.toString() ? place.problem : undefined);
  const opened = await deps.worker.adoptHeads(problem.request);
  const origin: Origin = { kind: 'problem', uri: target, problem: problem.request.problem };
  return openPanel(extensionUri, deps, Promise.resolve({ opened, origin }), opened.info.title, placeOf(origin));
}

/** The run problem given, else the one under the cursor (commands.ts's choice), its heads' weights. */
async function problemOf({ analyzer, results }: HeadsDeps, uri: vscode.Uri, given?: number) {
  const document = await vscode.workspace.openTextDocument(uri);
  const index = given ?? (await problemAtCursor(document, analyzer))?.index ?? 0;
  const problemRun = results.get(uri.toString())?.runs[index];
  if (!problemRun?.result) throw new Error('Run the problem first (▶ Run attention): the heads views show its result.');
  const { problem, result } = problemRun;
  return {
    request: {
      title: `${path.basename(uri.path)} · ${problem.options.name ?? `problem ${index + 1}`}`,
      ...(problem.tokens ? { tokens: problem.tokens } : {}),
      ...(problem.keyTokens ? { keyTokens: problem.keyTokens } : {}),
      weights: result.heads.map((head) => head.weights),
      document: uri.toString(),
      problem: index,
    },
  };
}

/**
 * The heads panel of a stack the worker is opening: made at once, so its page (a second or more
 * for a new webview) loads while the worker works, and given the stack when `opening` settles.
 * Resolves when the stack is shown; `opening` resolving to undefined closes the panel quietly (a
 * model run that failed or was cancelled says so itself), rejecting closes it and rejects.
 */
async function openPanel(extensionUri: vscode.Uri, deps: HeadsDeps, opening: Promise<{ opened: OpenedHeads; origin: Origin } | undefined>, title: string, initial: Place, feed?: GenerationFeed): Promise<void> {
  const dist = vscode.Uri.joinPath(extensionUri, 'dist');
  const panel = vscode.window.createWebviewPanel(HEADS_VIEW_TYPE, `Heads: ${title}`, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false }, {
    enableScripts: true,
    localResourceRoots: [dist],
    retainContextWhenHidden: true,
  });
  const { webview } = panel;
  const nonce = newNonce();
  webview.html = htmlPage({
    csp: contentSecurityPolicy({ nonce, resourceSource: webview.cspSource }),
    title,
    head: `<link rel="stylesheet" href="${webview.asWebviewUri(vscode.Uri.joinPath(dist, 'heads.css')).toString()}">`,
    bodyAttributes: 'data-mode="heads"',
    body: `<script type="module" nonce="${nonce}" src="${webview.asWebviewUri(vscode.Uri.joinPath(dist, 'heads.js')).toString()}"></script>`,
  });
  const post = (message: HostToHeadsView) => void webview.postMessage(message);
  /** An export the palette asked for (Export Results on this page): where its report goes. */
  let reportWanted: { target?: vscode.Uri; resolve(saved: vscode.Uri | undefined): void } | undefined;
  const place: HeadsPlace = {
    panel,
    place: initial,
    exportReport(target) {
      reportWanted?.resolve(undefined);
      return new Promise((resolve) => {
        reportWanted = { target, resolve };
        post({ type: 'exportReport' });
      });
    },
  };
  const placement = addHeadsPlace(place);
  /** The run compared with (B), once one is chosen; a new choice replaces it. */
  let compared: OpenedHeads | undefined;
  let shown: { opened: OpenedHeads; origin: Origin } | undefined;
  const subscription = webview.onDidReceiveMessage(async (raw: unknown) => {
    const message = parseHeadsViewMessage(raw);
    if (!message) {
      deps.log.warn(`heads view: ignored a malformed message: ${JSON.stringify(raw)?.slice(0, 200)}`);
      return;
    }
    if (message.type === 'ready') {
      if (!shown) post({ type: 'opening', text: title });
      feed?.attach(post);
      const target = await opening.catch(() => undefined);
      return target && post({ type: 'stack', info: target.opened.info });
    }
    // Stop reaches the generation while it runs, before the page has a stack.
    if (message.type === 'stopGeneration') return feed?.stop();
    // The page asks nothing else before it has the stack.
    if (!shown) return;
    const { opened, origin } = shown;
    switch (message.type) {
      case 'query':
        try {
          return post({ type: 'answer', requestId: message.requestId, answer: await deps.worker.queryHeads(opened.stack, message.query, compared?.stack) });
        } catch (error) {
          return post({ type: 'error', requestId: message.requestId, message: error instanceof Error ? error.message : String(error) });
        }
      case 'openHead':
        place.openedHead = { layer: message.layer, head: message.head };
        return openHead(deps, origin, message.layer, message.head, message.attention, message.step);
      case 'probe':
        if (origin.kind === 'model') await vscode.commands.executeCommand(COMMANDS.runInductionProbe, origin.run, message.repeat, message.seed);
        return;
      case 'compare': {
        const chosen = await compareWith(deps, origin, opened.info, message.with).catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
        if (chosen === undefined) return post({ type: 'compareFailed', message: 'No run chosen to compare with.' });
        if (typeof chosen === 'string') return post({ type: 'compareFailed', message: chosen });
        if (compared) deps.worker.closeHeads(compared.stack);
        compared = chosen.opened;
        deps.log.info(`heads: comparing ${describe(opened.info)} with ${describe(chosen.opened.info)}`);
        return post({ type: 'compared', a: chosen.a, b: chosen.b, ...(chosen.refused ? { refused: chosen.refused } : {}) });
      }
      case 'export': {
        const bytes = 'base64' in message && message.base64 !== undefined ? Buffer.from(message.base64, 'base64') : new TextEncoder().encode(message.text ?? '');
        return saveExport(origin, message.fileName, bytes);
      }
      case 'report': {
        const { base64, width, height, legend } = message;
        const wanted = reportWanted;
        reportWanted = undefined;
        // The kind the page showed, for an encoder–decoder run: its title, counts and tokens.
        const info = infoOfKind(opened.info, message.attention);
        const saved = await saveExport(origin, message.fileName, new TextEncoder().encode(renderHeadsReportHtml({ info, png: base64, width, height, legend })), wanted?.target);
        return wanted?.resolve(saved);
      }
      case 'reportFailed':
        reportWanted?.resolve(undefined);
        reportWanted = undefined;
        return vscode.window.showInformationMessage(`Attention: ${message.message}`);
    }
  });
  let closed = false;
  panel.onDidDispose(() => {
    closed = true;
    feed?.detach();
    subscription.dispose();
    placement.dispose();
    reportWanted?.resolve(undefined);
    void opening.then((target) => target && deps.worker.closeHeads(target.opened.stack), () => undefined);
    if (compared) deps.worker.closeHeads(compared.stack);
  });
  try {
    shown = await opening;
  } catch (error) {
    panel.dispose();
    throw error;
  }
  // Closed by the user while the worker worked: nothing left to show.
  if (closed) return;
  if (!shown) return panel.dispose();
  settleHeadsPlace(place, placeOf(shown.origin));
  panel.title = `Heads: ${shown.opened.info.title}`;
  deps.log.info(`heads: ${describe(shown.opened.info)}`);
}

/** A run comparable with A (the page's), opened in the worker, with what the page states of both
 * and, for encoder–decoder runs, the kinds that do not compare; a message when no part of it can be
 * compared, undefined when the user chose nothing. */
async function compareWith(deps: HeadsDeps, origin: Origin, a: StackInfo, how: CompareWith): Promise<{ opened: OpenedHeads; a: ComparedRun; b: ComparedRun; refused?: KindRefusals } | string | undefined> {
  let chosen: { opened: OpenedHeads; a: ComparedRun; b: ComparedRun } | string | undefined;
  if (how === 'file' && origin.kind === 'saved') chosen = await compareFile(deps, origin.uri);
  else if (how !== 'file' && origin.kind === 'model') chosen = await compareModel(deps, origin, a, how);
  else return `Comparing with another ${how} needs ${how === 'file' ? 'saved attentions' : 'a model run'} on this page.`;
  if (chosen === undefined || typeof chosen === 'string') return chosen;
  const refusal = refusalToCompare(a, chosen.opened.info, how);
  if (!refusal) return { ...chosen, refused: kindRefusals(a, chosen.opened.info) };
  deps.worker.closeHeads(chosen.opened.stack);
  return refusal;
}

async function compareFile(deps: HeadsDeps, first: vscode.Uri) {
  const picked = await vscode.window.showOpenDialog({
    title: 'Attention: compare with another file',
    defaultUri: vscode.Uri.joinPath(first, '..'),
    canSelectMany: false,
    filters: { 'Saved attentions': ['pt', 'pth', 'safetensors', 'npy', 'npz'] },
    openLabel: 'Compare with this file',
  });
  const second = picked?.[0];
  if (!second) return undefined;
  const maxElements = Math.max(readSettings(second).maxMatrixElements, MIN_HEADS_ELEMENTS);
  const opened = await deps.worker.openHeads(second.fsPath, maxElements);
  const run = (uri: vscode.Uri): ComparedRun => ({ title: path.basename(uri.fsPath), detail: uri.fsPath });
  return { opened, a: run(first), b: run(second) };
}

/** The same model on a second text, or a second checkpoint on the same input, run in the worker. */
async function compareModel(deps: HeadsDeps, origin: Extract<Origin, { kind: 'model' }>, a: StackInfo, how: 'text' | 'checkpoint') {
  const input = deps.models.input(origin.run);
  const ids = deps.models.summary(origin.run)?.tokenIds;
  if (!input || !ids) return 'That model run is no longer known: run the model again.';
  let folder = origin.folder;
  let second: ModelRunInput;
  if (how === 'text') {
    const text = await vscode.window.showInputBox({
      title: 'Attention: compare with another text',
      prompt: `A second ${a.kinds ? 'source' : 'text'} for the same model, ${(a.kinds?.find((kind) => kind.kind === 'encoder') ?? a).keyCount} tokens long like A’s`,
      value: 'text' in input ? input.text : '',
    });
    if (!text) return undefined;
    second = comparedInput(input, ids, text);
  } else {
    // Opened beside A's folder, where a base and a fine-tuned checkpoint usually sit side by side.
    const picked = await vscode.window.showOpenDialog({
      title: 'Attention: compare with another checkpoint',
      defaultUri: vscode.Uri.file(path.dirname(origin.folder)),
      canSelectFiles: false,
      canSelectFolders: true,
      openLabel: 'Compare with this model',
    });
    if (!picked?.[0]) return undefined;
    folder = picked[0].fsPath;
    second = comparedInput(input, ids);
  }
  const outcome = await deps.models.run(folder, second);
  if (outcome.cancelled) return undefined;
  if (!outcome.summary) return outcome.error ?? 'The second run failed.';
  const opened = await deps.worker.modelHeads(outcome.summary.run);
  return { opened, a: modelRun(origin.folder, input), b: modelRun(folder, second) };
}

function modelRun(folder: string, input: ModelRunInput): ComparedRun {
  const detail = 'text' in input ? `on “${input.text}”` : 'ids' in input ? `on ids ${input.ids.join(' ')}` : 'image' in input ? `on ${input.image.name}` : `on the induction probe's tokens (R = ${input.probe.repeat}, seed ${input.probe.seed})`;
  return { title: path.basename(folder), detail: `${folder} ${detail}` };
}

/** Asks where to save an export (beside the file, or in the model's folder), unless given, and writes it. */
async function saveExport(origin: Origin, fileName: string, bytes: Uint8Array, given?: vscode.Uri): Promise<vscode.Uri | undefined> {
  const folder = origin.kind === 'model' ? vscode.Uri.file(origin.folder) : vscode.Uri.joinPath(origin.uri, '..');
  const target = given ?? (await vscode.window.showSaveDialog({ defaultUri: vscode.Uri.joinPath(folder, fileName), title: 'Attention: save export' }));
  if (target) await vscode.workspace.fs.writeFile(target, bytes);
  return target;
}

async function openHead(deps: HeadsDeps, origin: Origin, layer: number, head: number, attention?: AttentionKind, step?: number): Promise<void> {
  if (origin.kind === 'problem') deps.panel.show(origin.uri, origin.problem, head);
  // An encoder–decoder run's head of the kind the page shows (absent: the run's only kind); a generated run's at a step.
  else if (origin.kind === 'model') await vscode.commands.executeCommand(COMMANDS.openModelHead, origin.run, layer, head, attention, step);
}

function describe(info: StackInfo): string {
  return `${info.title}: ${info.layerCount} × ${info.headCount} heads, ${info.queryCount} × ${info.keyCount}`;
}
