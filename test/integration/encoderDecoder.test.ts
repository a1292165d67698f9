// Encoder–decoder models inside a real VS Code (issue 43). Saved attentions: Show Heads on the
// outputs dict a PyTorch user saves (encoder_attentions, decoder_attentions, cross_attentions with
// input_ids and decoder_input_ids) is read in the worker and its page opens, titled by the file
// once read; a file whose cross-attention has another source length than its encoder gives one
// message naming both tensors, and no page stays open. Model runs: a fixture Marian folder run on
// a source and a target from the palette command (given, Generate picked when asked, or both typed into
// its boxes — a T5 folder, its tokenizer's ids checked) and from a
// note's directive, its heads page, an
// encoder, a decoder and a cross head each opened step by step with the weights PyTorch computed,
// and its config.json's CodeLens. The page's views themselves are tested in Chromium
// (test/browser/headsEncoderDecoder.test.ts).
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ModelRunOutcome } from '../../src/features/models';
import type { RunOutcome } from '../../src/features/runner';
import type { AttentionResult } from '../../src/core/types';
import { REFERENCE_TOLERANCE } from '../unit/model/fixtures';
import { languageReference, seq2seqFixture, seq2seqReference } from '../unit/seq2seq/fixtures';
import { activateApi, closeAllEditors, codeLenses, eventually, repoUri, typeInQuickInput } from './support';

