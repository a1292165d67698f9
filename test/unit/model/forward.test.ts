// The whole-model forward against the float64 PyTorch references of scripts/gen_model_fixtures.py
// (issue 25's tolerances), one head's step-by-step spec against the run's own weights, and the
// predictions and cancellation around them.
import { strict as assert } from 'node:assert';
import { runAttention } from '../../../src/core/engine';
import { CancelledError } from '../../../src/core/engine/attention';
import { analyseStack } from '../../../src/core/heads/analysis';
import { divergences } from '../../../src/core/heads/divergence';
import { parseModelConfig } from '../../../src/core/model/config';
import { largestRead } from '../../../src/core/model/forward';
import { layoutOf } from '../../../src/core/model/layout';
import { runModel, type ModelRun } from '../../../src/core/model/run';
import { Weights } from '../../../src/core/model/weights';
import { folderFiles } from '../../../src/node/modelFiles';
import { DENSE_FIXTURES, ENCODER_FIXTURES, MODEL_FIXTURES, type ModelFixtureName, modelFixture, modelReference, REFERENCE_TOLERANCE, relativeError } from './fixtures';

const runs = new Map<ModelFixtureName, Promise<ModelRun>>();
function runFixture(name: ModelFixtureName): Promise<ModelRun> {
  if (!runs.has(name)) runs.set(name, runModel(folderFiles(modelFixture(name)), { ids: modelReference(name).token_ids }));
  return runs.get(name) as Promise<ModelRun>;
}

