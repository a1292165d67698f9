// Generation in the editor, on the GPT-2 fixture (scripts/gen_model_fixtures.py): the config.json
// CodeLens's "Generate…" asks for the text, the count and greedy or sampled, and generates, each
// step reaching the extension's API before the run ends, its heads page open; "Sample…" asks each
// value, an empty one the default; the `generate=N` directive does the same from a note, with
// `sample` and its values drawing the tokens; a bad sampling value and an encoder's `generate=`
// are diagnostics at the word, and an encoder has no Generate lens.
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ModelRunOutcome } from '../../src/features/models';
import type { GenerationStepInfo } from '../../src/protocol';
import { modelFixture } from '../unit/model/fixtures';
import { activateApi, closeAllEditors, codeLenses, eventually } from './support';

const headsPages = () => vscode.window.tabGroups.all.flatMap((group) => group.tabs).filter((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.includes('attentionLens.heads'));

/** Runs `start`, collecting the generated steps the API reports, each with whether the run had ended by then. */
async function collectingSteps(start: () => Thenable<ModelRunOutcome | undefined>): Promise<{ outcome: ModelRunOutcome | undefined; steps: { step: GenerationStepInfo; ended: boolean }[] }> {
  const api = await activateApi();
  const steps: { step: GenerationStepInfo; ended: boolean }[] = [];
  let ended = false;
  const listening = api.onDidGenerateStep((step) => steps.push({ step, ended }));
  try {
    const outcome = await start();
    ended = true;
    return { outcome, steps };
  } finally {
    listening.dispose();
  }
}

/**
 * Answers the questions `running` asks, each with its default (at the indices in `next`, the pick
 * after the first), until it settles: a question shown late under load is answered at the next
 * turn rather than left open. `boxes`: how many it asks (the turns past it only press accept).
 */
async function answering<T>(running: Thenable<T>, boxes: number, next: number[] = []): Promise<T> {
  let settled = false;
  void Promise.resolve(running).then(() => (settled = true), () => (settled = true));
  for (let turn = 0; turn < boxes + 10 && !settled; turn++) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    if (!settled && next.includes(turn)) await vscode.commands.executeCommand('workbench.action.quickOpenSelectNext');
    if (!settled) await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
  }
  return running;
}

