// Every `Attention: …` command. Each accepts optional arguments so CodeLenses, keybindings and
// tests can call it without pickers; each returns what it did (tests read it).
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ModelInput } from '../core/model/input';
import { TENSOR_FILE } from '../core/parse/tensors';
import { comparePositions, rangeContains } from '../core/location';
import type { ModelDirective, Problem } from '../core/types';
import type { PanelApi } from '../panel';
import type { DocumentAnalyzer } from './analysis';
import { COMMANDS } from '../host/commandIds';
import { isDetachedUri } from '../host/debugUri';
import { EXAMPLES } from './examples';
import { exportResults, type ExportArgs } from './export';
import { directiveLine, isSupported } from './languages';
import { readerPosition } from '../host/notebookCells';
import { openExampleNotebook } from './notebook';
import type { Results } from '../host/results';
import { isEncoderDecoderFolder, type ModelRuns } from './models';
import { currentPlace, type Place, recentHeadsPage } from './place';
import type { RunOutcome, Runner } from './runner';
import { setOption, type SetOptionArgs } from './setOptions';
import { readSettings, updateSetting } from './settings';

export interface CommandDeps {
  analyzer: DocumentAnalyzer;
  runner: Runner;
  results: Results;
  panel: PanelApi;
  models: ModelRuns;
  log: vscode.LogOutputChannel;
  /** Every error a command showed, newest last (the integration tests read it). */
  errors?: string[];
}

