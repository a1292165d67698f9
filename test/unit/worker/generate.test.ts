// Generations through the worker thread, as "Attention: Generate…" runs them: the prompt posted
// before the first step, then each step with its attention row as it is chosen (the row the run's
// stack answers for that step afterwards); Stop ending the generation after its current step,
// keeping what it made; a newer run dropping the one under way; a chat message going through the
// folder's chat template; a step opened as its decode step; and `generate=` on an encoder, or
// `sample` where it cannot draw, getting its diagnostic at the word when the text is read.
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { parseDocument } from '../../../src/core/parse/index';
import type { GenerationProgress } from '../../../src/worker/client';
import { AttentionWorker, RunCancelledError } from '../../../src/worker/client';
import { withGenerateChecks } from '../../../src/worker/modelDirectives';
import { modelFixture, modelReference } from '../model/fixtures';
import { seq2seqFixture } from '../seq2seq/fixtures';

const MEMORY = 8 * 2 ** 30;

describe('worker: generations', function () {
  this.timeout(120_000);
  let worker: AttentionWorker;
  before(() => (worker = new AttentionWorker(join(__dirname, 'tsWorker.cjs'), { maxOldGenerationSizeMb: 512 }, () => undefined)));
  after(() => worker.dispose());

  const generate = (folder: string, input: { text: string } | { ids: number[] }, maxNewTokens: number, progress: (message: GenerationProgress) => void, chat = false) =>
    worker.runModel(folder, input, MEMORY, { options: { maxNewTokens, ...(chat ? { chat } : {}) }, progress });

  it('posts the prompt, then each step with the row it was chosen from, which the run answers alike afterwards', async () => {
    const messages: GenerationProgress[] = [];
    const summary = await generate(modelFixture('gpt2'), { text: modelReference('gpt2').text! }, 5, (message) => messages.push(message));
    const generation = summary.generation!;
    assert.equal(messages[0].type, 'modelGenerating');
    if (messages[0].type === 'modelGenerating') assert.deepEqual(messages[0].prompt, summary.tokens.slice(0, generation.promptLength));
    assert.equal(messages[1].type, 'modelPrompt', 'the prompt\'s attention before the first step');
    if (messages[1].type === 'modelPrompt') assert.deepEqual([messages[1].attention.queries, messages[1].attention.weights?.length], [generation.promptLength - 1, summary.layerCount * summary.headCount * ((generation.promptLength - 1) * generation.promptLength) / 2]);
    const steps = messages.flatMap((message) => (message.type === 'modelStep' ? [message] : []));
    assert.deepEqual(steps.map((message) => message.step), generation.steps, 'the steps posted are the run’s');
    assert.equal(generation.steps.length, summary.tokens.length - generation.promptLength);
    const opened = await worker.modelHeads(summary.run);
    assert.deepEqual(opened.info.generation, generation);
    for (const { step, row } of steps) {
      assert.deepEqual([row.position, row.keys, row.layers, row.heads], [step.position - 1, step.position, summary.layerCount, summary.headCount]);
      const answer = await worker.queryHeads(opened.stack, { kind: 'row', position: row.position });
      assert.ok(answer.kind === 'row');
      assert.equal(answer.row.weights.length, row.weights.length);
      answer.row.weights.forEach((value, i) => assert.ok(Math.abs(value - row.weights[i]) < 1e-5, `step ${step.index} weight ${i}: ${value} vs ${row.weights[i]}`));
    }
  });

  it('Stop ends the generation after its current step and keeps it; a newer run drops the one under way', async () => {
    const ids = modelReference('gpt2').token_ids;
    let seen = 0;
    // As many new tokens as the fixture's 64 positions allow, so that Stop lands before the end. The
    // worker reads Stop between steps and posts each step as it goes: by the time the host has
    // read step 2 and said Stop, the worker may have chosen a token or two more, which it keeps.
    const asked = 64 - ids.length;
    const stopped = await generate(modelFixture('gpt2'), { ids }, asked, (message) => {
      if (message.type === 'modelStep' && ++seen === 2) worker.stopGeneration();
    });
    assert.equal(stopped.generation?.stoppedBy, 'cancelled');
    const kept = stopped.generation!.steps.length;
    assert.ok(kept >= 2 && kept < asked, `${kept} steps kept of ${asked}`);
    assert.equal(stopped.tokens.length, ids.length + kept);
    const first = generate(modelFixture('gpt2'), { ids }, 20, () => undefined);
    const second = worker.runModel(modelFixture('gpt2'), { ids: ids.slice(0, 2) }, MEMORY);
    await assert.rejects(first, RunCancelledError);
    assert.equal((await second).tokens.length, 2);
  });

  it('opens a generated step as its decode step: the row of the token before it, over every key up to it', async () => {
    const summary = await generate(modelFixture('gpt2'), { ids: modelReference('gpt2').token_ids }, 3, () => undefined);
    const step = summary.generation!.steps[1];
    const spec = await worker.modelHead(summary.run, 1, 0, undefined, 1);
    assert.equal(spec.options.decode, true);
    assert.equal(spec.tokens?.length, step.position);
    await assert.rejects(worker.modelHead(summary.run, 1, 0, undefined, 7), /no generated step 7/);
  });

  describe('a chat message', () => {
    let folder: string;
    before(() => {
      folder = mkdtempSync(join(tmpdir(), 'attention-lens-chat-model-'));
      cpSync(modelFixture('gpt2'), folder, { recursive: true });
      const config = JSON.parse(readFileSync(join(folder, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
      // A template in ChatML's shape over GPT-2's one special token.
      config.chat_template = "{% for message in messages %}{{ eos_token }}{{ message.role }}: {{ message.content }}\n{% endfor %}{% if add_generation_prompt %}{{ eos_token }}assistant:{% endif %}";
      config.eos_token = '<|endoftext|>';
      writeFileSync(join(folder, 'tokenizer_config.json'), JSON.stringify(config));
    });
    after(() => rmSync(folder, { recursive: true, force: true }));

    it('goes through the folder’s chat template, its special token one id as written', async () => {
      let prompt: string[] = [];
      const summary = await generate(folder, { text: 'Hi there' }, 2, (message) => message.type === 'modelGenerating' && (prompt = message.prompt), true);
      assert.deepEqual(prompt, summary.tokens.slice(0, summary.generation!.promptLength));
      assert.deepEqual(prompt.slice(0, 5), ['<|endoftext|>', 'user', ':', '␣Hi', '␣there']);
      assert.equal(prompt.filter((token) => token === '<|endoftext|>').length, 2);
      await assert.rejects(generate(modelFixture('gpt2'), { text: 'Hi' }, 2, () => undefined, true), /has no chat template/);
    });
  });

  it('generate= on an encoder: a diagnostic at the word, read from the folder’s config.json; a causal folder none', async () => {
    const note = join(dirname(modelFixture('bert')), 'note.md');
    const text = `<!-- attention: model="${relative(dirname(note), modelFixture('bert'))}" text="a" generate=4 -->\n\n<!-- attention: model="gpt2" text="a" generate=4 -->\n`;
    const parse = parseDocument(text);
    const checked = await withGenerateChecks({ parse, specs: [], statistics: [], readMs: 0 }, dirname(note));
    assert.equal(checked.parse.diagnostics.length, 1);
    const [diagnostic] = checked.parse.diagnostics;
    assert.equal(diagnostic.code, 'model-cannot-generate');
    assert.deepEqual(diagnostic.range, parse.problems[0].optionRanges?.generate);
    assert.match(diagnostic.message, /is an encoder; it fills masked tokens and does not generate/);
  });

  it('sample: a diagnostic at the word on an encoder–decoder folder, and for a generation_config.json value it would use; none where a value given replaces it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'sample-checks-'));
    try {
      cpSync(modelFixture('gpt2'), join(root, 'gpt2'), { recursive: true });
      writeFileSync(join(root, 'gpt2', 'generation_config.json'), JSON.stringify({ do_sample: true, top_p: 1.5 }));
      const t5 = relative(root, seq2seqFixture('t5-v1_0'));
      const text = [
        `<!-- attention: model="${t5}" text="a" generate=4 sample -->`,
        '<!-- attention: model="gpt2" text="a" generate=4 sample -->',
        '<!-- attention: model="gpt2" text="a" generate=4 sample top_p=0.9 -->',
        '',
      ].join('\n\n');
      const parse = parseDocument(text);
      const checked = await withGenerateChecks({ parse, specs: [], statistics: [], readMs: 0 }, root);
      assert.deepEqual(checked.parse.diagnostics.map((d) => [d.code, d.range, d.message]), [
        ['model-cannot-sample', parse.problems[0].optionRanges?.sample, '`sample`: t5 is an encoder–decoder model; its target is generated greedily here.'],
        ['model-cannot-sample', parse.problems[1].optionRanges?.sample, "`sample`: generation_config.json's top_p must be above 0 and at most 1, not 1.5"],
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
