// Weights resident between runs (issue 41): the budget and the least recently used model let go,
// a second run that reads no weight bytes, and the same numbers resident or not.
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDeferredSessions, nativeLinearBackend } from '../../../src/core/engine/native/linear';
import { cachedSessions } from '../../../src/core/engine/native/runtime';
import { admit, release, residentModels } from '../../../src/core/model/resident';
import { generateModel } from '../../../src/core/model/generate';
import { prepareModel, runModel } from '../../../src/core/model/run';
import { type ModelFiles, ReadBuffer, Weights } from '../../../src/core/model/weights';
import { folderFiles } from '../../../src/node/modelFiles';
import { visionFixture, visionReferences } from '../vision/fixtures';
import { modelFixture, modelReference } from './fixtures';

/** The folder's files, counting the bytes read from its safetensors files. */
function counting(folder: string): { files: ModelFiles; bytes: () => number } {
  const files = folderFiles(folder);
  let bytes = 0;
  return {
    files: { folder: files.folder, size: (file) => files.size(file), read: (file, offset, length, into) => ((bytes += file.endsWith('.safetensors') ? length : 0), files.read(file, offset, length, into)) },
    bytes: () => bytes,
  };
}

/** The bytes of the folder's safetensors headers (their length and their JSON): what every run reads to index the tensors. */
function headerBytes(folder: string): number {
  return readdirSync(folder)
    .filter((file) => file.endsWith('.safetensors'))
    .reduce((sum, file) => sum + 8 + Number(readFileSync(join(folder, file)).readBigUInt64LE(0)), 0);
}

/** Largest difference between two arrays of numbers. */
const worst = (a: ArrayLike<number>, b: ArrayLike<number>): number => Math.max(...Array.from(a, (v, i) => Math.abs(v - b[i])));