export function registerCommands(context: vscode.ExtensionContext, deps: CommandDeps): void {
  const { analyzer, runner, results, panel, models } = deps;
  const register = (id: string, handler: (...args: never[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, reportingErrors(deps, handler)));

  /** A heads page of saved attentions or of a model run has no text to run: the commands that run
   * or show act on what it shows (the file's heads; the same model on the same input again). */
  const runElsewhere = (place: Place | undefined) => {
    if (place?.kind === 'saved') return vscode.commands.executeCommand(COMMANDS.showHeads, place.uri);
    if (place?.kind !== 'model' || place.run === undefined) return undefined;
    const input = models.input(place.run);
    if (!input) throw new Error('That model run is no longer known: run the model again ("Attention: Run Model on Text…").');
    if ('probe' in input) return vscode.commands.executeCommand(COMMANDS.runInductionProbe, place.run, input.probe.repeat, input.probe.seed);
    return vscode.commands.executeCommand(COMMANDS.runModel, place.folder, input);
  };

  register(COMMANDS.runFile, async (uri?: vscode.Uri) => {
    const place = uri ? undefined : currentPlace();
    if (place && place.kind !== 'document') return runElsewhere(place);
    const document = await documentFor(uri ?? place?.uri);
    const problems = (await analyzer.read(document)).parse.problems;
    if (problems.length === 0) {
      void vscode.window.showInformationMessage('Attention: no matrices found in this file. Try "Attention: Insert Example…".');
      return undefined;
    }
    // A note that only pins a model runs that model.
    if (problems.every((problem) => problem.model)) return runModelDirective(document, problems[0].model!);
    const opened = panel.openForRun(document.uri, 0);
    const outcome = await runner.run(document);
    reportOutcome(outcome);
    if (!outcome.cancelled || opened) panel.show(document.uri, firstSucceeded(outcome) ?? 0);
    return outcome;
  });

  register(COMMANDS.runProblem, async (uri?: vscode.Uri, index?: number) => {
    const place = uri ? undefined : currentPlace();
    if (place && place.kind !== 'document') return runElsewhere(place);
    const document = await documentFor(uri ?? place?.uri);
    const chosen = index ?? (place?.kind === 'document' ? place.problem : undefined);
    const problem = chosen === undefined ? await problemAtCursor(document, analyzer) : (await analyzer.read(document)).parse.problems[chosen];
    if (!problem) throw new Error('Put the cursor on a matrix of an attention problem first.');
    if (problem.model) return runModelDirective(document, problem.model);
    const opened = panel.openForRun(document.uri, problem.index);
    const outcome = await runner.run(document, [problem.index]);
    reportOutcome(outcome);
    if (!outcome.cancelled || opened) panel.show(document.uri, problem.index);
    return outcome;
  });

  register(COMMANDS.showPanel, async (uri?: vscode.Uri, index?: number) => {
    const place = uri ? undefined : currentPlace();
    if (place?.kind === 'saved') return vscode.commands.executeCommand(COMMANDS.showHeads, place.uri);
    if (place?.kind === 'model' && place.run !== undefined) {
      // The head last opened on the page, step by step; else its first.
      const page = recentHeadsPage();
      const { layer, head } = (page?.place === place && page.openedHead) || { layer: 0, head: 0 };
      return vscode.commands.executeCommand(COMMANDS.openModelHead, place.run, layer, head);
    }
    const document = await documentFor(uri ?? (place?.kind === 'document' ? place.uri : undefined));
    const problem = index ?? (place?.kind === 'document' ? place.problem : undefined) ?? (await problemAtCursor(document, analyzer))?.index ?? 0;
    const { version } = await analyzer.read(document);
    const run = results.get(document.uri.toString())?.runs[problem];
    // The panel shows results; a problem never run (or edited since) is run first.
    if (!run || run.version !== version) {
      panel.openForRun(document.uri, problem);
      reportOutcome(await runner.run(document, [problem]));
    }
    panel.show(document.uri, problem);
    return true;
  });

  register(COMMANDS.insertExample, async (id?: string) => {
    // With no text editor in sight (a heads page alone), the example goes into a new note.
    const editor = visibleEditor() ?? (await vscode.window.showTextDocument(await vscode.workspace.openTextDocument({ language: 'markdown' }), vscode.ViewColumn.Active));
    const example = id
      ? EXAMPLES.find((candidate) => candidate.id === id)
      : (await vscode.window.showQuickPick(
          EXAMPLES.map((candidate) => ({ label: candidate.label, detail: candidate.detail, example: candidate })),
          { title: 'Attention: Insert Example', placeHolder: 'Which worked example?' },
        ))?.example;
    if (!example) {
      if (id) throw new Error(`Unknown example "${id}". Known: ${EXAMPLES.map((e) => e.id).join(', ')}.`);
      return false;
    }
    const directive = directiveLine(editor.document, example.directive);
    if (directive === undefined) throw new Error('Examples cannot be inserted into JSON (no comments for the directive); open a Markdown or Python file.');
    const at = editor.selection.active;
    const lead = editor.document.lineAt(at.line).text.slice(0, at.character).trim() === '' ? '' : '\n';
    return editor.edit((edit) => edit.insert(at, `${lead}${directive}\n${example.body}\n`));
  });

  register(COMMANDS.setOptions, async (args?: SetOptionArgs) => {
    const place = currentPlace();
    if (place && place.kind !== 'document') {
      // Nothing to set on saved weights or a model's run; not an error, the page is fine.
      const what = place.kind === 'saved' ? 'saved attentions' : 'a model run';
      void vscode.window.showInformationMessage(`Attention: Set Options changes the \`attention:\` line of a problem in a text file; this page shows ${what}. Open a note with a problem to set its options.`);
      return undefined;
    }
    // A problem's heads page: its document, shown, and that problem.
    const editor = visibleEditor(place?.uri) ?? (place ? await vscode.window.showTextDocument(place.uri, { viewColumn: vscode.ViewColumn.One, preserveFocus: true }) : activeEditor());
    const given = place?.problem;
    const problem = given !== undefined ? (await analyzer.read(editor.document)).parse.problems[given] : await problemAtCursor(editor.document, analyzer);
    if (!problem) throw new Error('Put the cursor on a matrix of an attention problem first (no matrices found here).');
    return setOption(editor, problem, args);
  });

  register(COMMANDS.exportResults, async (args?: ExportArgs) => {
    const place = currentPlace();
    const page = recentHeadsPage();
    // A heads page's export is its standalone report (the page's own PNG/SVG buttons do the rest).
    if (place && place.kind !== 'document' && page?.place === place) {
      if (args && args.format !== 'html') throw new Error(`A heads page exports its HTML report; ${args.format.toUpperCase()} is for a text file's problems.`);
      const saved = await page.exportReport(args?.target);
      return saved ? [saved] : [];
    }
    if (place && place.kind !== 'document') {
      void vscode.window.showInformationMessage("Attention: Export Results saves a text file's results, or a heads page's HTML report: focus one of those.");
      return undefined;
    }
    const document = place ? await documentFor(place.uri) : activeEditor().document;
    const outcome = await runner.run(document);
    reportOutcome(outcome);
    const run = results.get(document.uri.toString());
    if (!run || outcome.cancelled) return undefined;
    return exportResults(context, document, await analyzer.read(document), run, args);
  });

  // The dtype control of the panel re-runs its problem with that dtype.
  context.subscriptions.push(
    panel.onDidRequestDtype(async ({ uri, problemIndex, dtype }) => {
      if (TENSOR_FILE.test(uri.path)) return; // features/tensorFile.ts runs those again
      if (isDetachedUri(uri)) return; // the debug source and the model feature re-run their own
      reportOutcome(await runner.pickDType(await vscode.workspace.openTextDocument(uri), problemIndex, dtype));
    }),
    vscode.workspace.onDidCloseTextDocument((document) => runner.forget(document)),
  );

  register(COMMANDS.openExampleNotebook, () => openExampleNotebook(context.globalStorageUri));

  register(COMMANDS.toggleLiveUpdate, async () => {
    // The setting as it applies to the file in front of the user, changed where that value is set.
    const scope = vscode.window.activeTextEditor?.document.uri;
    const enabled = !readSettings(scope).liveUpdate;
    await updateSetting('liveUpdate', enabled, scope);
    void vscode.window.showInformationMessage(`Attention: live update ${enabled ? 'on — results follow your edits' : 'off — run explicitly'}.`);
    return enabled;
  });
}

/** The model command's arguments for a directive: its folder relative to the document, its input. */
export function modelRunArguments(document: vscode.TextDocument, model: ModelDirective): [string, ModelInput | undefined] {
  const folder = path.resolve(path.dirname(document.uri.fsPath), model.path);
  const target = { ...(model.target ? { target: model.target } : {}), ...(model.languages ? { languages: model.languages } : {}) };
  return [folder, model.ids ? { ids: model.ids, ...target } : model.text !== undefined ? { text: model.text, ...target } : undefined];
}

/** A model directive's run: on its text or ids, or (`image="…"`) a vision model on that picture. */
async function runModelDirective(document: vscode.TextDocument, model: ModelDirective): Promise<unknown> {
  const [folder, given] = modelRunArguments(document, model);
  // `generate=N` on an encoder–decoder folder: its target, generated greedily.
  const generated = given && !('image' in given) && model.generate !== undefined && (await isEncoderDecoderFolder(folder));
  const input = generated ? { ...given, target: { generate: model.generate! } } : given;
  if (!generated && model.generate !== undefined && model.image === undefined) {
    // A causal model continues the text. Without a text or ids, the command asks for one (and the count is the directive's).
    const request = given && !('image' in given) ? { input: given, maxNewTokens: model.generate, ...(model.chat ? { chat: true } : {}), ...(model.sample ? { sampling: model.sample } : {}) } : undefined;
    return vscode.commands.executeCommand(COMMANDS.generate, folder, request);
  }
  if (model.image === undefined) return vscode.commands.executeCommand(COMMANDS.runModel, folder, input);
  return vscode.commands.executeCommand(COMMANDS.runVisionOnImage, vscode.Uri.file(path.resolve(path.dirname(document.uri.fsPath), model.image)), folder);
}

/** Shows thrown errors to the user (and the log) instead of a silent failed command. */
export function reportingErrors<A extends never[]>({ log, errors }: { log: vscode.LogOutputChannel; errors?: string[] }, handler: (...args: A) => unknown) {
  return async (...args: A) => {
    try {
      return await handler(...args);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log.error(message);
      errors?.push(message);
      void vscode.window.showErrorMessage(`Attention: ${message}`);
      return undefined;
    }
  };
}

function reportOutcome(outcome: RunOutcome): void {
  const [first, ...rest] = outcome.failures;
  if (!first) return;
  const more = rest.length > 0 ? ` (and ${rest.length} more; see the "Attention Lens" output)` : '';
  void vscode.window.showErrorMessage(`Attention: ${first.error}${more}`);
}

function firstSucceeded(outcome: RunOutcome): number | undefined {
  const index = outcome.run?.runs.findIndex((run) => run?.result !== undefined) ?? -1;
  return index >= 0 ? index : undefined;
}

/**
 * The editor a command acts on. When focus is elsewhere (the panel, a walkthrough, the Problems
 * view) there is no active text editor, yet the user still sees their file: use the visible one.
 */
function activeEditor(): vscode.TextEditor {
  const editor =
    vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors.find((visible) => isSupported(visible.document));
  if (!editor) throw new Error('Open a file first.');
  return editor;
}

/** The text editor in front of the user, else one they still see (of `uri` when given). */
function visibleEditor(uri?: vscode.Uri): vscode.TextEditor | undefined {
  const fits = (editor: vscode.TextEditor) => isSupported(editor.document) && (!uri || editor.document.uri.toString() === uri.toString());
  const active = vscode.window.activeTextEditor;
  return active && fits(active) ? active : vscode.window.visibleTextEditors.find(fits);
}

async function documentFor(uri: vscode.Uri | undefined): Promise<vscode.TextDocument> {
  const document = uri ? await vscode.workspace.openTextDocument(uri) : activeEditor().document;
  if (!isSupported(document)) {
    throw new Error(`Attention Lens does not read ${document.languageId} files (Markdown, Python, LaTeX, MATLAB, JSON, YAML and plain text).`);
  }
  return document;
}

/** The problem whose range holds the cursor, else the nearest one above it, else the first. */
export async function problemAtCursor(document: vscode.TextDocument, analyzer: DocumentAnalyzer): Promise<Problem | undefined> {
  const { problems } = (await analyzer.read(document)).parse;
  const editor = vscode.window.activeTextEditor;
  const cursor = readerPosition(document, editor?.document === document ? editor.selection.active : new vscode.Position(0, 0));
  let best: Problem | undefined;
  for (const problem of problems) {
    if (comparePositions(problem.range.start, cursor) <= 0) best = problem;
    if (rangeContains(problem.range, { start: cursor, end: cursor })) return problem;
  }
  return best ?? problems[0];
}
