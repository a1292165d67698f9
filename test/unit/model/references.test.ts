// The fixture set itself: that every reference agrees with a second formulation (the script's
// --check), that each folder is in the layout it stands for, and that the inputs exercise what the
// folder is for (windows that mask, causal rows, a bidirectional encoder).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ENCODER_FIXTURES, MODEL_FIXTURES, modelFixture, modelReference, type ModelFixtureName } from './fixtures';

const repoRoot = resolve(__dirname, '..', '..', '..');

function safetensorsHeader(file: string): Record<string, { dtype: string; shape: number[] }> {
  const bytes = readFileSync(file);
  const length = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + length).toString('utf8')) as Record<string, { dtype: string; shape: number[] }>;
  delete header.__metadata__;
  return header;
}

function config(name: ModelFixtureName): Record<string, unknown> {
  return JSON.parse(readFileSync(join(modelFixture(name), 'config.json'), 'utf8')) as Record<string, unknown>;
}

/** Keys query i may not see in a causal layer with this window (null: plain causal). */
function hidden(i: number, j: number, window: number | null): boolean {
  return j > i || (window !== null && j <= i - window);
}

describe('model fixtures', () => {
  it("every float64 reference agrees with a second formulation (gen_model_fixtures --check)", function () {
    this.timeout(300_000);
    const out = mkdtempSync(join(tmpdir(), 'model-check-'));
    try {
      const report = execFileSync('/usr/bin/python3', [join(repoRoot, 'scripts', 'gen_model_fixtures.py'), out, '--check'], { encoding: 'utf8' });
      const checked = [...report.matchAll(/^(\S+): reference vs torch modules, largest difference (\S+)$/gm)];
      // Every folder the script wrote a reference for, none left to its one hand-written forward.
      const referenced = readdirSync(out).filter((name) => readdirSync(join(out, name)).includes('reference.json'));
      assert.deepEqual(checked.map((m) => m[1]).sort(), referenced.sort(), report);
      for (const [, , difference] of checked) assert.ok(Number(difference) < 1e-9, report);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('every reference row is a distribution, causal for the decoders, bidirectional for the encoders', () => {
    for (const name of MODEL_FIXTURES) {
      const reference = modelReference(name);
      const n = reference.token_ids.length;
      assert.ok(n >= 7 && n <= 12, `${name}: ${n} tokens`);
      let future = 0;
      for (const layer of reference.attentions) {
        for (const head of layer) {
          assert.equal(head.length, n);
          head.forEach((row, i) => {
            assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-12, `${name}: row ${i}`);
            future += row.slice(i + 1).reduce((a, b) => a + b, 0);
          });
        }
      }
      if (ENCODER_FIXTURES.includes(name)) assert.ok(future > 1, `${name} attends to later tokens`);
      else assert.equal(future, 0, `${name} is causal`);
    }
  });

  it('the windows really mask: Mistral everywhere, Gemma 2 on its sliding layers only', () => {
    const cases: Array<[ModelFixtureName, (layer: number) => number | null]> = [
      ['mistral-window', () => config('mistral-window').sliding_window as number],
      ['gemma2-softcap', (layer) => ((config('gemma2-softcap').layer_types as string[])[layer] === 'sliding_attention' ? 4 : null)],
      ['gpt_neo-local', (layer) => (layer === 1 ? 4 : null)],
    ];
    for (const [name, windowOf] of cases) {
      const reference = modelReference(name);
      let outsideWindow = 0;
      reference.attentions.forEach((layer, l) => {
        const window = windowOf(l);
        for (const head of layer) {
          head.forEach((row, i) =>
            row.forEach((weight, j) => {
              if (hidden(i, j, window)) assert.equal(weight, 0, `${name} layer ${l}: (${i}, ${j})`);
              else if (hidden(i, j, 4)) outsideWindow += weight;
            }),
          );
        }
      });
      assert.ok(reference.token_ids.length > 4, `${name}: longer than the window`);
      if (name === 'gemma2-softcap') assert.ok(outsideWindow > 0.5, 'the global layer reaches past the window');
    }
  });

  it('each folder is in the layout it stands for', () => {
    const gpt2 = safetensorsHeader(join(modelFixture('gpt2'), 'model.safetensors'));
    assert.deepEqual(gpt2['transformer.h.0.attn.c_attn.weight'].shape, [16, 48]); // Conv1D [in, out], q | k | v fused
    assert.ok(Object.values(gpt2).every((t) => t.dtype === 'F32'));
    assert.equal(gpt2['transformer.wte.weight'].shape[0], 50257);
    assert.deepEqual(readdirSync(modelFixture('gpt2-bin')).filter((f) => !f.endsWith('.json')), ['pytorch_model.bin']);

    const llama = safetensorsHeader(join(modelFixture('llama-gqa-bf16'), 'model.safetensors'));
    assert.ok(Object.values(llama).every((t) => t.dtype === 'BF16'));
    assert.deepEqual(llama['model.layers.0.self_attn.k_proj.weight'].shape, [32, 64]); // 2 KV heads × 16
    assert.ok(llama['lm_head.weight'], 'untied head');

    const qwen2 = modelFixture('qwen2-sharded-f16');
    const index = JSON.parse(readFileSync(join(qwen2, 'model.safetensors.index.json'), 'utf8')) as { weight_map: Record<string, string> };
    const shards = [...new Set(Object.values(index.weight_map))].sort();
    assert.deepEqual(shards, ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
    for (const shard of shards) {
      const header = safetensorsHeader(join(qwen2, shard));
      assert.ok(Object.values(header).every((t) => t.dtype === 'F16'));
      assert.deepEqual(Object.keys(header).sort(), Object.keys(index.weight_map).filter((k) => index.weight_map[k] === shard).sort());
    }
    assert.ok(index.weight_map['model.layers.0.self_attn.q_proj.bias'] && !index.weight_map['lm_head.weight']);

    const qwen3 = safetensorsHeader(join(modelFixture('qwen3'), 'model.safetensors'));
    assert.deepEqual(qwen3['model.layers.0.self_attn.q_norm.weight'].shape, [16]);
    assert.deepEqual(qwen3['model.layers.0.self_attn.q_proj.weight'].shape, [64, 32]); // head_dim 16 ≠ 32 / 4

    const gemma = safetensorsHeader(join(modelFixture('gemma2-softcap'), 'model.safetensors'));
    assert.ok(gemma['model.layers.0.pre_feedforward_layernorm.weight'] && gemma['model.layers.0.post_feedforward_layernorm.weight']);
    const bert = safetensorsHeader(join(modelFixture('bert'), 'model.safetensors'));
    assert.ok(bert['cls.predictions.transform.dense.weight'] && bert['bert.embeddings.token_type_embeddings.weight']);
  });

  it("ModernBERT's local layers see |i − j| ≤ local_attention / 2 both ways, its global layers everything", () => {
    const reference = modelReference('modernbert-bf16');
    reference.attentions.forEach((layer, l) =>
      layer.forEach((head) =>
        head.forEach((row, i) =>
          row.forEach((weight, j) => {
            if (l % 2 === 1 && Math.abs(i - j) > 2) assert.equal(weight, 0, `layer ${l}: (${i}, ${j})`);
            else assert.ok(weight > 0, `layer ${l}: (${i}, ${j})`);
          }),
        ),
      ),
    );
  });

  it("RoBERTa's run has a padding token inside, and each issue 40 layout is what it stands for", () => {
    const roberta = modelReference('roberta');
    assert.ok(roberta.token_ids.indexOf(1) > 0, '<pad> (padding_idx 1) inside the run');
    const pythia = safetensorsHeader(join(modelFixture('pythia-f16'), 'model.safetensors'));
    assert.deepEqual(pythia['gpt_neox.layers.0.attention.query_key_value.weight'].shape, [192, 64]); // [heads · 3 · head_dim, hidden]
    assert.ok(Object.values(pythia).every((t) => t.dtype === 'F16'));
    assert.ok(pythia['embed_out.weight'] && !pythia['gpt_neox.embed_out.weight']);
    const neox = modelFixture('gpt_neox-sequential-sharded-bf16');
    assert.equal(new Set(Object.values((JSON.parse(readFileSync(join(neox, 'model.safetensors.index.json'), 'utf8')) as { weight_map: Record<string, string> }).weight_map)).size, 2);
    const phi3 = safetensorsHeader(join(modelFixture('phi3-longrope-bf16'), 'model.safetensors'));
    assert.deepEqual(phi3['model.layers.0.self_attn.qkv_proj.weight'].shape, [128, 64]); // q 64 | k 32 | v 32
    assert.deepEqual(phi3['model.layers.0.mlp.gate_up_proj.weight'].shape, [128, 64]); // gate 64 | up 64
    const olmo = safetensorsHeader(join(modelFixture('olmo-clip'), 'model.safetensors'));
    assert.ok(!Object.keys(olmo).some((k) => k.includes('layernorm') || k.endsWith('norm.weight')), 'OLMo has no norm parameters');
    const olmo2 = safetensorsHeader(join(modelFixture('olmo2-bf16'), 'model.safetensors'));
    assert.deepEqual(olmo2['model.layers.0.self_attn.q_norm.weight'].shape, [32]); // the whole projection
    const stablelm = safetensorsHeader(join(modelFixture('stablelm-f16'), 'model.safetensors'));
    assert.ok(stablelm['model.layers.0.self_attn.q_layernorm.norms.3.weight'] && !stablelm['model.layers.0.post_attention_layernorm.weight']);
    const gptj = safetensorsHeader(join(modelFixture('gptj-bf16'), 'model.safetensors'));
    assert.ok(gptj['lm_head.bias'] && gptj['transformer.h.0.attn.q_proj.weight'] && !gptj['transformer.h.0.attn.q_proj.bias']);
    assert.deepEqual(readdirSync(modelFixture('opt-350m-post-ln-bin')).filter((f) => !f.endsWith('.json')), ['pytorch_model.bin']);
    const modernbert = safetensorsHeader(join(modelFixture('modernbert-bf16'), 'model.safetensors'));
    assert.ok(!modernbert['model.layers.0.attn_norm.weight'] && modernbert['model.layers.1.attn_norm.weight'] && !modernbert['model.embeddings.norm.bias']);
  });

  it("Gemma 2's final softcap bounds the reference logits", () => {
    const cap = config('gemma2-softcap').final_logit_softcapping as number;
    const logits = modelReference('gemma2-softcap').logits_last ?? [];
    assert.ok(logits.length > 0 && logits.every((x) => Math.abs(x) < cap));
    assert.ok(Math.max(...logits.map(Math.abs)) > cap / 2, 'the cap bites');
  });
});
