// Random-weight model folders at published shapes, for `npm run bench:model` and profiling:
//
//   node scripts/gen-bench-models.mjs OUTDIR NAME...   NAME: gpt2-small qwen2.5-0.5b llama-3.2-1b llama-3.1-8b t5-small opus-mt-en-de
//
// Each tensor is streamed to its safetensors file 16 MiB at a time (the 8B's 16 GB never sit in
// memory), shards of at most 4 GB with model.safetensors.index.json past that. A folder whose
// config.json exists is kept (it is written last, so a cut-off write is redone). Values are uniform
// in ±0.035 (std 0.02, as the models initialise) from a fixed seed; norms are ones. No tokenizer:
// the bench gives token ids.
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statfsSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const llamaFamily = (modelType, o) => ({
  architectures: [modelType === 'qwen2' ? 'Qwen2ForCausalLM' : 'LlamaForCausalLM'],
  model_type: modelType,
  hidden_act: 'silu',
  rms_norm_eps: 1e-5,
  torch_dtype: 'bfloat16',
  bos_token_id: 1,
  eos_token_id: 2,
  ...o,
});

/** The published configs (their sizes and positions; ids and names of no use here left out). */
export const SHAPES = {
  'gpt2-small': {
    dtype: 'F32',
    config: { architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', vocab_size: 50257, n_positions: 1024, n_embd: 768, n_layer: 12, n_head: 12, layer_norm_epsilon: 1e-5, activation_function: 'gelu_new' },
  },
  'qwen2.5-0.5b': {
    dtype: 'BF16',
    config: llamaFamily('qwen2', { vocab_size: 151936, hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24, num_attention_heads: 14, num_key_value_heads: 2, max_position_embeddings: 32768, rope_theta: 1000000.0, rms_norm_eps: 1e-6, tie_word_embeddings: true, use_sliding_window: false }),
  },
  'llama-3.2-1b': {
    dtype: 'BF16',
    config: llamaFamily('llama', {
      vocab_size: 128256, hidden_size: 2048, intermediate_size: 8192, num_hidden_layers: 16, num_attention_heads: 32, num_key_value_heads: 8, head_dim: 64, max_position_embeddings: 131072, rope_theta: 500000.0, tie_word_embeddings: true,
      rope_scaling: { rope_type: 'llama3', factor: 32.0, low_freq_factor: 1.0, high_freq_factor: 4.0, original_max_position_embeddings: 8192 },
    }),
  },
  // Issue 43's encoder–decoder shapes: T5-small (60M) and Helsinki-NLP/opus-mt-en-de (74M).
  't5-small': {
    dtype: 'F32',
    config: {
      architectures: ['T5ForConditionalGeneration'], model_type: 't5', d_model: 512, d_kv: 64, d_ff: 2048, num_layers: 6, num_decoder_layers: 6, num_heads: 8,
      relative_attention_num_buckets: 32, relative_attention_max_distance: 128, layer_norm_epsilon: 1e-6, feed_forward_proj: 'relu', tie_word_embeddings: true,
      vocab_size: 32128, pad_token_id: 0, eos_token_id: 1, decoder_start_token_id: 0,
    },
  },
  'opus-mt-en-de': {
    dtype: 'F32',
    config: {
      architectures: ['MarianMTModel'], model_type: 'marian', d_model: 512, encoder_layers: 6, decoder_layers: 6, encoder_attention_heads: 8, decoder_attention_heads: 8,
      encoder_ffn_dim: 2048, decoder_ffn_dim: 2048, vocab_size: 58101, max_position_embeddings: 512, activation_function: 'swish', scale_embedding: true,
      pad_token_id: 58100, eos_token_id: 0, decoder_start_token_id: 58100, bad_words_ids: [[58100]], tie_word_embeddings: true,
    },
  },
  'llama-3.1-8b': {
    dtype: 'BF16',
    config: llamaFamily('llama', {
      vocab_size: 128256, hidden_size: 4096, intermediate_size: 14336, num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: 8, max_position_embeddings: 131072, rope_theta: 500000.0, tie_word_embeddings: false,
      rope_scaling: { rope_type: 'llama3', factor: 8.0, low_freq_factor: 1.0, high_freq_factor: 4.0, original_max_position_embeddings: 8192 },
    }),
  },
};

/** [name, shape, kind] of every tensor, in the order the checkpoints store them. */
export function tensorsOf(config) {
  const out = [];
  if (config.model_type === 't5' || config.model_type === 'marian') return encoderDecoderTensors(config);
  if (config.model_type === 'gpt2') {
    const c = config.n_embd;
    out.push(['wte.weight', [config.vocab_size, c]], ['wpe.weight', [config.n_positions, c]]);
    for (let i = 0; i < config.n_layer; i++) {
      const p = `h.${i}`;
      out.push([`${p}.ln_1.weight`, [c], 'one'], [`${p}.ln_1.bias`, [c], 'zero'], [`${p}.attn.c_attn.weight`, [c, 3 * c]], [`${p}.attn.c_attn.bias`, [3 * c]], [`${p}.attn.c_proj.weight`, [c, c]], [`${p}.attn.c_proj.bias`, [c]]);
      out.push([`${p}.ln_2.weight`, [c], 'one'], [`${p}.ln_2.bias`, [c], 'zero'], [`${p}.mlp.c_fc.weight`, [c, 4 * c]], [`${p}.mlp.c_fc.bias`, [4 * c]], [`${p}.mlp.c_proj.weight`, [4 * c, c]], [`${p}.mlp.c_proj.bias`, [c]]);
    }
    out.push(['ln_f.weight', [c], 'one'], ['ln_f.bias', [c], 'zero']);
    return out;
  }
  const h = config.hidden_size;
  const d = config.head_dim ?? h / config.num_attention_heads;
  const q = config.num_attention_heads * d;
  const kv = config.num_key_value_heads * d;
  const f = config.intermediate_size;
  const bias = config.model_type === 'qwen2';
  out.push(['model.embed_tokens.weight', [config.vocab_size, h]]);
  for (let i = 0; i < config.num_hidden_layers; i++) {
    const p = `model.layers.${i}`;
    out.push([`${p}.input_layernorm.weight`, [h], 'one']);
    for (const [m, width] of [['q', q], ['k', kv], ['v', kv]]) {
      out.push([`${p}.self_attn.${m}_proj.weight`, [width, h]]);
      if (bias) out.push([`${p}.self_attn.${m}_proj.bias`, [width]]);
    }
    out.push([`${p}.self_attn.o_proj.weight`, [h, q]], [`${p}.post_attention_layernorm.weight`, [h], 'one']);
    out.push([`${p}.mlp.gate_proj.weight`, [f, h]], [`${p}.mlp.up_proj.weight`, [f, h]], [`${p}.mlp.down_proj.weight`, [h, f]]);
  }
  out.push(['model.norm.weight', [h], 'one']);
  if (!config.tie_word_embeddings) out.push(['lm_head.weight', [config.vocab_size, h]]);
  return out;
}

/** T5ForConditionalGeneration's and MarianMTModel's tensors (issue 43's bench: bench/seq2seq.ts). */
function encoderDecoderTensors(config) {
  const out = [];
  const D = config.d_model;
  if (config.model_type === 't5') {
    const inner = config.num_heads * config.d_kv;
    out.push(['shared.weight', [config.vocab_size, D]]);
    for (const side of ['encoder', 'decoder']) {
      for (let i = 0; i < config.num_layers; i++) {
        const at = `${side}.block.${i}.layer`;
        const attentions = side === 'decoder' ? ['0.SelfAttention', '1.EncDecAttention'] : ['0.SelfAttention'];
        attentions.forEach((name, j) => {
          out.push([`${at}.${j}.layer_norm.weight`, [D], 'one']);
          for (const p of 'qkv') out.push([`${at}.${name}.${p}.weight`, [inner, D]]);
          out.push([`${at}.${name}.o.weight`, [D, inner]]);
          if (i === 0 && j === 0) out.push([`${at}.${name}.relative_attention_bias.weight`, [config.relative_attention_num_buckets, config.num_heads]]);
        });
        const ff = `${at}.${attentions.length}`;
        out.push([`${ff}.layer_norm.weight`, [D], 'one'], [`${ff}.DenseReluDense.wi.weight`, [config.d_ff, D]], [`${ff}.DenseReluDense.wo.weight`, [D, config.d_ff]]);
      }
      out.push([`${side}.final_layer_norm.weight`, [D], 'one']);
    }
    return out;
  }
  out.push(['final_logits_bias', [1, config.vocab_size], 'zero'], ['model.shared.weight', [config.vocab_size, D]]);
  for (const side of ['encoder', 'decoder']) {
    for (let i = 0; i < config[`${side}_layers`]; i++) {
      const at = `model.${side}.layers.${i}`;
      const linear = (name, outWidth, inWidth) => out.push([`${name}.weight`, [outWidth, inWidth]], [`${name}.bias`, [outWidth]]);
      const norm = (name) => out.push([`${name}.weight`, [D], 'one'], [`${name}.bias`, [D], 'zero']);
      for (const name of side === 'decoder' ? ['self_attn', 'encoder_attn'] : ['self_attn']) {
        for (const p of ['k_proj', 'v_proj', 'q_proj', 'out_proj']) linear(`${at}.${name}.${p}`, D, D);
        norm(`${at}.${name}_layer_norm`);
      }
      linear(`${at}.fc1`, config[`${side}_ffn_dim`], D);
      linear(`${at}.fc2`, D, config[`${side}_ffn_dim`]);
      norm(`${at}.final_layer_norm`);
    }
  }
  return out;
}

const BYTES = { F32: 4, BF16: 2 };
const SHARD_BYTES = 4e9;
const CHUNK = 4 * 2 ** 20; // elements per write

/** Bytes the folder's weights take (what the bench checks against the free disk and memory). */
export function folderBytes(name) {
  const { dtype, config } = SHAPES[name];
  return tensorsOf(config).reduce((sum, [, shape]) => sum + shape.reduce((a, b) => a * b, 1) * BYTES[dtype], 0);
}

let seed = 0x2545f491;
const floats = new Float32Array(CHUNK);
/** `count` values of `kind` into `floats` (uniform ±0.035 from xorshift32, or constant). */
function fill(count, kind) {
  if (kind) return floats.fill(kind === 'one' ? 1 : 0, 0, count);
  let s = seed;
  for (let i = 0; i < count; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    floats[i] = (s >>> 0) * (0.07 / 4294967296) - 0.035;
  }
  seed = s;
  return floats;
}

function writeTensor(fd, shape, kind, dtype) {
  let left = shape.reduce((a, b) => a * b, 1);
  while (left > 0) {
    const count = Math.min(left, CHUNK);
    const values = fill(count, kind);
    if (dtype === 'F32') writeSync(fd, new Uint8Array(values.buffer, 0, count * 4));
    else {
      // bf16: the upper halves of the float32s (truncation), packed.
      const halves = new Uint16Array(values.buffer, 0, count * 2);
      const out = new Uint16Array(count);
      for (let i = 0; i < count; i++) out[i] = halves[2 * i + 1];
      writeSync(fd, new Uint8Array(out.buffer));
    }
    left -= count;
  }
}

export function writeFolder(out, name) {
  const { dtype, config } = SHAPES[name];
  const folder = join(out, name);
  if (existsSync(join(folder, 'config.json'))) return folder;
  const need = folderBytes(name);
  const free = statfsSync(out).bavail * statfsSync(out).bsize;
  if (free < need * 1.05) throw new Error(`${name} needs ${(need / 1e9).toFixed(1)} GB of disk, ${(free / 1e9).toFixed(1)} GB free in ${out}`);
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  const tensors = tensorsOf(config);
  // Shards in order, each at most SHARD_BYTES (one shard when the whole fits).
  const shards = [];
  for (const t of tensors) {
    const bytes = t[1].reduce((a, b) => a * b, 1) * BYTES[dtype];
    if (!shards.length || (shards.at(-1).bytes + bytes > SHARD_BYTES && shards.at(-1).tensors.length)) shards.push({ tensors: [], bytes: 0 });
    shards.at(-1).tensors.push(t);
    shards.at(-1).bytes += bytes;
  }
  const names = shards.length === 1 ? ['model.safetensors'] : shards.map((_, i) => `model-${String(i + 1).padStart(5, '0')}-of-${String(shards.length).padStart(5, '0')}.safetensors`);
  const weightMap = {};
  shards.forEach((shard, s) => {
    const header = { __metadata__: { format: 'pt' } };
    let offset = 0;
    for (const [tensor, shape] of shard.tensors) {
      const bytes = shape.reduce((a, b) => a * b, 1) * BYTES[dtype];
      header[tensor] = { dtype, shape, data_offsets: [offset, offset + bytes] };
      offset += bytes;
      weightMap[tensor] = names[s];
    }
    let text = JSON.stringify(header);
    text += ' '.repeat((8 - ((8 + text.length) % 8)) % 8);
    const fd = openSync(join(folder, names[s]), 'w');
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(text.length));
    writeSync(fd, length);
    writeSync(fd, Buffer.from(text));
    for (const [, shape, kind] of shard.tensors) writeTensor(fd, shape, kind, dtype);
    closeSync(fd);
  });
  if (names.length > 1) writeFileSync(join(folder, 'model.safetensors.index.json'), JSON.stringify({ metadata: { total_size: need }, weight_map: weightMap }, null, 1));
  writeFileSync(join(folder, 'config.json'), JSON.stringify(config, null, 2));
  return folder;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [out, ...names] = process.argv.slice(2);
  if (!out || !names.length || names.some((n) => !SHAPES[n])) {
    console.error(`usage: node scripts/gen-bench-models.mjs OUTDIR NAME...  (NAME: ${Object.keys(SHAPES).join(', ')})`);
    process.exit(1);
  }
  mkdirSync(out, { recursive: true });
  for (const name of names) {
    const t = performance.now();
    const folder = writeFolder(out, name);
    console.log(`${folder}: ${(folderBytes(name) / 1e9).toFixed(2)} GB in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
}