describe('model forward against the PyTorch references', function () {
  this.timeout(300000);
  before(() => modelFixture('gpt2')); // generates the set once

  for (const name of MODEL_FIXTURES) {
    it(`${name}: attentions, final hidden state and logits`, async () => {
      const reference = modelReference(name);
      const run = await runFixture(name);
      assert.equal(run.layerCount, reference.attentions.length);
      assert.equal(run.headCount, reference.attentions[0].length);
      let worst = 0;
      reference.attentions.forEach((layer, l) =>
        layer.forEach((head, h) => {
          const weights = run.weights(l, h);
          head.flat().forEach((v, i) => (worst = Math.max(worst, Math.abs(v - weights[i]))));
        }),
      );
      assert.ok(worst <= REFERENCE_TOLERANCE.attention, `attention off by ${worst}`);
      const hidden = relativeError(reference.hidden_last, run.hiddenLast);
      assert.ok(hidden <= REFERENCE_TOLERANCE.hiddenRelative, `hidden_last off by ${hidden} (relative)`);
      if (reference.logits_last === null) assert.equal(run.logitsLast, undefined);
      else {
        assert.ok(run.logitsLast, 'logits expected');
        const logits = relativeError(reference.logits_last, run.logitsLast);
        assert.ok(logits <= REFERENCE_TOLERANCE.logitsRelative, `logits_last off by ${logits} (relative)`);
      }
    });
  }

  for (const name of ['gpt2', 'bert', 'llama-gqa-bf16', 'qwen2-sharded-f16', 'qwen3', 'mistral-window', 'gemma2-softcap', ...DENSE_FIXTURES] as const) {
    it(`${name}: every head's step-by-step spec gives the run's weights`, async () => {
      const run = await runFixture(name);
      for (let l = 0; l < run.layerCount; l++) {
        for (let h = 0; h < run.headCount; h++) {
          const spec = await run.drillDownSpec(l, h);
          assert.deepEqual(spec.tokens, run.tokens);
          const stepped = runAttention(spec).heads[0].weights.data;
          const weights = run.weights(l, h);
          let worst = 0;
          weights.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - stepped[i]))));
          assert.ok(worst <= 1e-5, `layer ${l + 1} head ${h + 1}: off by ${worst}`);
        }
      }
    });
  }

  for (const name of ['gpt2', 'llama-gqa-bf16', 'qwen2-sharded-f16', 'qwen3'] as const) {
    it(`${name}: a head recomputed for a view is the run's own numbers, bit for bit (the thumbnails pooled during the forward, one weight per cell here)`, async () => {
      const run = await runFixture(name);
      for (let l = 0; l < run.layerCount; l++) {
        for (let h = 0; h < run.headCount; h++) {
          const kept = run.pooled?.(l, h, 'max', 1, 1);
          assert.ok(kept, 'the fixture is under the thumbnail size: one weight per cell');
          assert.deepEqual(run.weights(l, h), kept, `layer ${l} head ${h}`);
        }
      }
    });
  }

  for (const name of ['gpt2', 'llama-gqa-bf16', 'qwen3', 'mistral-window', 'gemma2-softcap', 'pythia-f16', 'phi3-longrope-bf16', 'modernbert-bf16', 'gpt_neo-local'] as const) {
    it(`${name}: a layer's heads computed a group at a time (what the head analyses read) are the run's own numbers, and analyse as head by head`, async () => {
      const run = await runFixture(name);
      assert.ok(run.headGroups);
      for (let l = 0; l < run.layerCount; l++) {
        let next = 0;
        await run.headGroups(l, async (first, heads) => {
          assert.equal(first, next, 'groups in order');
          heads.forEach((weights, k) => assert.deepEqual(weights, run.weights(l, first + k), `layer ${l} head ${first + k}`));
          next += heads.length;
        });
        assert.equal(next, run.headCount);
      }
      const byGroups = await analyseStack(run);
      const headByHead = await analyseStack({ ...run, headGroups: undefined });
      assert.deepEqual(byGroups, headByHead);
    });
  }

  for (const name of ['gpt2', 'llama-gqa-bf16', 'gemma2-softcap', 'pythia-f16', 'roberta'] as const) {
    it(`${name}: two runs compared a layer's heads at a time (both recomputed at once) give the head-by-head divergences`, async () => {
      const a = await runFixture(name);
      const ids = modelReference(name).token_ids;
      const b = await runModel(folderFiles(modelFixture(name)), { ids: [...ids.slice(1), ids[0]] });
      const byGroups = await divergences(a, b);
      assert.deepEqual(byGroups, await divergences({ ...a, headGroups: undefined }, { ...b, headGroups: undefined }));
      assert.ok(byGroups.flat().some((value) => value > 1e-3), 'the two texts attend differently');
    });
  }

  it('runs at once (the fast path\'s spare memory is taken by one at a time) give each run\'s own attentions', async () => {
    const names = ['gpt2', 'qwen3', 'llama-gqa-bf16'] as const;
    const alone = await Promise.all(names.map((name) => runFixture(name)));
    const together = await Promise.all(names.map((name) => runModel(folderFiles(modelFixture(name)), { ids: modelReference(name).token_ids })));
    together.forEach((run, r) => {
      for (let l = 0; l < run.layerCount; l++) for (let h = 0; h < run.headCount; h++) assert.deepEqual(run.weights(l, h), alone[r].weights(l, h), `${names[r]} layer ${l} head ${h}`);
    });
  });

  it('drill-down specs say what they are: X and W with biases as a row, or Q and K given', async () => {
    const gpt2 = await (await runFixture('gpt2')).drillDownSpec(0, 1);
    assert.equal(gpt2.X?.cols, 17); // 16 + the column of ones
    assert.equal(gpt2.WQ?.[0].rows, 17);
    assert.match(gpt2.options.name ?? '', /gpt2 L0 H1 \(biases as the last row/);
    assert.equal(gpt2.options.causal, 'top-left');
    const qwen3 = await (await runFixture('qwen3')).drillDownSpec(1, 3);
    assert.ok(qwen3.Q && !qwen3.X);
    assert.equal(qwen3.options.rope, 1e6); // the step view turns Q and K itself
    assert.match(qwen3.options.name ?? '', /^qwen3 L1 H3 \(KV head 1\).*q\/k norms/);
    const gemma = await (await runFixture('gemma2-softcap')).drillDownSpec(0, 0);
    assert.equal(gemma.options.window, 4);
    assert.equal(gemma.options.softcap, 5);
    assert.equal(gemma.options.scale, 1 / Math.sqrt(24));
    const llama = await (await runFixture('llama-gqa-bf16')).drillDownSpec(0, 0);
    assert.equal(llama.options.rope, undefined); // llama3-scaled: Q and K come turned
    assert.match(llama.options.name ?? '', /llama3-scaled RoPE/);
    await assert.rejects(() => run0().then((r) => r.drillDownSpec(2, 0)), /no layer 2, head 0: the model has layers 0–1 of heads 0–1/);
  });

  it('issue 40\'s families: drill-down specs carry each model\'s own scale, window, RoPE and mask, or Q and K as computed', async () => {
    const neo = await (await runFixture('gpt_neo-local')).drillDownSpec(1, 0);
    assert.equal(neo.options.scale, 1); // GPT-Neo divides by nothing
    assert.equal(neo.options.window, 4);
    assert.equal((await (await runFixture('gpt_neo-local')).drillDownSpec(0, 0)).options.window, undefined);
    const granite = await (await runFixture('granite')).drillDownSpec(0, 0);
    assert.equal(granite.options.scale, 0.3);
    assert.equal(granite.options.rope, 10000);
    const modern = await runFixture('modernbert-bf16');
    const local = await modern.drillDownSpec(1, 1);
    assert.deepEqual([local.options.window, local.options.rope, local.options.causal], [3, 10000, undefined]);
    assert.deepEqual([(await modern.drillDownSpec(0, 0)).options.window, (await modern.drillDownSpec(0, 0)).options.rope], [undefined, 160000]);
    const pythia = await (await runFixture('pythia-f16')).drillDownSpec(1, 2);
    assert.ok(pythia.Q && !pythia.X);
    assert.match(pythia.options.name ?? '', /^gpt_neox L1 H2: Q and K after the model's partial \(4 of each head's columns\) RoPE/);
    const gptj = await (await runFixture('gptj-bf16')).drillDownSpec(0, 0);
    assert.match(gptj.options.name ?? '', /partial \(8 of each head's columns\), interleaved RoPE/);
    const phi3 = await (await runFixture('phi3-longrope-bf16')).drillDownSpec(0, 3);
    assert.match(phi3.options.name ?? '', /longrope-scaled RoPE/);
    assert.equal(phi3.options.window, 6);
    const olmo = await (await runFixture('olmo-clip')).drillDownSpec(0, 0);
    assert.match(olmo.options.name ?? '', /clipped to ±0\.6/);
    const opt350 = await runFixture('opt-350m-post-ln-bin');
    assert.equal(opt350.hiddenLast.length, 16); // after project_out: word_embed_proj_dim wide
    const roberta = await runFixture('roberta');
    assert.deepEqual(roberta.predictions.map((p) => [p.kind, roberta.tokens[p.position]]), [['mask', '<mask>']]);
  });

  it('a drill-down reads GPT-2\'s fused c_attn once, into the forward\'s reused memory (three fresh reads cost the first click 0.1–0.2 s of page faults)', async () => {
    const files = folderFiles(modelFixture('gpt2'));
    const reads: { length: number; reused: boolean }[] = [];
    const counting = { ...files, folder: files.folder, size: (name: string) => files.size(name), read: (name: string, offset: number, length: number, into?: Uint8Array) => (reads.push({ length, reused: into !== undefined }), files.read(name, offset, length, into)) };
    const run = await runModel(counting, { ids: modelReference('gpt2').token_ids });
    reads.length = 0;
    const spec = await run.drillDownSpec(1, 0);
    const hidden = (spec.X?.cols ?? 0) - 1; // the column of ones
    const cAttnBytes = hidden * 3 * hidden * 4;
    assert.deepEqual(reads.filter((read) => read.length === cAttnBytes), [{ length: cAttnBytes, reused: true }]);
  });

  it('the largest read a folder prepares for is a layer\'s MLP side by side: GPT-2\'s c_fc and c_proj in float32, Llama\'s gate, up and down in bf16 with as many values widened', async () => {
    const readOf = async (name: ModelFixtureName) => {
      const files = folderFiles(modelFixture(name));
      const config = parseModelConfig(await files.read('config.json', 0, (await files.size('config.json'))!).then((bytes) => new TextDecoder().decode(bytes)));
      return { config, largest: largestRead(layoutOf(config), await Weights.open(files)) };
    };
    const aligned = (n: number) => Math.ceil(n / 64) * 64;
    const gpt2 = await readOf('gpt2');
    assert.deepEqual(gpt2.largest, { bytes: 2 * aligned(gpt2.config.hidden * gpt2.config.intermediate * 4), values: 0 });
    const llama = await readOf('llama-gqa-bf16');
    const matrix = llama.config.hidden * llama.config.intermediate;
    assert.deepEqual(llama.largest, { bytes: 3 * aligned(matrix * 2), values: 3 * aligned(matrix) });
  });

  it('predictions: the next token at the end (and on demand per position), BERT\'s [MASK] fillers', async () => {
    const gpt2 = await runFixture('gpt2');
    const last = gpt2.logitsLast as Float32Array;
    const [next] = gpt2.predictions;
    assert.equal(next.kind, 'next');
    assert.equal(next.position, gpt2.queryCount - 1);
    assert.equal(next.top.length, 5);
    assert.equal(next.top[0].id, last.indexOf(Math.max(...last)));
    assert.ok(next.top.every((t, i) => i === 0 || t.probability <= next.top[i - 1].probability));
    assert.deepEqual(await gpt2.predictAt(gpt2.queryCount - 1), next);
    assert.equal((await gpt2.predictAt(0))?.position, 0);
    const bert = await runFixture('bert');
    const mask = bert.tokens.indexOf('[MASK]');
    assert.ok(mask > 0);
    assert.deepEqual(bert.predictions.map((p) => [p.kind, p.position]), [['mask', mask]]);
  });

  for (const name of MODEL_FIXTURES) {
    it(`${name}: predictAt gives the reference's top 5 at every position (BERT: at its [MASK] only)`, async () => {
      const reference = modelReference(name);
      const run = await runFixture(name);
      const top5 = reference.top5 ?? [];
      assert.equal(top5.length, run.queryCount);
      const masked = run.predictions.map((p) => p.position);
      for (let position = 0; position < run.queryCount; position++) {
        const prediction = await run.predictAt(position);
        const encoder = ENCODER_FIXTURES.includes(name);
        if (encoder && !masked.includes(position)) {
          assert.equal(prediction, undefined, `position ${position} is not a [MASK]`);
          continue;
        }
        assert.ok(prediction, `a prediction at ${position}`);
        assert.equal(prediction.kind, encoder ? 'mask' : 'next');
        assert.deepEqual(prediction.top.map((t) => t.id), top5[position].ids, `position ${position}: the top 5 ids`);
        prediction.top.forEach((t, r) => {
          const want = top5[position].probabilities[r];
          assert.ok(Math.abs(t.probability - want) <= REFERENCE_TOLERANCE.logitsRelative * want, `position ${position}, rank ${r}: ${t.probability} vs ${want}`);
        });
      }
      if (ENCODER_FIXTURES.includes(name)) assert.equal(masked.length, 1);
    });
  }

  it('predictAt refuses a position outside the run, and answers again from its kept predictions', async () => {
    const gpt2 = await runFixture('gpt2');
    const n = gpt2.queryCount;
    await assert.rejects(gpt2.predictAt(n), new RegExp(`no position ${n}: the run has ${n} tokens`));
    await assert.rejects(gpt2.predictAt(-1), /no position -1/);
    assert.equal(gpt2.predictAt(3), gpt2.predictAt(3), 'the same promise, not a second LM head product');
  });

  it('a run cancelled between layers stops with CancelledError', async () => {
    let checks = 0;
    await assert.rejects(
      runModel(folderFiles(modelFixture('gpt2')), { ids: [1, 2, 3] }, { isCancelled: () => ++checks > 1 }),
      (error: unknown) => error instanceof CancelledError,
    );
  });
});

function run0(): Promise<ModelRun> {
  return runFixture('gpt2');
}
