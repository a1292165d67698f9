// config.json as the architectures' own code reads it: RoPE frequencies of both config forms
// against the torch reference (test/fixtures/model-rope/inv_freq.json, scripts/gen_rope_reference.py),
// each model's layer pattern and scale, and one clear message for what is not supported.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseModelConfig, SUPPORTED_MODEL_TYPES } from '../../../src/core/model/config';

const references = JSON.parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'model-rope', 'inv_freq.json'), 'utf8')) as Record<
  string,
  { config: Record<string, unknown>; head_dim: number; inv_freq: number[] }
>;

const llama = (fields: Record<string, unknown>, headDim = 64) => parseModelConfig(JSON.stringify({ model_type: 'llama', hidden_size: 4 * headDim, num_attention_heads: 4, num_hidden_layers: 2, ...fields }));

function assertClose(got: ArrayLike<number>, want: readonly number[], what: string): void {
  assert.equal(got.length, want.length, what);
  want.forEach((v, i) => assert.ok(Math.abs(got[i] - v) <= 1e-12 * Math.abs(v), `${what}[${i}]: ${got[i]} vs ${v}`));
}

describe('model config', () => {
  for (const [name, { config, head_dim: headDim, inv_freq: want }] of Object.entries(references)) {
    it(`${name}: inv_freq as the torch reference, from rope_scaling and from rope_parameters`, () => {
      const old = llama(config, headDim).attention[0].rope;
      assertClose(old?.inverseFrequencies ?? [], want, 'rope_scaling form');
      const { rope_scaling: scaling, rope_theta: theta } = config as { rope_scaling?: Record<string, unknown>; rope_theta: number };
      const { type, ...rest } = scaling ?? {};
      const parameters = { rope_type: type ?? 'default', ...rest, rope_theta: theta };
      assertClose(llama({ rope_parameters: parameters }, headDim).attention[1].rope?.inverseFrequencies ?? [], want, 'rope_parameters form');
      assert.equal(old?.plain, name === 'default');
    });
  }

  it('rope_parameters per layer type, and Gemma 3\'s local base frequency', () => {
    const c = parseModelConfig(JSON.stringify({
      model_type: 'gemma3_text', hidden_size: 64, num_attention_heads: 4, num_hidden_layers: 6, head_dim: 16, sliding_window: 8,
      rope_parameters: { full_attention: { rope_type: 'linear', factor: 8, rope_theta: 1e6 }, sliding_attention: { rope_type: 'default', rope_theta: 1e4 } },
    }));
    assert.deepEqual(c.attention.map((a) => [a.window, a.rope?.theta, a.rope?.type]), [
      [8, 1e4, 'default'], [8, 1e4, 'default'], [8, 1e4, 'default'], [8, 1e4, 'default'], [8, 1e4, 'default'], [undefined, 1e6, 'linear'],
    ]);
    const old = parseModelConfig(JSON.stringify({ model_type: 'gemma3_text', hidden_size: 64, num_attention_heads: 4, num_hidden_layers: 2, head_dim: 16, rope_local_base_freq: 12345, sliding_window: 4, sliding_window_pattern: 2 }));
    assert.deepEqual(old.attention.map((a) => [a.window, a.rope?.theta]), [[4, 12345], [undefined, 10000]]);
  });

  it('layer patterns, scales and norms of each family', () => {
    const gemma2 = parseModelConfig(JSON.stringify({ model_type: 'gemma2', hidden_size: 32, num_attention_heads: 2, num_hidden_layers: 3, head_dim: 16, query_pre_attn_scalar: 32, sliding_window: 4, attn_logit_softcapping: 50, final_logit_softcapping: 30 }));
    assert.deepEqual(gemma2.attention.map((a) => a.window), [4, undefined, 4]);
    assert.equal(gemma2.attention[0].scale, 1 / Math.sqrt(32));
    assert.equal(gemma2.attention[1].softcap, 50);
    assert.equal(gemma2.finalSoftcap, 30);
    assert.equal(gemma2.norm, 'rms-plus-one');
    assert.equal(gemma2.embeddingScale, Math.sqrt(32));
    assert.equal(gemma2.activation, 'gelu-tanh');
    const mistral = parseModelConfig(JSON.stringify({ model_type: 'mistral', hidden_size: 32, num_attention_heads: 2, num_hidden_layers: 2, sliding_window: 7 }));
    assert.deepEqual(mistral.attention.map((a) => a.window), [7, 7]);
    const gpt2 = parseModelConfig(JSON.stringify({ model_type: 'gpt2', n_embd: 16, n_head: 2, n_layer: 3, scale_attn_by_inverse_layer_idx: true }));
    assert.deepEqual(gpt2.attention.map((a) => a.scale), [1, 2, 3].map((i) => 1 / Math.sqrt(8) / i));
    assert.equal(gpt2.intermediate, 64);
    const qwen2 = parseModelConfig(JSON.stringify({ model_type: 'qwen2', hidden_size: 32, num_attention_heads: 4, num_key_value_heads: 2, num_hidden_layers: 2 }));
    assert.equal(qwen2.qkvBias, true); // Qwen2's q/k/v always carry biases
    assert.equal(qwen2.outputBias, false);
  });

  it('one clear message for what is not supported', () => {
    assert.throws(() => parseModelConfig('{"model_type": "t5"}'), new RegExp(`model_type "t5" is not supported: supported are ${SUPPORTED_MODEL_TYPES.join(', ')}`));
    assert.throws(() => parseModelConfig('{}'), /model_type is missing: supported are gpt2, bert/);
    assert.throws(() => parseModelConfig('{"model_type": "gpt2",'), /config\.json is not JSON/);
    assert.throws(() => llama({ rope_scaling: { rope_type: 'yarn', factor: 4 } }), /rope type "yarn" is not supported: supported are default, linear and llama3/);
    assert.throws(() => llama({ rope_scaling: { rope_type: 'llama3', factor: 8 } }), /rope type "llama3" needs a positive low_freq_factor/);
    assert.throws(() => llama({ num_key_value_heads: 3 }), /num_attention_heads \(4\) is not a multiple of num_key_value_heads \(3\)/);
    assert.throws(() => llama({ hidden_act: 'relu' }), /hidden_act "relu" is not supported/);
  });
});