describe('generation', function () {
  this.timeout(180_000);
  before(activateApi);
  afterEach(closeAllEditors);

  it('config.json’s “Generate…” asks for the text and the count, and each step arrives before the run ends', async () => {
    const folder = modelFixture('gpt2');
    const config = vscode.Uri.file(join(folder, 'config.json'));
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(config));
    const lens = await eventually(async () => (await codeLenses(config)).find((found) => found.command === 'attentionLens.generate'), 'the Generate… lens');
    assert.equal(lens.title, 'Generate…');
    // The text and the count boxes, accepted with their defaults ("Once upon a time", 40), and
    // Greedy; the fixture has no chat template, so no question about it.
    const { outcome, steps } = await collectingSteps(() => answering(vscode.commands.executeCommand<ModelRunOutcome | undefined>(lens.command, ...lens.args), 3));
    const generation = outcome?.summary?.generation;
    assert.ok(generation, outcome?.error ?? 'no generation');
    assert.deepEqual(generation.decoding, {}, 'greedy');
    assert.ok(generation.steps.length >= 1 && generation.steps.length <= 40);
    assert.deepEqual(steps.map(({ step }) => step), generation.steps, 'every step reported, in order');
    assert.ok(steps.every(({ ended }) => !ended), 'each step arrived while the run was under way');
    await eventually(() => (headsPages().length > 0 ? true : undefined), 'the generation’s heads page');
  });

  it('from the palette on a model run’s heads page: that model, the text and count asked', async () => {
    const folder = modelFixture('gpt2');
    const ran = await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runModel', folder, { ids: [464, 3797, 3332] });
    assert.ok(ran?.summary);
    await eventually(() => {
      const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
      return tab?.input instanceof vscode.TabInputWebview && !tab.label.includes('running…') ? true : undefined;
    }, 'the run’s heads page in front, its run shown');
    // The page's view state reaches the extension after the tab's.
    const api = await activateApi();
    await eventually(() => (api.currentPlace()?.kind === 'model' ? true : undefined), 'the extension told that the heads page has the focus');
    const { outcome, steps } = await collectingSteps(() => answering(vscode.commands.executeCommand<ModelRunOutcome | undefined>('attentionLens.generate'), 3));
    assert.equal(outcome?.summary?.folder, folder, 'the model of the page in front');
    assert.ok(outcome?.summary?.generation && steps.length === outcome.summary.generation.steps.length);
  });

  it('a folder with a chat template: Generate… asks whether the text is a chat message, and sends it through the template', async () => {
    const folder = join(mkdtempSync(join(tmpdir(), 'attention-lens-chat-')), 'gpt2-chat');
    cpSync(modelFixture('gpt2'), folder, { recursive: true });
    const configFile = join(folder, 'tokenizer_config.json');
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
    writeFileSync(configFile, JSON.stringify({ ...config, eos_token: '<|endoftext|>', chat_template: '{% for m in messages %}{{ eos_token }}{{ m.role }}: {{ m.content }}\n{% endfor %}{{ eos_token }}assistant:' }));
    // Text, count, then "As a chat message" (the first choice), and Greedy.
    const { outcome } = await collectingSteps(() => answering(vscode.commands.executeCommand<ModelRunOutcome | undefined>('attentionLens.generate', folder), 4));
    const summary = outcome?.summary;
    assert.ok(summary?.generation, outcome?.error ?? 'no generation');
    const prompt = summary.tokens.slice(0, summary.generation.promptLength);
    assert.deepEqual(prompt.slice(0, 3), ['<|endoftext|>', 'user', ':'], 'the template’s text, its special token one id');
    assert.equal(prompt.at(-1), ':');
  });

  it('Generate…’s “Sample…” asks each value; empty ones are the defaults', async () => {
    // Text, count, "Sample…" (the second pick), then temperature, top-k, top-p and seed left empty.
    const { outcome } = await collectingSteps(() => answering(vscode.commands.executeCommand<ModelRunOutcome | undefined>('attentionLens.generate', modelFixture('gpt2')), 7, [2]));
    const generation = outcome?.summary?.generation;
    assert.ok(generation, outcome?.error ?? 'no generation');
    assert.deepEqual(generation.decoding, { sampling: { temperature: 1, topK: 50, seed: 0 }, sources: { temperature: 'default', topK: 'default', topP: 'default', seed: 'default' } });
  });

  it('a note’s sample with its values draws the tokens; a bad value is a diagnostic at it', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'attention-lens-generate-')), 'note.md');
    writeFileSync(path, `<!-- attention: model="${modelFixture('gpt2')}" text="Once upon a time" generate=4 sample temperature=1.5 top_k=3 seed=7 -->\n\n<!-- attention: model="${modelFixture('gpt2')}" text="a" generate=4 sample top_p=1.5 -->\n`);
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
    await vscode.window.showTextDocument(document);
    const diagnostic = await eventually(() => vscode.languages.getDiagnostics(document.uri).find((found) => found.code === 'bad-option-value'), 'the bad top_p’s diagnostic');
    assert.equal(document.getText(diagnostic.range), '1.5');
    assert.equal(diagnostic.message, '`top_p` must be a number above 0 and at most 1, e.g. `top_p=0.9`.');
    const draw = async () => (await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runProblem', document.uri, 0))?.summary?.generation;
    const [first, again] = [await draw(), await draw()];
    assert.ok(first && again);
    assert.deepEqual(first.decoding, { sampling: { temperature: 1.5, topK: 3, seed: 7 }, sources: { temperature: 'given', topK: 'given', topP: 'default', seed: 'given' } });
    assert.deepEqual(again.steps.map((step) => step.id), first.steps.map((step) => step.id), 'the same seed, the same tokens');
    for (const step of first.steps) assert.ok(step.candidates.top.slice(0, 3).some((candidate) => candidate.id === step.id), `${step.token} outside the top 3`);
  });

  it('a note’s generate=N generates that many tokens after its text', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'attention-lens-generate-')), 'note.md');
    writeFileSync(path, `# A story\n<!-- attention: model="${modelFixture('gpt2')}" text="Once upon a time" generate=3 -->\n`);
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
    await vscode.window.showTextDocument(document);
    const lens = await eventually(async () => (await codeLenses(document.uri)).find((found) => found.title.startsWith('▶ Generate')), 'the directive’s lens');
    assert.equal(lens.title, '▶ Generate 3 tokens');
    const { outcome, steps } = await collectingSteps(() => vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runProblem', document.uri, 0));
    const generation = outcome?.summary?.generation;
    assert.ok(generation, outcome?.error ?? 'no generation');
    assert.equal(generation.steps.length, steps.length);
    assert.ok(generation.stoppedBy === 'length' ? generation.steps.length === 3 : generation.stoppedBy === 'eos');
    assert.ok(steps.length > 0 && steps.every(({ ended }) => !ended));
  });

  it('generate= on an encoder: a diagnostic at the word; its config.json has no Generate… lens', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'attention-lens-generate-')), 'note.md');
    const text = `<!-- attention: model="${modelFixture('bert')}" text="The cat sat" generate=5 -->\n`;
    writeFileSync(path, text);
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
    await vscode.window.showTextDocument(document);
    const diagnostic = await eventually(() => vscode.languages.getDiagnostics(document.uri).find((found) => found.code === 'model-cannot-generate'), 'the encoder’s diagnostic');
    assert.equal(document.getText(diagnostic.range), 'generate=5');
    assert.match(diagnostic.message, /encoder/);
    const config = vscode.Uri.file(join(modelFixture('bert'), 'config.json'));
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(config));
    await eventually(async () => ((await codeLenses(config)).some((found) => found.command === 'attentionLens.runModel') ? true : undefined), 'the Run model lens');
    assert.equal((await codeLenses(config)).some((found) => found.command === 'attentionLens.generate'), false);
  });
});
