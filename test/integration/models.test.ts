// Whole models in the editor: the directive, the palette command, the CodeLens on config.json and
// the drill-down into one head, on random-weight checkpoints in the exact Hugging Face layouts
// (scripts/gen_model_fixtures.py) against their float64 PyTorch references.
import * as assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import * as vscode from 'vscode';
import { MODEL_SCHEME } from '../../src/host/debugUri';
import type { ModelRunOutcome } from '../../src/features/models';
import type { RunOutcome } from '../../src/features/runner';
import { modelFixture, modelReference, REFERENCE_TOLERANCE } from '../unit/model/fixtures';
import { activateApi, closeAllEditors, codeLenses, eventually, openUntitled } from './support';

/** The open webview tabs of one of our view types (`attentionLens.panel`, `attentionLens.heads`). */
function webviewTabs(viewType: string): vscode.Tab[] {
  return vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .filter((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.includes(viewType));
}
const panelOpen = (): boolean => webviewTabs('attentionLens.panel').length > 0;

/** The largest |computed − reference| of one head's weights. */
function maxDifference(weights: ArrayLike<number>, reference: number[][]): number {
  let max = 0;
  reference.flat().forEach((value, i) => (max = Math.max(max, Math.abs(weights[i] - value))));
  return max;
}

/** A Markdown note of `text` in a file of its own, shown in an editor. */
async function openNote(text: string): Promise<vscode.TextEditor> {
  const path = join(mkdtempSync(join(tmpdir(), 'attention-lens-note-')), 'note.md');
  writeFileSync(path, text);
  return vscode.window.showTextDocument(await vscode.workspace.openTextDocument(vscode.Uri.file(path)));
}

describe('whole models', function () {
  this.timeout(120_000);
  before(activateApi);
  afterEach(closeAllEditors);

  it('a note that names a model folder has the worker get it ready before any click', async () => {
    const api = await activateApi();
    // A folder no other test names: the suite shares one extension host, and a note of another
    // file's tests (generate=5 on BERT, say) would have prepared it before this test begins.
    const folder = modelFixture('roberta');
    assert.ok(!api.preparedModels().includes(folder), 'not prepared before the note names it');
    // A file of its own (an untitled note would take the next test's Untitled-1 name).
    await openNote(`# A model\n<!-- attention: model="${folder}" text="The cat sat on the <mask>." -->\n`);
    await eventually(() => api.preparedModels().includes(folder) || undefined, 'the folder prepared');
  });

  it('a new untitled note under a closed one\'s name runs its own model, not the closed note\'s', async () => {
    // Both notes are the same untitled resource, each opened and then written in one edit, so both
    // stand at the same version: what once answered the second from the first's reading. One name
    // of our own, not VS Code's next Untitled-N; and as VS Code may hand the resource out again
    // with the closed note's text (restored from its backup), the edit replaces whatever is there.
    const uri = vscode.Uri.from({ scheme: 'untitled', path: `attention-lens-reused-${process.pid}-${Date.now()}.md` });
    const write = async (text: string): Promise<vscode.TextDocument> => {
      const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
      const { document } = editor;
      assert.ok(await editor.edit((edit) => edit.replace(new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length)), text)), 'the note written');
      assert.equal(document.getText(), text);
      return document;
    };
    const first = await write(`<!-- attention: model="${modelFixture('bert')}" text="The cat sat on the [MASK]." -->\n`);
    assert.equal(first.languageId, 'markdown');
    await eventually(async () => ((await codeLenses(first.uri)).length > 0 ? true : undefined), 'the first note read');
    const version = first.version;
    await closeAllEditors();
    const second = await write(`<!-- attention: model="${modelFixture('gpt2')}" ids="1, 2, 3" -->\n`);
    assert.equal(second.uri.toString(), first.uri.toString());
    assert.equal(second.version, version);
    const outcome = await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runProblem', second.uri, 0);
    assert.deepEqual(outcome?.summary?.tokenIds, [1, 2, 3]);
    await closeAllEditors();
  });

  it('a directive runs the model it names on its text, and a head opens step by step with the model\'s weights', async () => {
    const api = await activateApi();
    const folder = modelFixture('gpt2');
    const reference = modelReference('gpt2');
    assert.ok(reference.text, 'the gpt2 fixture has a text');
    // A file of its own: the test before closes an untitled note of gpt2 on ids 1, 2, 3, and VS Code
    // may hand a new Untitled-1 out with that text (restored from its backup).
    const { document } = await openNote(`# A model\n<!-- attention: model="${folder}" text="${reference.text}" -->\n`);
    const lenses = await eventually(async () => {
      const found = await codeLenses(document.uri);
      return found.length > 0 ? found : undefined;
    }, 'the directive\'s CodeLens');
    assert.deepEqual(lenses.map((lens) => lens.title), ['▶ Run model']);

    const outcome = await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runProblem', document.uri, 0);
    assert.equal(outcome?.error, undefined);
    const summary = outcome?.summary;
    assert.ok(summary, 'a model run summary');
    assert.deepEqual(summary.tokenIds, reference.token_ids);
    assert.equal(summary.layerCount, reference.attentions.length);
    assert.equal(summary.predictions[0]?.kind, 'next');
    assert.equal(summary.predictions[0]?.top.length, 5);
    // The run lands on the model view: every layer × head of this run.
    // Made as the run started, renamed once it ended.
    await eventually(() => webviewTabs('attentionLens.heads').find((tab) => tab.label.includes('gpt2') && tab.label.includes(`${summary.tokens.length} tokens`)), 'the model view of the run');

    // The command opened the last layer's first head; open another and compare both.
    for (const [layer, head] of [[summary.layerCount - 1, 0], [0, 1]]) {
      const opened = await vscode.commands.executeCommand<RunOutcome>('attentionLens.openModelHead', summary.run, layer, head);
      const run = opened?.run?.runs[0];
      assert.ok(run?.result, `L${layer} H${head} ran in the panel (${run?.error ?? ''})`);
      assert.match(run.problem.name ?? '', new RegExp(`^gpt2 L${layer} H${head} `));
      const difference = maxDifference(run.result.heads[0].weights.data, reference.attentions[layer][head]);
      assert.ok(difference < REFERENCE_TOLERANCE.attention, `L${layer} H${head}: max |difference| ${difference}`);
      assert.ok(api.results.get(opened.run!.uri)?.runs[0]?.result, 'stored where the panel finds it');
    }
    await eventually(() => (panelOpen() ? true : undefined), 'the attention panel');
  });

  it('the palette command runs a folder on given ids; a Llama with GQA and RoPE drills down to its reference', async () => {
    const folder = modelFixture('llama-gqa-bf16');
    const reference = modelReference('llama-gqa-bf16');
    const outcome = await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runModel', folder, { ids: reference.token_ids });
    const summary = outcome?.summary;
    assert.ok(summary, outcome?.error ?? 'no summary');
    assert.equal(summary.architecture, 'llama');
    const last = reference.attentions.length - 1;
    const heads = reference.attentions[last].length;
    const opened = await vscode.commands.executeCommand<RunOutcome>('attentionLens.openModelHead', summary.run, last, heads - 1);
    const result = opened?.run?.runs[0]?.result;
    assert.ok(result, opened?.failures[0]?.error ?? 'no result');
    const difference = maxDifference(result.heads[0].weights.data, reference.attentions[last][heads - 1]);
    assert.ok(difference < REFERENCE_TOLERANCE.attention, `max |difference| ${difference}`);
  });

  it('a head of a run the worker no longer holds: the panel, made before the worker answers, says why', async () => {
    const api = await activateApi();
    const folder = modelFixture('gpt2');
    const ids = modelReference('gpt2').token_ids;
    const summary = (await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runModel', folder, { ids }))?.summary;
    assert.ok(summary, 'a model run summary');
    // The worker keeps its four latest runs (src/worker/models.ts): four more and this one is gone.
    for (let i = 0; i < 4; i++) await vscode.commands.executeCommand('attentionLens.runModel', folder, { ids });
    assert.equal(await vscode.commands.executeCommand('attentionLens.openModelHead', summary.run, 0, 1), undefined);
    const key = vscode.Uri.from({ scheme: MODEL_SCHEME, path: `/${basename(folder)}`, query: `run=${summary.run}` }).toString();
    assert.match(api.results.get(key)?.runs[0]?.error ?? '', /no longer held/);
    assert.equal(api.results.get(key)?.runs[0]?.problem.name, 'gpt2 L0 H1');
    await eventually(() => (panelOpen() ? true : undefined), 'the attention panel');
  });

  it('a config.json of a model folder gets "Run model on text…"; other JSON files do not', async () => {
    const config = vscode.Uri.file(join(modelFixture('gpt2'), 'config.json'));
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(config));
    const lenses = await eventually(async () => {
      const found = (await codeLenses(config)).filter((lens) => lens.command === 'attentionLens.runModel');
      return found.length > 0 ? found : undefined;
    }, 'the config.json CodeLens');
    assert.equal(lenses[0].title, '▶ Run model on text…');
    assert.equal((lenses[0].args[0] as vscode.Uri).fsPath, config.fsPath);
    const { document } = await openUntitled('json', '{ "name": "not a model" }');
    assert.deepEqual((await codeLenses(document.uri)).filter((lens) => lens.command === 'attentionLens.runModel'), []);
  });

  it('says what is wrong, in one line: no tokenizer for a text, a folder that is no model', async () => {
    const withoutTokenizer = await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runModel', modelFixture('llama-gqa-bf16'), { text: 'hello' });
    assert.match(withoutTokenizer?.error ?? '', /tokenizer\.json/);
    const notAModel = await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runModel', join(modelFixture('gpt2'), 'nowhere'), { ids: [1, 2] });
    assert.match(notAModel?.error ?? '', /config\.json/);
    // The heads page made as each run started closed again: the error said it all.
    await eventually(() => (webviewTabs('attentionLens.heads').some((tab) => tab.label.includes('running…')) ? undefined : true), 'no heads page left of the failed runs');
  });
});
