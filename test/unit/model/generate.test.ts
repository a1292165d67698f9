// Generation with the key/value cache (issue 42) on every causal fixture: the greedy tokens equal
// float64 PyTorch recomputing the whole forward at each step (scripts/gen_generation_references.py,
// prompts chosen so no step is a near-tie), the run's attentions equal one float64 forward over
// the final sequence, and the rows the cached steps computed equal that run's rows. Then EOS,
// sampling's seed, cancelling, the decode step's problem, and each refusal in one line.
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAttention } from '../../../src/core/engine/index';
import { decodeStepSpec, GenerationError, generateModel, type PromptAttention } from '../../../src/core/model/generate';
import type { ModelRun } from '../../../src/core/model/run';
import { folderFiles } from '../../../src/node/modelFiles';
import { generationReferences, modelFixture, type ModelFixtureName, REFERENCE_TOLERANCE } from './fixtures';

/** Largest |step row − the run's row| over every step, layer and head. */
function cachedRowDifference(run: ModelRun): number {
  let worst = 0;
  const n = run.queryCount;
  for (const step of run.generation!.steps) {
    const q = step.position - 1;
    for (let l = 0; l < run.layerCount; l++) {
      for (let h = 0; h < run.headCount; h++) {
        const row = run.weights(l, h).subarray(q * n, q * n + q + 1);
        const cached = step.attention[l].subarray(h * (q + 1), (h + 1) * (q + 1));
        for (let k = 0; k <= q; k++) worst = Math.max(worst, Math.abs(row[k] - cached[k]));
      }
    }
  }
  return worst;
}

/** Largest |prompt attention − the run's row| over the prompt's rows (all but its last token), every layer and head. */
function promptDifference(run: ModelRun, prompt: PromptAttention): number {
  assert.equal(prompt.queries, run.generation!.promptLength - 1);
  assert.deepEqual([prompt.layers, prompt.heads], [run.layerCount, run.headCount]);
  const triangle = (prompt.queries * (prompt.queries + 1)) / 2;
  assert.equal(prompt.weights!.length, run.layerCount * run.headCount * triangle);
  let worst = 0;
  const n = run.queryCount;
  for (let l = 0; l < run.layerCount; l++) {
    for (let h = 0; h < run.headCount; h++) {
      const w = run.weights(l, h);
      for (let q = 0; q < prompt.queries; q++) {
        for (let k = 0; k <= q; k++) worst = Math.max(worst, Math.abs(w[q * n + k] - prompt.weights![(l * run.headCount + h) * triangle + (q * (q + 1)) / 2 + k]));
      }
    }
  }
  return worst;
}