describe('resident models', function () {
  this.timeout(120000);
  // No session of an earlier test's model is made while the next one counts them.
  afterEach(async () => {
    release();
    await makeDeferredSessions();
  });

  it('admits under the budget, letting the least recently used model go', () => {
    const plan = { storedBytes: 60, constantBytes: 80 };
    const a = admit('a', 'A', plan, false, 100);
    assert.equal(a?.mode, 'stored');
    const b = admit('b', 'B', plan, false, 100);
    assert.equal(b?.mode, 'stored');
    assert.equal(a?.released, true, 'a was the least recently used');
    assert.deepEqual(residentModels().map((m) => m.folder), ['B']);
    assert.equal(admit('c', 'C', plan, true, 90)?.mode, 'constants');
    assert.equal(admit('d', 'D', { storedBytes: 200, constantBytes: 300 }, true, 100), undefined, 'over the budget: read as it runs');
  });

  // The mixtures: their experts kept widened and fed to one graph per group (experts.ts), the rest as constants.
  for (const name of ['gpt2', 'llama-gqa-bf16', 'qwen2-moe-sharded-f16', 'mixtral-bf16'] as const) {
    it(`${name}: the second run reads no weight bytes and gives the first run's numbers, as a run that keeps nothing`, async () => {
      const ids = modelReference(name).token_ids;
      const streamed = await runModel(folderFiles(modelFixture(name)), { ids }, { residentBudgetBytes: 0 });
      assert.equal(streamed.resident, 'streamed');
      const { files, bytes } = counting(modelFixture(name));
      const first = await runModel(files, { ids }, { residentBudgetBytes: 1e9 });
      // What the idle time after a first run does: it fed its weights, and their sessions are made now.
      if (first.backend === 'onnxruntime') assert.equal(cachedSessions('const:'), 0, 'the first run made no constant session on its path');
      await makeDeferredSessions();
      const firstBytes = bytes();
      const second = await runModel(files, { ids }, { residentBudgetBytes: 1e9 });
      assert.notEqual(second.resident, 'streamed');
      assert.equal(bytes() - firstBytes, headerBytes(modelFixture(name)), 'the second run read the safetensors headers and nothing else');
      // ONNX Runtime's pre-packed Gemm rounds as its MatMul on fed weights does, within float32's last digits.
      for (const run of [first, second]) {
        assert.ok(worst(run.logitsLast as Float32Array, streamed.logitsLast as Float32Array) < 1e-4);
        assert.ok(worst(run.weights(0, 0), streamed.weights(0, 0)) < 1e-5);
        assert.deepEqual(run.routing?.layers.map((layer) => Array.from(layer?.experts ?? [])), streamed.routing?.layers.map((layer) => Array.from(layer?.experts ?? [])));
      }
      // A drill-down of a resident run reads the weights ONNX Runtime holds from the file again.
      assert.deepEqual((await second.drillDownSpec(0, 0)).WQ, (await streamed.drillDownSpec(0, 0)).WQ);
    });
  }

  it('a first run feeds its weights, and the idle time after it makes their sessions with no call; a run of a few rows before that makes them as it uses them', async () => {
    const ids = modelReference('gpt2').token_ids;
    const first = await runModel(folderFiles(modelFixture('gpt2')), { ids }, { residentBudgetBytes: 1e9 });
    if (first.backend !== 'onnxruntime') return;
    assert.equal(cachedSessions('const:'), 0);
    // Each layer's products (fused QKV, output, MLP) and the LM head, made one at a time while idle.
    const expected = 3 * modelReference('gpt2').attentions.length + 1;
    while (cachedSessions('const:') < expected) await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    const again = await runModel(folderFiles(modelFixture('gpt2')), { ids }, { residentBudgetBytes: 1e9 });
    assert.equal(cachedSessions('const:'), 0, 'released with its model; the first run of it again feeds its weights');
    const { files, bytes } = counting(modelFixture('gpt2'));
    await runModel(files, { ids: Array.from({ length: 24 }, (_, i) => ids[i % ids.length]) }, { residentBudgetBytes: 1e9 });
    assert.equal(cachedSessions('const:'), 1, 'a second use of many rows feeds the layers again; the LM head, on the last row alone, is made');
    const second = await runModel(files, { ids: ids.slice(0, 8) }, { residentBudgetBytes: 1e9 });
    assert.equal(cachedSessions('const:'), expected, 'made at a later use of a few rows (a generated token)');
    assert.ok(bytes() > headerBytes(modelFixture('gpt2')), 'their stored bytes read again to make them');
    const reference = await runModel(folderFiles(modelFixture('gpt2')), { ids: ids.slice(0, 8) }, { residentBudgetBytes: 0 });
    assert.ok(worst(second.logitsLast as Float32Array, reference.logitsLast as Float32Array) < 1e-4);
    assert.ok(again.logitsLast);
  });

  it('a vision model stays resident too: its second picture reads no weight bytes and gives a run that keeps nothing its numbers', async () => {
    const folder = visionFixture('vit-classifier');
    const [reference] = visionReferences('vit-classifier');
    const image = { name: reference.picture, bytes: readFileSync(join(folder, reference.picture)) };
    const streamed = await runModel(folderFiles(folder), { image }, { residentBudgetBytes: 0 });
    assert.equal(streamed.resident, 'streamed');
    const { files, bytes } = counting(folder);
    const first = await runModel(files, { image }, { residentBudgetBytes: 1e9 });
    await makeDeferredSessions();
    const firstBytes = bytes();
    const second = await runModel(files, { image }, { residentBudgetBytes: 1e9 });
    assert.equal(second.resident, first.backend === 'onnxruntime' ? 'constants' : 'stored');
    assert.equal(bytes() - firstBytes, headerBytes(folder), 'the second run read the safetensors headers and nothing else');
    for (const run of [first, second]) {
      assert.ok(worst(run.hiddenLast, streamed.hiddenLast) < 1e-4);
      assert.ok(worst(run.weights(0, 0), streamed.weights(0, 0)) < 1e-5);
    }
  });

  for (const [label, folder, input] of [
    ['a text model', modelFixture('gpt2'), { ids: modelReference('gpt2').token_ids }],
    ['a vision model', visionFixture('vit-classifier'), { image: { name: 'picture.png', bytes: readFileSync(join(visionFixture('vit-classifier'), visionReferences('vit-classifier')[0].picture)) } }],
  ] as const) {
    it(`${label}'s folder made ready ahead (a note names it) is resident, and once idle its first run reads no weight bytes`, async () => {
      await prepareModel(folderFiles(folder));
      if (nativeLinearBackend() === undefined) return;
      assert.deepEqual(residentModels().map((m) => [m.folder, m.mode]), [[folder, 'constants']]);
      await makeDeferredSessions();
      const { files, bytes } = counting(folder);
      const run = await runModel(files, input, { residentBudgetBytes: 1e9 });
      assert.equal(run.resident, 'constants');
      assert.equal(bytes(), headerBytes(folder), 'the run read the safetensors headers and nothing else');
    });
  }

  it("GPT-NeoX's per-head fused query_key_value is a constant too: once packed, a run feeds no weight of a layer", async () => {
    const folder = modelFixture('pythia-f16');
    const ids = modelReference('pythia-f16').token_ids;
    const streamed = await runModel(folderFiles(folder), { ids }, { residentBudgetBytes: 0 });
    const first = await runModel(folderFiles(folder), { ids }, { residentBudgetBytes: 1e9 });
    if (first.backend !== 'onnxruntime') return;
    await makeDeferredSessions();
    // Per layer: the regrouped Q | K | V, the output and the MLP; and the LM head.
    assert.equal(cachedSessions('const:'), 3 * modelReference('pythia-f16').attentions.length + 1);
    const second = await runModel(folderFiles(folder), { ids }, { residentBudgetBytes: 1e9 });
    assert.ok(worst(second.logitsLast as Float32Array, streamed.logitsLast as Float32Array) < 1e-4);
    assert.ok(worst(second.weights(1, 1), streamed.weights(1, 1)) < 1e-5);
  });

  it('a generation packs every product it uses at once, the LM head at its first token too (each is used again at every token)', async () => {
    const ids = modelReference('gpt2').token_ids;
    let atFirstToken = -1;
    const run = await generateModel(folderFiles(modelFixture('gpt2')), { ids }, { maxNewTokens: 2, residentBudgetBytes: 1e9, onStep: (step) => (atFirstToken = step.index === 0 ? cachedSessions('const:') : atFirstToken) });
    if (run.backend !== 'onnxruntime') return;
    assert.equal(atFirstToken, 3 * modelReference('gpt2').attentions.length + 1, 'every layer product and the LM head packed by the first token');
  });

  it("an LM head's chunk of a resident model is a constant of its rows: the stored rows fed, then a session of its own", async () => {
    const folder = modelFixture('gpt2');
    const { vocab_size: vocab, n_embd: width } = JSON.parse(readFileSync(join(folder, 'config.json'), 'utf8')) as { vocab_size: number; n_embd: number };
    const weights = await Weights.open(folderFiles(folder));
    const model = admit(weights.key, folder, weights.residentPlan(weights.names), true, 1e9);
    weights.residentIn(model);
    const name = weights.first('lm_head.weight', 'wte.weight') as string;
    const [first, count] = [7, 5];
    const buffer = new ReadBuffer();
    const part = await buffer.exclusive(async () => {
      const w = await weights.linear(name, [vocab, width], buffer, { in: width, out: count, transposed: true }, { first, count });
      return { key: w.constant?.key, shape: w.constant?.shape, weight: Float32Array.from(w.weight), reread: await w.constant?.read() };
    });
    const rows = await weights.rows(name, [vocab, width], first, count, undefined, true);
    assert.deepEqual(part.weight, rows);
    assert.deepEqual(new Float32Array((part.reread as Uint8Array).slice().buffer), rows, 'read again alone for its session');
    assert.deepEqual(part.shape, [count, width]);
    assert.ok(part.key?.endsWith(`${name}:${first}+${count}`), 'keyed by its rows, apart from the whole tensor and other chunks');
  });

  it('two resident mixtures run in turn each keep their own experts (float32 ones copied out of the reused read memory)', async () => {
    const run = async (name: 'olmoe' | 'qwen3-moe' | 'olmoe-clip') => (await runModel(folderFiles(modelFixture(name)), { ids: modelReference(name).token_ids }, { residentBudgetBytes: 1e9 })).logitsLast as Float32Array;
    // First runs feed every weight; the numbers compared are runs on the sessions made after them.
    await run('olmoe');
    await run('qwen3-moe');
    await makeDeferredSessions();
    const [olmoe, qwen3] = [await run('olmoe'), await run('qwen3-moe')];
    await run('olmoe-clip'); // a first run: its experts' reads go through the same memory as theirs did
    await makeDeferredSessions();
    // Each second run feeds the experts its model kept.
    assert.deepEqual(await run('olmoe'), olmoe);
    assert.deepEqual(await run('qwen3-moe'), qwen3);
  });
});