const fixture = (...parts: string[]) => repoUri('test', 'fixtures', 'heads', 'encoder-decoder', ...parts);
const headsTabs = () =>
  vscode.window.tabGroups.all.flatMap((group) => group.tabs).filter((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.includes('attentionLens.heads'));

describe('saved encoder–decoder attentions', function () {
  this.timeout(60_000);
  afterEach(closeAllEditors);

  for (const file of [['ids', 'outputs.pt'], ['npz', 'stacked.npz'], ['safetensors', 'layers.safetensors']]) {
    it(`Show Heads reads ${file.join('/')} and opens its page`, async () => {
      const api = await activateApi();
      const before = api.commandErrors.length;
      await vscode.commands.executeCommand('attentionLens.showHeads', fixture(...file));
      await eventually(() => headsTabs().find((tab) => tab.label === `Heads: ${file[1]}`), 'the page titled by the file once read');
      assert.deepEqual(api.commandErrors.slice(before), []);
    });
  }

  it('says in one message why a cross-attention that does not fit its encoder cannot be shown', async () => {
    const api = await activateApi();
    const before = api.commandErrors.length;
    await vscode.commands.executeCommand('attentionLens.showHeads', fixture('bad', 'source-mismatch.pt'));
    assert.deepEqual(api.commandErrors.slice(before), ['The source lengths disagree: `encoder_attentions.0` (1×4×7×7) has 7 source positions but `cross_attentions.0` (1×2×8×6) has 6.']);
    await eventually(() => (headsTabs().length === 0 ? true : undefined), 'the page closed');
  });
});

describe('an encoder–decoder model run', function () {
  this.timeout(120_000);
  afterEach(closeAllEditors);
  const folder = () => seq2seqFixture('marian-f16');

  it('runs on a source and a target; an encoder, a decoder and a cross head each open step by step with PyTorch\'s weights', async () => {
    const reference = seq2seqReference('marian-f16');
    const outcome = await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runModel', folder(), { ids: reference.source_ids, target: { ids: reference.target_ids } });
    const summary = outcome?.summary;
    assert.ok(summary, outcome?.error ?? 'no summary');
    assert.equal(summary.architecture, 'marian');
    assert.deepEqual(summary.tokenIds, reference.target_ids, 'the run is its cross-attention: the target\'s queries');
    await eventually(() => headsTabs().find((tab) => !tab.label.includes('running…')), 'the run\'s heads page');
    const references = { encoder: reference.encoder_attentions, decoder: reference.decoder_attentions, cross: reference.cross_attentions };
    for (const [kind, layer, head] of [['encoder', 1, 0], ['decoder', 0, 1], ['cross', 1, 1]] as const) {
      const opened: RunOutcome | undefined = await vscode.commands.executeCommand<RunOutcome>('attentionLens.openModelHead', summary.run, layer, head, kind);
      const result: AttentionResult | undefined = opened?.run?.runs[0]?.result;
      assert.ok(result, opened?.failures[0]?.error ?? `${kind} L${layer} H${head} did not run`);
      const want = references[kind][layer][head];
      assert.equal(result.heads[0].weights.rows, want.length, `${kind}: its queries`);
      assert.equal(result.heads[0].weights.cols, want[0].length, `${kind}: its keys`);
      let worst = 0;
      want.flat().forEach((value, i) => (worst = Math.max(worst, Math.abs(result.heads[0].weights.data[i] - value))));
      assert.ok(worst < REFERENCE_TOLERANCE.attention, `${kind} L${layer} H${head}: max |difference| ${worst}`);
    }
  });

  it('the palette asks an encoder–decoder folder for its target: Generate decodes greedily, as PyTorch does', async () => {
    const reference = seq2seqReference('marian-f16');
    let finished: ModelRunOutcome | null | undefined;
    void Promise.resolve(vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runModel', folder(), { ids: reference.source_ids })).then((outcome) => (finished = outcome ?? null));
    // The picker's first item is Generate: accepted as a person pressing Enter would.
    const outcome = await eventually(async () => {
      if (finished === undefined) await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      return finished;
    }, 'the target picker accepted', 60_000);
    const ids = outcome?.summary?.tokenIds ?? [];
    // PyTorch's greedy decoding of `reference.generate` tokens is where ours (up to 20) begins.
    assert.deepEqual(ids.slice(0, reference.generated.length), reference.generated, outcome?.error);
    assert.ok(ids.length <= 21, `${ids.length} target tokens`);
  });

  it('the palette\'s "Type the target…": the source and the target typed into its boxes are tokenized as the tokenizer does', async () => {
    const reference = seq2seqReference('t5-v1_0');
    assert.ok(reference.source_text && reference.target_text, 'the fixture has a tokenizer.json');
    const running = vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runModel', seq2seqFixture('t5-v1_0'));
    // No editor holds a selection, so the source is asked for; then the target, typed.
    await typeInQuickInput('Run Model on Text', reference.source_text);
    await typeInQuickInput('its target?', 'Type the target');
    await typeInQuickInput('the target', reference.target_text);
    const outcome = await running;
    const summary = outcome?.summary;
    assert.ok(summary, outcome?.error ?? 'no summary');
    // decoder_start_token_id, then the target's ids as the script's split of the text gives them.
    assert.deepEqual(summary.tokenIds, reference.target_ids);
    assert.equal(summary.tokens.length, reference.target_ids.length);
    await eventually(() => headsTabs().find((tab) => tab.label.startsWith('Heads: t5-v1_0') && !tab.label.includes('running…')), 'the run\'s heads page, titled by the folder');
    // The source typed: the encoder's weights are PyTorch's on the source's ids.
    const opened = await vscode.commands.executeCommand<RunOutcome>('attentionLens.openModelHead', summary.run, 0, 1, 'encoder');
    const weights = opened?.run?.runs[0]?.result?.heads[0]?.weights;
    assert.ok(weights, opened?.failures[0]?.error ?? 'the encoder head did not run');
    const want = reference.encoder_attentions[0][1];
    assert.equal(weights.rows, reference.source_ids.length, 'the source\'s tokens');
    let worst = 0;
    want.flat().forEach((value, i) => (worst = Math.max(worst, Math.abs(weights.data[i] - value))));
    assert.ok(worst < REFERENCE_TOLERANCE.attention, `encoder L0 H1: max |difference| ${worst}`);
  });

  it('an mBART-50 folder: the palette offers its tokenizer\'s language codes for the source and the target, and places them as transformers does', async () => {
    const reference = languageReference('mbart-50');
    const running = vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runModel', seq2seqFixture('mbart-50'));
    await typeInQuickInput('Run Model on Text', reference.source_text!);
    await typeInQuickInput('its target?', 'Type the target');
    await typeInQuickInput('the target', reference.target_text!);
    await typeInQuickInput('source’s language', reference.languages.source);
    await typeInQuickInput('target’s language', reference.languages.target);
    const outcome = await running;
    const summary = outcome?.summary;
    assert.ok(summary, outcome?.error ?? 'no summary');
    // </s>, ro_RO, the target's words, </s>: as the reference places the target's code.
    assert.deepEqual(summary.tokenIds, reference.target_ids);
    assert.deepEqual(summary.tokens.slice(0, 2), ['</s>', reference.languages.target]);
    // The source in fr_XX: the encoder's weights are PyTorch's on [fr_XX] X </s>.
    const opened = await vscode.commands.executeCommand<RunOutcome>('attentionLens.openModelHead', summary.run, 1, 2, 'encoder');
    const weights = opened?.run?.runs[0]?.result?.heads[0]?.weights;
    assert.ok(weights, opened?.failures[0]?.error ?? 'the encoder head did not run');
    let worst = 0;
    reference.encoder_attentions[1][2].flat().forEach((value, i) => (worst = Math.max(worst, Math.abs(weights.data[i] - value))));
    assert.ok(worst < REFERENCE_TOLERANCE.attention, `encoder L1 H2: max |difference| ${worst}`);
  });

  it('an mBART-50 directive\'s src_lang and tgt_lang: its run places those codes; a code the tokenizer lacks is one message listing its codes', async () => {
    const reference = languageReference('mbart-50');
    const scratch = mkdtempSync(join(tmpdir(), 'attention-lens-mbart-'));
    try {
      const note = join(scratch, 'languages.md');
      const folder = seq2seqFixture('mbart-50');
      writeFileSync(note, `<!-- attention: model="${folder}" text="${reference.source_text}" target="${reference.target_text}" src_lang=${reference.languages.source} tgt_lang="${reference.languages.target}" -->\n\n<!-- attention: model="${folder}" text="the cat" src_lang=xx_XX tgt_lang=de_DE generate=2 -->\n`);
      const document = await vscode.workspace.openTextDocument(note);
      await vscode.window.showTextDocument(document);
      const outcome = await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runProblem', document.uri, 0);
      assert.deepEqual(outcome?.summary?.tokenIds, reference.target_ids, outcome?.error);
      const refused = await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runProblem', document.uri, 1);
      assert.equal(refused?.summary, undefined);
      assert.match(refused?.error ?? '', /no source language "xx_XX": this tokenizer's are en_XX, de_DE, fr_XX, ro_RO$/);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('runs from a note\'s directive with its target or generate=N, and says at its place what is wrong with a bad one', async () => {
    const reference = seq2seqReference('marian-f16');
    const scratch = mkdtempSync(join(tmpdir(), 'attention-lens-seq2seq-'));
    try {
      const note = join(scratch, 'translation.md');
      writeFileSync(note, `# A translation\n\n<!-- attention: model="${folder()}" ids="${reference.source_ids.join(' ')}" target_ids="${reference.target_ids.join(' ')}" -->\n\n<!-- attention: model="${folder()}" ids="1 2" generate=0 -->\n\n<!-- attention: model="${folder()}" ids="${reference.source_ids.join(' ')}" generate=${reference.generate} -->\n`);
      const document = await vscode.workspace.openTextDocument(note);
      await vscode.window.showTextDocument(document);
      const diagnostic = await eventually(() => vscode.languages.getDiagnostics(document.uri).find((d) => d.message.includes('generate')), 'the diagnostic of generate=0');
      assert.equal(document.getText(diagnostic.range), '0');
      const outcome = await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runProblem', document.uri, 0);
      assert.deepEqual(outcome?.summary?.tokenIds, reference.target_ids, outcome?.error);
      // `generate=N` on an encoder–decoder folder: its target, decoded greedily as PyTorch does.
      const generated = await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runProblem', document.uri, 2);
      assert.deepEqual(generated?.summary?.tokenIds, reference.generated, generated?.error);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('its config.json gets "Run on source and target…"', async () => {
    const config = vscode.Uri.file(join(folder(), 'config.json'));
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(config));
    const lenses = await eventually(async () => {
      const found = (await codeLenses(config)).filter((lens) => lens.command === 'attentionLens.runModel');
      return found.length > 0 ? found : undefined;
    }, 'the config.json CodeLens');
    assert.equal(lenses[0].title, '▶ Run on source and target…');
  });
});