describe('generation with a key/value cache', function () {
  this.timeout(300_000);
  const expected = generationReferences();

  for (const name of Object.keys(expected)) {
    it(`${name}: greedy tokens as PyTorch's whole-forward steps; attentions as one forward; cached rows and the prompt's attention equal it`, async () => {
      const reference = expected[name];
      let prompt: PromptAttention | undefined;
      const run = await generateModel(folderFiles(modelFixture(name as ModelFixtureName)), { ids: reference.prompt }, { maxNewTokens: reference.generated.length, onPrompt: (attention) => (prompt = attention) });
      const generation = run.generation!;
      assert.deepEqual(generation.steps.map((step) => step.id), reference.generated, `${name} (margin ${reference.margin})`);
      assert.equal(generation.promptLength, reference.prompt.length);
      assert.deepEqual(run.tokenIds, [...reference.prompt, ...reference.generated]);
      assert.ok(generation.stoppedBy === 'length' || (generation.stoppedBy === 'eos' && generation.eosIds.includes(reference.generated.at(-1)!)), generation.stoppedBy);
      generation.steps.forEach((step, i) => {
        assert.equal(step.position, reference.prompt.length + i);
        assert.equal(step.candidates.top[0].id, step.id, 'greedy: the first candidate is the choice');
      });
      const n = run.queryCount;
      let worst = 0;
      reference.attentions.forEach((layer, l) =>
        layer.forEach((head, h) => {
          const w = run.weights(l, h);
          head.forEach((row, q) => row.forEach((v, k) => (worst = Math.max(worst, Math.abs(w[q * n + k] - v)))));
        }),
      );
      assert.ok(worst < REFERENCE_TOLERANCE.attention, `${name}: attentions differ by ${worst}`);
      const cached = cachedRowDifference(run);
      assert.ok(cached < 1e-5, `${name}: the cached rows differ from one forward's by ${cached}`);
      const prompted = promptDifference(run, prompt!);
      assert.ok(prompted < 1e-5, `${name}: the prompt's attention differs from one forward's by ${prompted}`);
    });
  }

  it('stops after an end-of-sequence token from generation_config.json, a list, and keeps it', async () => {
    const { prompt, generated } = expected['llama-gqa-bf16'];
    const folder = mkdtempSync(join(tmpdir(), 'generate-eos-'));
    try {
      cpSync(modelFixture('llama-gqa-bf16'), folder, { recursive: true });
      writeFileSync(join(folder, 'generation_config.json'), JSON.stringify({ eos_token_id: [9999, generated[2]] }));
      const run = await generateModel(folderFiles(folder), { ids: prompt }, { maxNewTokens: generated.length });
      assert.equal(run.generation!.stoppedBy, 'eos');
      assert.deepEqual(run.generation!.steps.map((step) => step.id), generated.slice(0, 3));
      assert.equal(run.tokenIds.at(-1), generated[2]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('samples the same tokens from the same seed, inside each step\'s top-k', async () => {
    const files = folderFiles(modelFixture('llama-yarn'));
    const { prompt } = expected['llama-yarn'];
    const sample = async (seed: number) => (await generateModel(files, { ids: prompt }, { maxNewTokens: 8, sampling: { temperature: 1.5, topK: 3, seed } })).generation!.steps;
    const [a, b, c] = [await sample(7), await sample(7), await sample(8)];
    assert.deepEqual(a.map((s) => s.id), b.map((s) => s.id));
    assert.notDeepEqual(a.map((s) => s.id), c.map((s) => s.id));
    for (const step of [...a, ...c]) assert.ok(step.candidates.top.slice(0, 3).some((t) => t.id === step.id), `${step.id} outside the top 3`);
  });

  it('an aborted signal stops at once; the run covers the tokens chosen so far', async () => {
    const { prompt } = expected.qwen3;
    const abort = new AbortController();
    const seen: number[] = [];
    const run = await generateModel(folderFiles(modelFixture('qwen3')), { ids: prompt }, {
      maxNewTokens: 8,
      signal: abort.signal,
      onStep: (step) => {
        seen.push(step.id);
        if (step.index === 2) abort.abort();
      },
    });
    assert.equal(run.generation!.stoppedBy, 'cancelled');
    assert.equal(seen.length, 3);
    assert.deepEqual(run.tokenIds, [...prompt, ...seen]);
  });

  it("opens a generated token's head as the engine's decode step, equal to the run's row", async () => {
    const { prompt, generated } = expected['mistral-window'];
    const run = await generateModel(folderFiles(modelFixture('mistral-window')), { ids: prompt }, { maxNewTokens: generated.length });
    const position = run.queryCount - 2;
    const spec = await decodeStepSpec(run, 1, 3, position);
    assert.ok(spec.options.decode);
    const result = runAttention(spec);
    const row = run.weights(1, 3).subarray(position * run.queryCount, position * run.queryCount + position + 1);
    const step = result.heads[0].weights.data;
    assert.equal(step.length, position + 1);
    for (let k = 0; k <= position; k++) assert.ok(Math.abs(step[k] - row[k]) < 1e-5, `key ${k}: ${step[k]} against ${row[k]}`);
    assert.ok(result.decode!.maxDifference < 1e-9);
  });

  it("warns where RoPE's frequencies change with the length (longrope past its original length), and not before", async () => {
    const files = folderFiles(modelFixture('phi3-longrope-bf16'));
    const { prompt } = expected['phi3-longrope-bf16'];
    const within = await generateModel(files, { ids: prompt }, { maxNewTokens: 8 - prompt.length });
    assert.deepEqual(within.warnings, []);
    const past = await generateModel(files, { ids: prompt }, { maxNewTokens: 9 - prompt.length });
    assert.match(past.warnings.join('\n'), /RoPE frequencies change with the sequence's length .* one forward over the 9 tokens/);
  });

  it('a checkpoint without an LM head is refused before its prompt runs', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'generate-no-head-'));
    try {
      cpSync(modelFixture('llama-gqa-bf16'), folder, { recursive: true });
      const file = join(folder, 'model.safetensors');
      const bytes = readFileSync(file);
      const length = Number(bytes.readBigUInt64LE(0));
      // The same header with the head's name changed (same length): the checkpoint then has no head.
      const header = bytes.subarray(8, 8 + length).toString('utf8').replace('"lm_head.weight"', '"lm_hide.weight"');
      writeFileSync(file, Buffer.concat([bytes.subarray(0, 8), Buffer.from(header), bytes.subarray(8 + length)]));
      await assert.rejects(generateModel(folderFiles(folder), { ids: [5, 6] }, { maxNewTokens: 2 }), (e: Error) => e instanceof GenerationError && /has no LM head/.test(e.message));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('refuses in one line: a count that is not a whole number ≥ 1, an encoder, a prompt + N past the positions, bad sampling', async () => {
    const gpt2 = folderFiles(modelFixture('gpt2'));
    const refused = async (promise: Promise<unknown>, pattern: RegExp) =>
      assert.rejects(promise, (e: Error) => e instanceof RangeError && pattern.test(e.message) && !e.message.includes('\n'));
    for (const n of [0, -3, Number.NaN, 1.5]) await refused(generateModel(gpt2, { ids: [1, 2] }, { maxNewTokens: n }), /whole number of at least 1/);
    await assert.rejects(generateModel(folderFiles(modelFixture('bert')), { ids: [2, 5, 3] }, { maxNewTokens: 4 }), (e: Error) => e instanceof GenerationError && /this is an encoder \(bert\)/.test(e.message));
    await refused(generateModel(gpt2, { ids: [1, 2, 3, 4] }, { maxNewTokens: 61 }), /4 tokens and 61 new ones need 65 positions, past the model's 64: ask for at most 60/);
    await refused(generateModel(gpt2, { ids: [1, 2] }, { maxNewTokens: 2, sampling: { temperature: 0, seed: 1 } }), /temperature must be a number above 0/);
    await refused(generateModel(gpt2, { ids: [1, 2] }, { maxNewTokens: 2, sampling: { temperature: 1, topP: 1.5, seed: 1 } }), /top-p must be above 0 and at most 1/);
  });
});
