// The palette's commands with a heads page focused (issue 45): each acts on what that page shows —
// a saved attentions file, a run problem of a note, a model run — and none fails. A heads page has
// no text editor behind it, so before, "Show Heads" there said "Open saved attentions … first".
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AttentionLensApi } from '../../src/extension';
import type { ModelRunOutcome } from '../../src/features/models';
import type { RunOutcome } from '../../src/features/runner';
import { modelFixture, modelReference } from '../unit/model/fixtures';
import { activateApi, closeAllEditors, eventually, repoUri } from './support';

function webviewTabs(viewType: string): vscode.Tab[] {
  return vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .filter((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.includes(viewType));
}
const headsTabs = () => webviewTabs('attentionLens.heads');
const activeTab = () => vscode.window.tabGroups.activeTabGroup.activeTab;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Gives the (first) heads page the focus, as a click on its tab does. */
async function focusHeads(): Promise<void> {
  const tab = await eventually(() => headsTabs()[0], 'a heads page');
  if (headsTabs().length > 1) assert.fail(`one heads page expected: ${headsTabs().map((t) => t.label).join(', ')}`);
  if (activeTab() !== tab || !tab.group.isActive) {
    const groups = ['workbench.action.focusFirstEditorGroup', 'workbench.action.focusSecondEditorGroup', 'workbench.action.focusThirdEditorGroup'];
    await vscode.commands.executeCommand(groups[tab.group.viewColumn - 1]);
    await vscode.commands.executeCommand('workbench.action.openEditorAtIndex', tab.group.tabs.indexOf(tab));
  }
  await eventually(() => {
    const active = activeTab();
    return active?.input instanceof vscode.TabInputWebview && active.input.viewType.includes('attentionLens.heads') ? true : undefined;
  }, 'the heads page focused');
  // The page's view state reaches the extension after the tab's.
  await sleep(300);
}

/** Runs a command from the heads page, as the palette does, and checks that it showed no error. */
async function fromHeadsPage<T>(api: AttentionLensApi, command: string, ...args: unknown[]): Promise<T | undefined> {
  await focusHeads();
  const before = api.commandErrors.length;
  const result = await vscode.commands.executeCommand<T>(command, ...args);
  assert.deepEqual(api.commandErrors.slice(before), [], `${command} showed an error`);
  return result;
}

const savedFile = () => repoUri('test', 'fixtures', 'heads', 'saved', 'pt', 'stacked.pt');

describe('commands on a focused heads page', function () {
  this.timeout(120_000);
  let scratch: string;
  before(async () => {
    await activateApi();
    scratch = mkdtempSync(join(tmpdir(), 'attention-lens-heads-'));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));
  afterEach(closeAllEditors);

  it('saved attentions: every command acts on the file or the page, none fails', async () => {
    const api = await activateApi();
    await vscode.commands.executeCommand('attentionLens.showHeads', savedFile());
    await eventually(() => headsTabs()[0], 'the heads page');
    // Show Heads (the failure), and the commands that run or show: this page again.
    for (const command of ['attentionLens.showHeads', 'attentionLens.runFile', 'attentionLens.runProblem', 'attentionLens.showPanel']) {
      await fromHeadsPage(api, command);
      assert.equal(headsTabs().length, 1, `${command}: the file's one page, not a second read`);
    }
    // Export Results: the page's standalone report.
    const report = vscode.Uri.file(join(scratch, 'saved.html'));
    const written = await fromHeadsPage<vscode.Uri[]>(api, 'attentionLens.exportResults', { format: 'html', target: report });
    assert.equal(written?.[0]?.fsPath, report.fsPath);
    assert.match(readFileSync(report.fsPath, 'utf8'), /<img[^>]+data:image\/png;base64,/);
    // Set Options has nothing to set on saved weights: it says so, without an error.
    assert.equal(await fromHeadsPage(api, 'attentionLens.setOptions'), undefined);
    // The toggles need no editor.
    const live = await fromHeadsPage<boolean>(api, 'attentionLens.toggleLiveUpdate');
    assert.equal(await fromHeadsPage<boolean>(api, 'attentionLens.toggleLiveUpdate'), !live);
    const inline = await fromHeadsPage<boolean>(api, 'attentionLens.toggleInlineHeatmap');
    assert.equal(await fromHeadsPage<boolean>(api, 'attentionLens.toggleInlineHeatmap'), !inline);
    // Insert Example with no text editor in sight: a new note with the example.
    assert.equal(await fromHeadsPage<boolean>(api, 'attentionLens.insertExample', 'single-head'), true);
    const note = vscode.window.activeTextEditor?.document;
    assert.equal(note?.languageId, 'markdown');
    assert.match(note?.getText() ?? '', /attention:/);
    await fromHeadsPage(api, 'attentionLens.openExampleNotebook');
    assert.ok(vscode.window.activeNotebookEditor, 'the example notebook opened');
  });

  it('a run problem: the commands act on its note and its problem', async () => {
    const api = await activateApi();
    const example = readFileSync(repoUri('examples', '04-multi-head.md').fsPath, 'utf8');
    const notePath = join(scratch, 'multi-head.md');
    writeFileSync(notePath, example);
    const note = vscode.Uri.file(notePath);
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(note));
    const ran = await vscode.commands.executeCommand<RunOutcome>('attentionLens.runFile');
    assert.ok(ran?.run?.runs[0]?.result, 'the note ran');
    await vscode.commands.executeCommand('attentionLens.showHeads', note);
    await eventually(() => headsTabs()[0], 'the heads page');
    // The note is out of sight: only the page's own knowledge leads back to it.
    await vscode.commands.executeCommand('workbench.action.closeEditorsInOtherGroups');
    for (const tab of vscode.window.tabGroups.all.flatMap((group) => group.tabs)) if (tab.input instanceof vscode.TabInputText) await vscode.window.tabGroups.close(tab);

    await fromHeadsPage(api, 'attentionLens.showHeads');
    assert.equal(headsTabs().length, 1, 'Show Heads on its page shows that page');
    const outcome = await fromHeadsPage<RunOutcome>(api, 'attentionLens.runProblem');
    assert.equal(outcome?.run?.uri, note.toString());
    assert.ok((await fromHeadsPage<RunOutcome>(api, 'attentionLens.runFile'))?.run, 'Run on This File ran the note');
    assert.equal(await fromHeadsPage(api, 'attentionLens.showPanel'), true);
    await eventually(() => webviewTabs('attentionLens.panel')[0], 'the attention panel');
    const exported = vscode.Uri.file(join(scratch, 'problem.json'));
    await fromHeadsPage(api, 'attentionLens.exportResults', { format: 'json', target: exported });
    assert.ok(existsSync(exported.fsPath), 'the note exported as JSON');
    assert.ok(await fromHeadsPage(api, 'attentionLens.setOptions', { option: 'causal', value: 'top-left' }), 'Set Options edited the note');
    const edited = vscode.workspace.textDocuments.find((document) => document.uri.toString() === note.toString());
    assert.match(edited?.getText() ?? '', /attention:[^\n]*causal/);
    await edited?.save();
  });

  it('a model run: the commands act on that run and its folder', async () => {
    const api = await activateApi();
    const folder = modelFixture('gpt2');
    const { token_ids: ids } = modelReference('gpt2');
    const first = (await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runModel', folder, { ids }))?.summary;
    assert.ok(first, 'the model ran');
    await eventually(() => headsTabs()[0], 'the heads page');
    const opened = await fromHeadsPage<RunOutcome>(api, 'attentionLens.openModelHead', undefined, 0, 1);
    assert.match(opened?.run?.runs[0]?.problem.name ?? '', /^gpt2 L0 H1 /);
    assert.match(opened?.run?.uri ?? '', new RegExp(`run%3D${first.run}$|run=${first.run}$`), 'the page\'s run');
    const shown = await fromHeadsPage<RunOutcome>(api, 'attentionLens.showPanel');
    assert.match(shown?.run?.runs[0]?.problem.name ?? '', /^gpt2 L0 H0 /);
    await fromHeadsPage(api, 'attentionLens.showHeads');
    const again = await fromHeadsPage<ModelRunOutcome>(api, 'attentionLens.runFile');
    assert.equal(again?.summary?.folder, folder, 'Run on This File ran the page\'s model again');
    assert.deepEqual(again?.summary?.tokenIds, ids, 'on the same ids');
    // Its new page and the old one show the same model: keep one.
    await vscode.window.tabGroups.close(headsTabs().slice(1));
    const rerun = await fromHeadsPage<ModelRunOutcome>(api, 'attentionLens.runModel', undefined, { ids });
    assert.equal(rerun?.summary?.folder, folder, "Run Model without a folder runs the page's model");
  });
});
