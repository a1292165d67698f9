// Model runs through the worker thread: the summary the host keeps, a head's step-by-step spec,
// a newer run superseding the one in progress, two runs compared, and errors as messages.
import * as assert from 'node:assert/strict';
import { join } from 'node:path';
import { runAttention } from '../../../src/core/engine';
import { meanRowDivergence } from '../../../src/core/heads/divergence';
import { AttentionWorker, RunCancelledError } from '../../../src/worker/client';
import { modelFixture, modelReference, REFERENCE_TOLERANCE } from '../model/fixtures';

const MEMORY = 8 * 2 ** 30;

describe('worker: model runs', function () {
  this.timeout(60_000);
  let worker: AttentionWorker;
  before(() => (worker = new AttentionWorker(join(__dirname, 'tsWorker.cjs'), { maxOldGenerationSizeMb: 512 }, () => undefined)));
  after(() => worker.dispose());

  it('runs a folder, keeps the run, and answers any head as a spec whose weights are the model\'s', async () => {
    const reference = modelReference('qwen2-sharded-f16');
    const summary = await worker.runModel(modelFixture('qwen2-sharded-f16'), { ids: reference.token_ids }, MEMORY);
    assert.deepEqual(summary.tokenIds, reference.token_ids);
    assert.equal(summary.layerCount, reference.attentions.length);
    assert.equal(summary.headCount, reference.attentions[0].length);
    for (let layer = 0; layer < summary.layerCount; layer++) {
      for (let head = 0; head < summary.headCount; head++) {
        const spec = await worker.modelHead(summary.run, layer, head);
        const weights = runAttention(spec).heads[0].weights.data;
        reference.attentions[layer][head].flat().forEach((value, i) =>
          assert.ok(Math.abs(weights[i] - value) < REFERENCE_TOLERANCE.attention, `layer ${layer} head ${head} weight ${i}: ${weights[i]} vs ${value}`),
        );
      }
    }
  });

  it('opens a kept run as a stack for the heads views, its predictions in the header', async () => {
    const reference = modelReference('gpt2');
    const summary = await worker.runModel(modelFixture('gpt2'), { ids: reference.token_ids }, MEMORY);
    const opened = await worker.modelHeads(summary.run);
    assert.equal(opened.info.source, 'model');
    assert.equal(opened.info.layerCount, reference.attentions.length);
    assert.match(opened.info.notes[0], /^Next token: /);
    const answer = await worker.queryHeads(opened.stack, { kind: 'head', layer: 1, head: 0 });
    assert.equal(answer.kind, 'head');
    if (answer.kind === 'head') reference.attentions[1][0].flat().forEach((value, i) => assert.ok(Math.abs(answer.view.data[i] - value) < REFERENCE_TOLERANCE.attention));
  });

  it('runs the induction probe on a folder: BOS and R seeded random ids twice, its ranking in the header', async () => {
    const probe = { probe: { repeat: 5, seed: 7 } };
    const first = await worker.runModel(modelFixture('gpt2'), probe, MEMORY);
    const again = await worker.runModel(modelFixture('gpt2'), probe, MEMORY);
    assert.equal(first.tokenIds.length, 11);
    assert.equal(first.tokenIds[0], 50256, 'GPT-2 starts with <|endoftext|>');
    assert.deepEqual(first.tokenIds.slice(1, 6), first.tokenIds.slice(6));
    assert.deepEqual(again.tokenIds, first.tokenIds, 'seeded');
    const opened = await worker.modelHeads(first.run);
    assert.match(opened.info.title, /induction probe, R = 5, seed 7/);
    assert.match(opened.info.notes[0], /^Highest induction scores .*: L\d H\d \d\.\d{3}(; L\d H\d \d\.\d{3}){3}/);
  });

  it('a newer run supersedes the one in progress', async () => {
    const ids = modelReference('gpt2').token_ids;
    const first = worker.runModel(modelFixture('gpt2'), { ids }, MEMORY);
    const second = worker.runModel(modelFixture('gpt2'), { ids: ids.slice(0, 2) }, MEMORY);
    await assert.rejects(first, RunCancelledError);
    assert.equal((await second).tokens.length, 2);
  });

  it('compares two texts of one model: the divergence and B − A of the paired runs, A being PyTorch\'s', async () => {
    const reference = modelReference('gpt2');
    const ids = reference.token_ids;
    const a = await worker.modelHeads((await worker.runModel(modelFixture('gpt2'), { ids }, MEMORY)).run);
    const b = await worker.modelHeads((await worker.runModel(modelFixture('gpt2'), { ids: [...ids].reverse() }, MEMORY)).run);
    const n = ids.length;
    const divergence = await worker.queryHeads(a.stack, { kind: 'divergence' }, b.stack);
    const difference = await worker.queryHeads(a.stack, { kind: 'difference', layer: 1, head: 0 }, b.stack);
    assert.ok(divergence.kind === 'divergence' && difference.kind === 'difference');
    for (let layer = 0; layer < a.info.layerCount; layer++) {
      for (let head = 0; head < a.info.headCount; head++) {
        const bHead = await worker.queryHeads(b.stack, { kind: 'head', layer, head });
        assert.ok(bHead.kind === 'head');
        const expected = await meanRowDivergence(Float64Array.from(reference.attentions[layer][head].flat()), bHead.view.data, n, n);
        assert.ok(Math.abs(divergence.divergence[layer][head] - expected) < 1e-5, `L${layer} H${head}: ${divergence.divergence[layer][head]} vs ${expected}`);
        if (layer === 1 && head === 0) {
          const aWeights = reference.attentions[1][0].flat();
          assert.deepEqual([...difference.difference.at], Array.from({ length: n * n }, (_, k) => k));
          aWeights.forEach((value, k) => assert.ok(Math.abs(difference.difference.difference[k] - (bHead.view.data[k] - value)) < REFERENCE_TOLERANCE.attention));
        }
      }
    }
    // A text of another length: one message, the worker carries on.
    const short = await worker.modelHeads((await worker.runModel(modelFixture('gpt2'), { ids: ids.slice(1) }, MEMORY)).run);
    await assert.rejects(worker.queryHeads(a.stack, { kind: 'divergence' }, short.stack), /cannot compare runs of different shapes: .* against /);
    for (const opened of [a, b, short]) worker.closeHeads(opened.stack);
  });

  it('fails with the reason: a run refused for memory, a head of a run no longer kept', async () => {
    await assert.rejects(worker.runModel(modelFixture('gpt2'), { ids: [1, 2, 3] }, 1000), /needs about .* GB of memory/);
    await assert.rejects(worker.modelHead(987654, 0, 0), /no longer held/);
  });
});
