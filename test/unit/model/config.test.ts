// config.json as the architectures' own code reads it: RoPE frequencies of both config forms
// against the torch reference (test/fixtures/model-rope/inv_freq.json, scripts/gen_rope_reference.py),
// each model's layer pattern and scale, and one clear message for what is not supported.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseModelConfig, ropeAt, SUPPORTED_MODEL_TYPES } from '../../../src/core/model/config';
import { layoutOf } from '../../../src/core/model/layout';

const references = JSON.parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'model-rope', 'inv_freq.json'), 'utf8')) as Record<
  string,
  { config: Record<string, unknown>; head_dim: number; inv_freq: number[] }
>;

const byLength = JSON.parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'model-rope', 'by_length.json'), 'utf8')) as Record<
  string,
  { config: Record<string, unknown>; head_dim: number; runs: Record<string, { inv_freq: number[]; attention_factor: number }> }
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

  for (const [name, { config, head_dim: headDim, runs }] of Object.entries(byLength)) {
    it(`${name}: the frequencies and cos/sin factor of each run length as the torch reference`, () => {
      const rope = llama(config, headDim).attention[0].rope;
      assert.ok(rope);
      for (const [n, want] of Object.entries(runs)) {
        const got = ropeAt(rope, Number(n));
        assertClose(got.inverseFrequencies, want.inv_freq, `${n} tokens`);
        assert.ok(Math.abs(got.attentionFactor - want.attention_factor) <= 1e-12, `${n} tokens: factor ${got.attentionFactor} vs ${want.attention_factor}`);
      }
    });
  }

  it('issue 40\'s families: rotary widths and layouts, residuals, norms, positions and scales as their modeling files read them', () => {
    const parse = (fields: Record<string, unknown>) => parseModelConfig(JSON.stringify(fields));
    const pythia = parse({ model_type: 'gpt_neox', hidden_size: 64, num_attention_heads: 4, num_hidden_layers: 2, rotary_pct: 0.25, rotary_emb_base: 10000 });
    assert.deepEqual([pythia.attention[0].rope?.rotaryDim, pythia.attention[0].rope?.inverseFrequencies.length, pythia.parallelResidual, pythia.tiedEmbeddings], [4, 2, true, false]);
    assert.equal(parse({ model_type: 'gpt_neox', hidden_size: 64, num_attention_heads: 4, num_hidden_layers: 2, use_parallel_residual: false }).parallelResidual, false);
    // int(head_dim · factor) in floating point, as Python truncates it: 100 · 0.29 is 28.999…, so 28 columns turn.
    const truncated = parse({ model_type: 'phi', hidden_size: 200, num_attention_heads: 2, num_hidden_layers: 1, partial_rotary_factor: 0.29 });
    assert.equal(truncated.attention[0].rope?.rotaryDim, 28);
    const gptj = parse({ model_type: 'gptj', n_embd: 64, n_head: 4, n_layer: 2, rotary_dim: 8 });
    assert.deepEqual([gptj.attention[0].rope?.rotaryDim, gptj.attention[0].rope?.interleaved, gptj.headBias], [8, true, true]);
    const neo = parse({ model_type: 'gpt_neo', hidden_size: 32, num_heads: 4, num_layers: 4, attention_types: [[['global', 'local'], 2]], window_size: 256 });
    assert.deepEqual(neo.attention.map((a) => [a.scale, a.window]), [[1, undefined], [1, 256], [1, undefined], [1, 256]]);
    // GPTNeoConfig's defaults: attention_types [[["global", "local"], 12]]; num_attention_heads / num_hidden_layers as aliases.
    const neoDefault = parse({ model_type: 'gpt_neo', hidden_size: 32, num_attention_heads: 4, num_hidden_layers: 24 });
    assert.deepEqual([neoDefault.heads, neoDefault.layers, neoDefault.attention.filter((a) => a.window === 256).length, neoDefault.attention[1].window], [4, 24, 12, 256]);
    assert.throws(() => parse({ model_type: 'gpt_neo', hidden_size: 32, num_heads: 4, num_layers: 4 }), /attention_types give 24 layers/);
    const opt = parse({ model_type: 'opt', hidden_size: 32, num_attention_heads: 4, num_hidden_layers: 2, max_position_embeddings: 2048 });
    assert.deepEqual([opt.positions, opt.activation, opt.postLayerNorm, opt.embeddingWidth], [{ offset: 2, rows: 2050 }, 'relu', undefined, undefined]);
    // layer_norm_elementwise_affine false: OPT's LayerNorms, the final one too, have no parameters to read.
    const optPlain = layoutOf(parse({ model_type: 'opt', hidden_size: 32, num_attention_heads: 4, num_hidden_layers: 1, layer_norm_elementwise_affine: false }));
    assert.deepEqual([optPlain.layers[0].attentionInputNorm?.parameters, optPlain.layers[0].mlpInputNorm?.parameters, optPlain.finalNorm?.parameters], ['none', 'none', 'none']);
    const opt350 = parse({ model_type: 'opt', hidden_size: 1024, word_embed_proj_dim: 512, num_attention_heads: 16, num_hidden_layers: 2, do_layer_norm_before: false });
    assert.deepEqual([opt350.embeddingWidth, opt350.postLayerNorm], [512, true]);
    const roberta = parse({ model_type: 'xlm-roberta', hidden_size: 32, num_attention_heads: 4, num_hidden_layers: 2, max_position_embeddings: 514, pad_token_id: 1 });
    assert.deepEqual([roberta.maxPositions, roberta.positions, roberta.causal], [512, { offset: 0, rows: 514, paddingId: 1 }, false]);
    // RobertaLMHead: the erf gelu, whatever hidden_act the layers use.
    const robertaNew = parse({ model_type: 'roberta', hidden_size: 32, num_attention_heads: 4, num_hidden_layers: 2, hidden_act: 'gelu_new' });
    assert.deepEqual([robertaNew.activation, robertaNew.headActivation], ['gelu-tanh', 'gelu-erf']);
    const phi3 = parse({ model_type: 'phi3', hidden_size: 96, num_attention_heads: 4, num_hidden_layers: 1, partial_rotary_factor: 0.5, sliding_window: 2047 });
    assert.deepEqual([phi3.fusedQkv, phi3.fusedGateUp, phi3.attention[0].rope?.rotaryDim, phi3.attention[0].window], ['concatenated', true, 12, 2047]);
    const olmo = parse({ model_type: 'olmo', hidden_size: 32, num_attention_heads: 4, num_hidden_layers: 1, clip_qkv: 8 });
    assert.deepEqual([olmo.norm, olmo.normParameters, olmo.clipQkv], ['layer', 'none', 8]);
    const olmo2 = parse({ model_type: 'olmo2', hidden_size: 32, num_attention_heads: 4, num_hidden_layers: 1 });
    assert.deepEqual([olmo2.outputNormsOnly, olmo2.qkNormOver], [true, 'projection']);
    const granite = parse({ model_type: 'granite', hidden_size: 32, num_attention_heads: 4, num_hidden_layers: 1, embedding_multiplier: 12, residual_multiplier: 0.22, attention_multiplier: 0.0078125, logits_scaling: 8 });
    assert.deepEqual([granite.embeddingScale, granite.residualScale, granite.attention[0].scale, granite.logitScale], [12, 0.22, 0.0078125, 0.125]);
    // GemmaMLP applies hidden_act; hidden_activation is not read. head_dim defaults to 256.
    const gemma = parse({ model_type: 'gemma', hidden_size: 32, num_attention_heads: 2, num_hidden_layers: 1, head_dim: 16, hidden_act: 'gelu', hidden_activation: 'gelu_pytorch_tanh' });
    assert.deepEqual([gemma.norm, gemma.embeddingScale, gemma.activation, gemma.sandwichNorms, gemma.tiedEmbeddings, gemma.attention[0].scale], ['rms-plus-one', Math.sqrt(32), 'gelu-erf', false, true, 0.25]);
    const gemmaDefaults = parse({ model_type: 'gemma', hidden_size: 3072, num_attention_heads: 16, num_hidden_layers: 1 });
    assert.deepEqual([gemmaDefaults.headDim, gemmaDefaults.activation], [256, 'gelu-tanh']);
    const modern = parse({ model_type: 'modernbert', hidden_size: 32, num_attention_heads: 2, num_hidden_layers: 4, global_attn_every_n_layers: 3, local_attention: 128 });
    assert.deepEqual(modern.attention.map((a) => [a.window, a.rope?.theta]), [[undefined, 160000], [65, 10000], [65, 10000], [undefined, 160000]]);
    // transformers 5 writes the two thetas into rope_parameters, one set per layer type.
    const modern5 = parse({ model_type: 'modernbert', hidden_size: 32, num_attention_heads: 2, num_hidden_layers: 2, rope_parameters: { full_attention: { rope_type: 'default', rope_theta: 80000 }, sliding_attention: { rope_type: 'default', rope_theta: 20000 } } });
    assert.deepEqual(modern5.attention.map((a) => a.rope?.theta), [80000, 20000]);
    // Phi3Config: original_max_position_embeddings 4096 when config.json has none; "su" and "yarn" are read as longrope.
    const phi3Long = (type: string) => parse({ model_type: 'phi3', hidden_size: 32, num_attention_heads: 2, num_hidden_layers: 1, max_position_embeddings: 16384, rope_scaling: { type, short_factor: [1, 1, 1, 1, 1, 1, 1, 1], long_factor: [2, 2, 2, 2, 2, 2, 2, 2] } }).attention[0].rope;
    for (const type of ['longrope', 'su', 'yarn']) {
      const rope = phi3Long(type);
      assert.deepEqual([rope?.type, rope?.long?.beyond, rope?.attentionFactor], ['longrope', 4096, Math.sqrt(1 + Math.log(4) / Math.log(4096))], type);
    }
    const dynamic = llama({ max_position_embeddings: 2048, rope_scaling: { type: 'dynamic', factor: 2 } });
    assert.equal(dynamic.maxPositions, Number.MAX_SAFE_INTEGER, 'dynamic NTK runs past max_position_embeddings');
  });

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
    assert.throws(() => parseModelConfig('{"model_type": "pegasus"}'), new RegExp(`model_type "pegasus" is not supported: supported are ${SUPPORTED_MODEL_TYPES.join(', ')}, t5, bart, marian, mbart, vit`));
    assert.throws(() => parseModelConfig('{"model_type": "t5", "feed_forward_proj": "gated-swiglu"}'), /feed_forward_proj "gated-swiglu" is not supported/);
    assert.throws(() => parseModelConfig('{"model_type": "marian", "share_encoder_decoder_embeddings": false}'), /separate source and target vocabularies \(share_encoder_decoder_embeddings false, or a decoder_vocab_size other than vocab_size\) are not supported/);
    assert.throws(() => parseModelConfig('{}'), /model_type is missing: supported are gpt2, bert/);
    assert.throws(() => parseModelConfig('{"model_type": "gpt2",'), /config\.json is not JSON/);
    assert.throws(() => llama({ rope_scaling: { rope_type: 'mrope', factor: 4 } }), /rope type "mrope" is not supported: supported are default, linear, llama3, dynamic, yarn, longrope/);
    assert.throws(() => llama({ partial_rotary_factor: 0.3 }), /the rotary width 19 \(of head_dim 64\) is odd: RoPE turns pairs of columns/);
    assert.throws(() => parseModelConfig(JSON.stringify({ model_type: 'gptj', n_embd: 64, n_head: 4, n_layer: 1, rotary_dim: 7 })), /rotary width 7 \(of head_dim 16\) is odd/);
    assert.throws(
      () => parseModelConfig(JSON.stringify({ model_type: 'mpt_custom', auto_map: { AutoConfig: 'configuration_mpt.MPTConfig', AutoModelForCausalLM: 'acme/mpt--modeling_mpt.MPTForCausalLM' } })),
      /model_type "mpt_custom" and its architecture only as Python code \(auto_map → configuration_mpt\.py, modeling_mpt\.py\): Attention Lens does not run a model folder's code/,
    );
    assert.throws(() => llama({ rope_scaling: { rope_type: 'longrope', short_factor: [1, 2], long_factor: [1, 2] }, max_position_embeddings: 64 }), /needs short_factor: 32 positive numbers/);
    assert.throws(() => llama({ rope_scaling: { rope_type: 'llama3', factor: 8 } }), /rope type "llama3" needs a positive low_freq_factor/);
    assert.throws(() => llama({ num_key_value_heads: 3 }), /num_attention_heads \(4\) is not a multiple of num_key_value_heads \(3\)/);
    assert.throws(() => llama({ hidden_act: 'tanh' }), /hidden_act "tanh" is not supported: supported are gelu_new, gelu_pytorch_tanh, gelu, quick_gelu, silu and relu/);
  });
});
