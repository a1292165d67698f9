// Mixtures of experts (Mixtral, Qwen2-MoE with its shared expert, OLMoE, Qwen3-MoE) against the
// float64 references of scripts/gen_model_fixtures.py: the routing recorded during the run (the
// same experts in the same order, weights within 1e-4), the drill-down of every head, the CLI's
// "experts", and the bad inputs of issue 40 as one line each. Attentions, hidden state and logits
// are forward.test.ts's (the MoE folders are in MODEL_FIXTURES).
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAttention } from '../../../src/core/engine';
import { ModelConfigError, parseModelConfig } from '../../../src/core/model/config';
import { route, routingPairs } from '../../../src/core/model/experts';
import { layoutOf } from '../../../src/core/model/layout';
import { runModel, type ModelRun } from '../../../src/core/model/run';
import { ModelFileError } from '../../../src/core/model/weights';
import { folderFiles } from '../../../src/node/modelFiles';
import { bundleCli } from '../cli/bundle';
import { modelFixture, modelReference } from './fixtures';

const MOE = ['mixtral-bf16', 'qwen2-moe-sharded-f16', 'olmoe', 'qwen3-moe', 'olmoe-clip'] as const;
const root = join(__dirname, '..', '..', '..');

const runs = new Map<string, Promise<ModelRun>>();
function runFixture(name: (typeof MOE)[number]): Promise<ModelRun> {
  if (!runs.has(name)) runs.set(name, runModel(folderFiles(modelFixture(name)), { ids: modelReference(name).token_ids }));
  return runs.get(name)!;
}

/** The same experts in the same order everywhere; the largest weight difference. */
function routingDifference(want: [number, number][][][], got: [number, number][][][]): number {
  assert.equal(got.length, want.length, 'layers');
  let worst = 0;
  want.forEach((layer, l) =>
    layer.forEach((pairs, t) => {
      assert.deepEqual(got[l][t].map(([e]) => e), pairs.map(([e]) => e), `layer ${l} position ${t}: experts`);
      pairs.forEach(([, w], k) => (worst = Math.max(worst, Math.abs(w - got[l][t][k][1]))));
    }),
  );
  return worst;
}

describe('mixtures of experts', function () {
  this.timeout(300000);

  for (const name of MOE) {
    it(`${name}: the routing recorded during the run is the reference's (same experts in order, weights within 1e-4)`, async () => {
      const reference = modelReference(name);
      assert.ok(reference.experts && reference.router_margin! >= 0.02, 'the reference routes with a margin');
      const run = await runFixture(name);
      assert.ok(run.routing);
      const worst = routingDifference(reference.experts, routingPairs(run.routing, run.queryCount));
      assert.ok(worst <= 1e-4, `weights off by ${worst}`);
    });

    it(`${name}: every head's step-by-step spec gives the run's weights`, async () => {
      const run = await runFixture(name);
      for (let l = 0; l < run.layerCount; l++) {
        for (let h = 0; h < run.headCount; h++) {
          const stepped = runAttention(await run.drillDownSpec(l, h)).heads[0].weights.data;
          let worst = 0;
          run.weights(l, h).forEach((v, i) => (worst = Math.max(worst, Math.abs(v - stepped[i]))));
          assert.ok(worst <= 1e-5, `layer ${l} head ${h}: off by ${worst}`);
        }
      }
    });
  }

  it('the families read their routing from config.json as their modeling files do', () => {
    const moe = (fields: Record<string, unknown>) => parseModelConfig(JSON.stringify({ hidden_size: 32, num_attention_heads: 4, num_hidden_layers: 4, intermediate_size: 64, ...fields }));
    const mixtral = moe({ model_type: 'mixtral' });
    assert.deepEqual([mixtral.moe?.experts, mixtral.moe?.topK, mixtral.moe?.normTopK, mixtral.moe?.expertIntermediate], [8, 2, true, 64]);
    assert.equal(mixtral.attention[0].rope?.theta, 1e6, "MixtralConfig's rope_theta default");
    const qwen2 = moe({ model_type: 'qwen2_moe', num_experts: 6, moe_intermediate_size: 8, shared_expert_intermediate_size: 16, decoder_sparse_step: 2, mlp_only_layers: [3] });
    assert.deepEqual(qwen2.moe?.sparse, [false, true, false, false]);
    assert.deepEqual([qwen2.moe?.sharedIntermediate, qwen2.moe?.normTopK, qwen2.qkvBias], [16, false, true]);
    const layout = layoutOf(qwen2);
    assert.equal(layout.layers[0].experts, undefined);
    assert.equal(layout.layers[1].experts?.router.name, 'layers.1.mlp.gate');
    assert.equal(layout.layers[1].experts?.shared?.sharedGate.name, 'layers.1.mlp.shared_expert_gate');
    const olmoe = layoutOf(moe({ model_type: 'olmoe', num_key_value_heads: 2 }));
    assert.deepEqual([olmoe.layers[0].qNorm?.width, olmoe.layers[0].kNorm?.width], [32, 16], 'q/k norms over the whole projections');
    const qwen3 = layoutOf(moe({ model_type: 'qwen3_moe', head_dim: 16, norm_topk_prob: true }));
    assert.deepEqual([qwen3.layers[0].qNorm?.width, qwen3.layers[0].experts?.experts.length], [16, 128]);
    assert.throws(() => moe({ model_type: 'mixtral', num_local_experts: 4, num_experts_per_tok: 5 }), (e: Error) => e instanceof ModelConfigError && /num_experts_per_tok \(5\) is more than its num_local_experts \(4\)/.test(e.message));
  });

  it('routes as softmax, top-k by decreasing weight, renormalised only when asked', () => {
    const logits = Float32Array.from([0, Math.log(2), Math.log(4), Math.log(1)]); // probabilities 1/8, 2/8, 4/8, 1/8
    const plain = route(logits, 1, 4, 2, false);
    assert.deepEqual([...plain.experts], [2, 1]);
    assert.ok(Math.abs(plain.weights[0] - 0.5) < 1e-7 && Math.abs(plain.weights[1] - 0.25) < 1e-7);
    const normed = route(logits, 1, 4, 2, true);
    assert.ok(Math.abs(normed.weights[0] - 2 / 3) < 1e-7 && Math.abs(normed.weights[1] - 1 / 3) < 1e-7);
  });

  it('dense models have no routing', async () => {
    const run = await runModel(folderFiles(modelFixture('llama-gqa-bf16')), { ids: modelReference('llama-gqa-bf16').token_ids });
    assert.equal(run.routing, undefined);
  });

  describe('bad input, one line each', () => {
    let dir: string;
    before(() => (dir = mkdtempSync(join(tmpdir(), 'attention-lens-moe-'))));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const copy = (name: (typeof MOE)[number], edit: (config: Record<string, unknown>) => void): string => {
      const to = join(dir, `${name}-${Math.random().toString(36).slice(2)}`);
      cpSync(modelFixture(name), to, { recursive: true });
      const config = JSON.parse(readFileSync(join(to, 'config.json'), 'utf8')) as Record<string, unknown>;
      edit(config);
      writeFileSync(join(to, 'config.json'), JSON.stringify(config));
      return to;
    };

    it('a missing expert tensor is named before the run', async () => {
      const folder = copy('mixtral-bf16', (c) => (c.num_local_experts = 5)); // the checkpoint has experts 0–3
      await assert.rejects(runModel(folderFiles(folder), { ids: [5, 6, 7] }), (e: Error) => e instanceof ModelFileError && /no tensor model\.layers\.0\.block_sparse_moe\.experts\.4\.w1\.weight/.test(e.message) && !e.message.includes('\n'));
    });

    it('the memory a run needs counts two groups of experts in flight (the groups run while the next is read)', async () => {
      const refusal = await runModel(folderFiles(modelFixture('olmoe')), { ids: [5, 6, 7] }, { memoryLimitBytes: 1 }).then(
        () => assert.fail('ran'),
        (e: Error) => e.message,
      );
      // 2 groups × 128 MiB of float32 weights × 1.5 (16-bit weights as read and widened): 0.40 GB; the tiny model's own few MB besides.
      const gb = Number(/needs about (\d+\.\d+) GB/.exec(refusal)?.[1]);
      assert.ok(gb >= 0.4 && gb < 0.5, refusal);
    });

    it("experts fused into 3-D tensors (transformers 5's gate_up_proj / down_proj) are refused in one line that names the layout", async () => {
      // qwen3-moe's layer 0 is dense (decoder_sparse_step 2): the first fused layer is 1.
      await assert.rejects(
        runModel(folderFiles(modelFixture('qwen3-moe-fused')), { ids: [5, 6, 7] }),
        (e: Error) => e instanceof ModelFileError && /^the checkpoint stores layer 1's experts fused into 3-D tensors \(model\.layers\.1\.mlp\.experts\.gate_up_proj: gate_up_proj \[experts, 2 × intermediate, hidden\]/.test(e.message) && !e.message.includes('\n'),
      );
    });

    it('the CLI: "experts" in --json, the routing in the text, and the two bad inputs as one line and exit 1', () => {
      const bundle = bundleCli(dir);
      const cli = (...args: string[]) => spawnSync(process.execPath, [bundle, 'model', ...args], { encoding: 'utf8', cwd: root, maxBuffer: 64 * 2 ** 20 });
      const reference = modelReference('qwen2-moe-sharded-f16');
      const ids = reference.token_ids.join(',');
      const json = cli(modelFixture('qwen2-moe-sharded-f16'), '--ids', ids, '--json');
      assert.equal(json.status, 0, json.stderr);
      const parsed = JSON.parse(json.stdout) as { experts: [number, number][][][] };
      assert.ok(routingDifference(reference.experts!, parsed.experts) <= 1e-4);
      assert.deepEqual(parsed.experts[1], reference.token_ids.map(() => []), 'the dense layer (mlp_only_layers) lists no experts');
      const text = cli(modelFixture('qwen2-moe-sharded-f16'), '--ids', ids);
      assert.match(text.stdout, /experts \(3 of 6 per token;/);
      assert.match(text.stdout, /L1: dense MLP/);
      const dense = cli(modelFixture('qwen3'), '--ids', '5,6,7', '--json');
      assert.ok(!('experts' in (JSON.parse(dense.stdout) as object)), 'absent for dense models');
      for (const [folder, message] of [
        [copy('olmoe', (c) => (c.num_experts_per_tok = 9)), /num_experts_per_tok \(9\) is more than its num_experts \(8\)/],
        [copy('qwen3-moe', (c) => (c.num_experts = 9)), /no tensor model\.layers\.1\.mlp\.experts\.8\.gate_proj\.weight/],
      ] as const) {
        const run = cli(folder, '--ids', '5,6,7');
        assert.equal(run.status, 1, run.stderr);
        assert.match(run.stderr, message);
        assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      }
    });
  });
});
