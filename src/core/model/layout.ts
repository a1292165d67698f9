// Where each architecture keeps its pieces: tensor names (without the class prefix), shapes and
// storage layouts, as data the one forward pass (forward.ts) walks. GPT-2's Conv1D stores
// weights [in, out]; nn.Linear stores [out, in].
import { decoderConfigOf, type DenseFamily, type ModelConfig, type MoeConfig, type VisionSpec } from './config';

export interface LinearLayout {
  name: string;
  in: number;
  out: number;
  bias: boolean;
  /** 'in-out': y = x·W (Conv1D); 'out-in': y = x·Wᵀ (nn.Linear). */
  stored: 'in-out' | 'out-in';
  /** Output rows [start, start + out) of a fused nn.Linear of `total` outputs (Phi-3's gate_up_proj): the rest is another layer's. */
  rows?: { start: number; total: number };
  /** Outputs stored per head, [heads, parts, width] (GPT-NeoX's query_key_value: q, k, v of head 0, then head 1…), read as [parts, heads, width]: q | k | v. */
  perHead?: { heads: number; parts: number };
}

export interface NormLayout {
  /** The module's name: its parameters are NAME.weight (and NAME.bias for LayerNorm). */
  name: string;
  width: number;
  /** 'none': no parameters (OLMo's LayerNorm); 'weight': a LayerNorm without bias. Absent: the config's norm with all its parameters. */
  parameters?: 'none' | 'weight';
  /** One norm per head, NAME.norms.H.weight each (StableLM's qk_layernorm): rows of `width` take the heads' parameters in turn. */
  perHead?: number;
}

export type QkvLayout = { fused: LinearLayout } | { q: LinearLayout; k: LinearLayout; v: LinearLayout };

export interface LayerLayout {
  /** Before attention and before the MLP (pre-LN); absent in BERT's post-LN blocks. */
  attentionInputNorm?: NormLayout;
  mlpInputNorm?: NormLayout;
  qkv: QkvLayout;
  /** Per-head norms of q and k (Qwen3, Gemma 3). */
  qNorm?: NormLayout;
  kNorm?: NormLayout;
  out: LinearLayout;
  /** Post-LN (BERT): norm(x + attention), norm(x + mlp). Gemma 2/3: norm(attention) before the residual add. */
  attentionOutputNorm?: NormLayout;
  mlpOutputNorm?: NormLayout;
  postNorm: boolean;
  gate?: LinearLayout;
  up: LinearLayout;
  down: LinearLayout;
  /** Attention and MLP side by side on the block's input: x + attention + mlp (the MLP's input norm, or the attention's when absent). */
  parallel?: boolean;
  /** A mixture-of-experts layer: its router and experts run in place of the MLP (gate/up/down are then its first expert's). */
  experts?: ExpertsLayout;
  /** DINOv2's layer scales: the attention's and the MLP's output times these [hidden] vectors before the residual add. */
  attentionScale?: string;
  mlpScale?: string;
  /** An encoder–decoder model's decoder layer: its cross-attention, after the self-attention and before the MLP, its keys and values from the encoder's output. */
  cross?: CrossLayout;
}

/** A decoder layer's cross-attention: its norm (before it, pre-LN; after its residual add, post-LN: the layer's postNorm says which), projections and output. */
export interface CrossLayout {
  inputNorm?: NormLayout;
  outputNorm?: NormLayout;
  q: LinearLayout;
  k: LinearLayout;
  v: LinearLayout;
  out: LinearLayout;
}

/** An MLP's products: a dense layer's, a routed expert's or a shared expert's. */
export type MlpLayout = Pick<LayerLayout, 'gate' | 'up' | 'down'>;

export interface ModelLayout {
  tokenEmbeddings: string;
  /** Other names the same (tied) table may be stored under, tried in turn when tokenEmbeddings is absent (T5's shared / encoder.embed_tokens / decoder.embed_tokens). */
  tokenEmbeddingsAlso?: string[];
  positionEmbeddings?: string;
  typeEmbeddings?: string;
  embeddingNorm?: NormLayout;
  layers: LayerLayout[];
  finalNorm?: NormLayout;
  /** The LM head: `lm_head.weight` or the tied token embeddings, [vocab × hidden]. */
  head: string[];
  /** BERT's MLM head: dense + activation + LayerNorm before the decoder, and the decoder's bias. */
  mlmTransform?: { dense: LinearLayout; norm: NormLayout; bias: string };
  /** The LM head's own bias (GPT-J, Phi). */
  headBias?: string;
  /** OPT-350m: embeddings (embeddingWidth wide) projected to hidden before the layers, and the final hidden state back after them. */
  projectIn?: LinearLayout;
  projectOut?: LinearLayout;
  /** Vision transformers: where the picture's embedding step (patches.ts) finds its tensors. */
  vision?: VisionLayout;
  /** T5: the relative position bias table [buckets × heads] every layer of this stack adds to its self-attention scores (bidirectional in the encoder, causal in the decoder). */
  relativeBias?: { table: string; bidirectional: boolean };
  /** An encoder–decoder model: the decoder stack (its layers have `cross`); the LM head is the decoder's. */
  decoder?: ModelLayout;
}

export interface VisionLayout {
  /** The Conv2d projecting each patch, weight [hidden, channels, patch, patch] (and its bias). */
  patch: { weight: string; bias?: string };
  classToken?: string;
  distillationToken?: string;
  registerTokens?: string;
  positions: string;
  /** Classification heads on the final (normed) states; two are averaged (DeiT with its teacher). */
  classifiers: LinearLayout[];
}

export function layoutOf(c: ModelConfig): ModelLayout {
  switch (c.family) {
    case 'gpt2':
      return gpt2(c);
    case 'bert':
      return bert(c);
    case 'llama':
      return llamaRelative(c, llama(c));
    case 'vision':
      return visionLayout(c, guessedVisionPrefix(c));
    case 't5':
      return t5Layout(c);
    case 'bart':
      return bartLayout(c);
    default:
      return denseLayoutOf(c, c.family);
  }
}

const linear = (name: string, inWidth: number, out: number, bias: boolean, stored: LinearLayout['stored']): LinearLayout => ({ name, in: inWidth, out, bias, stored });

function gpt2(c: ModelConfig): ModelLayout {
  const C = c.hidden;
  return {
    tokenEmbeddings: 'wte.weight',
    positionEmbeddings: 'wpe.weight',
    layers: Array.from({ length: c.layers }, (_, i) => ({
      attentionInputNorm: { name: `h.${i}.ln_1`, width: C },
      mlpInputNorm: { name: `h.${i}.ln_2`, width: C },
      qkv: { fused: linear(`h.${i}.attn.c_attn`, C, 3 * C, true, 'in-out') },
      out: linear(`h.${i}.attn.c_proj`, C, C, true, 'in-out'),
      postNorm: false,
      up: linear(`h.${i}.mlp.c_fc`, C, c.intermediate, true, 'in-out'),
      down: linear(`h.${i}.mlp.c_proj`, c.intermediate, C, true, 'in-out'),
    })),
    finalNorm: { name: 'ln_f', width: C },
    head: ['lm_head.weight', 'wte.weight'],
  };
}

function bert(c: ModelConfig): ModelLayout {
  const C = c.hidden;
  return {
    tokenEmbeddings: 'embeddings.word_embeddings.weight',
    positionEmbeddings: 'embeddings.position_embeddings.weight',
    typeEmbeddings: 'embeddings.token_type_embeddings.weight',
    embeddingNorm: { name: 'embeddings.LayerNorm', width: C },
    layers: Array.from({ length: c.layers }, (_, i) => {
      const at = `encoder.layer.${i}`;
      return {
        qkv: {
          q: linear(`${at}.attention.self.query`, C, C, true, 'out-in'),
          k: linear(`${at}.attention.self.key`, C, C, true, 'out-in'),
          v: linear(`${at}.attention.self.value`, C, C, true, 'out-in'),
        },
        out: linear(`${at}.attention.output.dense`, C, C, true, 'out-in'),
        attentionOutputNorm: { name: `${at}.attention.output.LayerNorm`, width: C },
        postNorm: true,
        up: linear(`${at}.intermediate.dense`, C, c.intermediate, true, 'out-in'),
        down: linear(`${at}.output.dense`, c.intermediate, C, true, 'out-in'),
        mlpOutputNorm: { name: `${at}.output.LayerNorm`, width: C },
      };
    }),
    head: ['cls.predictions.decoder.weight', 'embeddings.word_embeddings.weight'],
    mlmTransform: { dense: linear('cls.predictions.transform.dense', C, C, true, 'out-in'), norm: { name: 'cls.predictions.transform.LayerNorm', width: C }, bias: 'cls.predictions.bias' },
  };
}

function llama(c: ModelConfig): ModelLayout {
  const C = c.hidden;
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const gemma = c.sandwichNorms;
  return {
    tokenEmbeddings: 'embed_tokens.weight',
    layers: Array.from({ length: c.layers }, (_, i) => {
      const at = `layers.${i}`;
      return {
        attentionInputNorm: { name: `${at}.input_layernorm`, width: C },
        // Llama's post_attention_layernorm is the MLP's input norm; Gemma 2/3 have four norms.
        mlpInputNorm: { name: gemma ? `${at}.pre_feedforward_layernorm` : `${at}.post_attention_layernorm`, width: C },
        ...(gemma ? { attentionOutputNorm: { name: `${at}.post_attention_layernorm`, width: C }, mlpOutputNorm: { name: `${at}.post_feedforward_layernorm`, width: C } } : {}),
        qkv: {
          q: linear(`${at}.self_attn.q_proj`, C, q, c.qkvBias, 'out-in'),
          k: linear(`${at}.self_attn.k_proj`, C, kv, c.qkvBias, 'out-in'),
          v: linear(`${at}.self_attn.v_proj`, C, kv, c.qkvBias, 'out-in'),
        },
        ...(c.qkNorm ? { qNorm: { name: `${at}.self_attn.q_norm`, width: c.headDim }, kNorm: { name: `${at}.self_attn.k_norm`, width: c.headDim } } : {}),
        out: linear(`${at}.self_attn.o_proj`, q, C, c.outputBias, 'out-in'),
        postNorm: false,
        gate: linear(`${at}.mlp.gate_proj`, C, c.intermediate, c.mlpBias, 'out-in'),
        up: linear(`${at}.mlp.up_proj`, C, c.intermediate, c.mlpBias, 'out-in'),
        down: linear(`${at}.mlp.down_proj`, c.intermediate, C, c.mlpBias, 'out-in'),
        ...(c.moe?.sparse[i] ? expertsLayer(c.moe, C, at) : {}),
      };
    }),
    finalNorm: { name: 'norm', width: C },
    head: c.tiedEmbeddings ? ['lm_head.weight', 'embed_tokens.weight'] : ['lm_head.weight'],
  };
}

// ---------------------------------------------------------------- issue 40's dense families

/** A Llama relative's differences from Llama's map, each a field of its description (config.ts). */
function llamaRelative(c: ModelConfig, base: ModelLayout): ModelLayout {
  const C = c.hidden;
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const parameters = (N: NormLayout | undefined): NormLayout | undefined => (N && c.normParameters ? { ...N, parameters: c.normParameters } : N);
  const layers = base.layers.map((L, i): LayerLayout => {
    const at = `layers.${i}`;
    const out: LayerLayout = { ...L, attentionInputNorm: parameters(L.attentionInputNorm), mlpInputNorm: parameters(L.mlpInputNorm) };
    if (c.fusedQkv === 'concatenated') out.qkv = { fused: linear(`${at}.self_attn.qkv_proj`, C, q + 2 * kv, c.qkvBias, 'out-in') };
    if (c.fusedGateUp) {
      const fused = linear(`${at}.mlp.gate_up_proj`, C, c.intermediate, c.mlpBias, 'out-in');
      out.gate = { ...fused, rows: { start: 0, total: 2 * c.intermediate } };
      out.up = { ...fused, rows: { start: c.intermediate, total: 2 * c.intermediate } };
    }
    if (c.outputNormsOnly) {
      // OLMo 2: x + norm(attention(x)), x + norm(mlp(x)).
      out.attentionInputNorm = undefined;
      out.mlpInputNorm = undefined;
      out.attentionOutputNorm = { name: `${at}.post_attention_layernorm`, width: C };
      out.mlpOutputNorm = { name: `${at}.post_feedforward_layernorm`, width: C };
    }
    if (c.qkNorm && c.qkNormOver === 'projection') {
      out.qNorm = { name: `${at}.self_attn.q_norm`, width: q };
      out.kNorm = { name: `${at}.self_attn.k_norm`, width: kv };
    }
    if (c.qkNorm && c.qkNormPerHeadWeights) {
      out.qNorm = { name: `${at}.self_attn.q_layernorm`, width: c.headDim, parameters: 'weight', perHead: c.heads };
      out.kNorm = { name: `${at}.self_attn.k_layernorm`, width: c.headDim, parameters: 'weight', perHead: c.kvHeads };
    }
    if (c.parallelResidual) {
      out.parallel = true;
      out.mlpInputNorm = undefined; // StableLM's parallel block has no post_attention_layernorm: the MLP reads input_layernorm's output
    }
    return out;
  });
  return { ...base, layers, finalNorm: parameters(base.finalNorm) };
}

function denseLayoutOf(c: ModelConfig, family: DenseFamily): ModelLayout {
  switch (family) {
    case 'gpt_neox':
      return gptNeox(c);
    case 'gptj':
      return gptj(c);
    case 'gpt_neo':
      return gptNeo(c);
    case 'opt':
      return opt(c);
    case 'phi':
      return phi(c);
    case 'roberta':
      return { ...bert(c), head: ['lm_head.decoder.weight', 'embeddings.word_embeddings.weight'], mlmTransform: { dense: linear('lm_head.dense', c.hidden, c.hidden, true, 'out-in'), norm: { name: 'lm_head.layer_norm', width: c.hidden }, bias: 'lm_head.bias' } };
    case 'distilbert':
      return distilbert(c);
    case 'modernbert':
      return modernbert(c);
  }
}

/** Pythia: fused query_key_value per head, untied embed_out, parallel or sequential residual. */
function gptNeox(c: ModelConfig): ModelLayout {
  const C = c.hidden;
  return {
    tokenEmbeddings: 'embed_in.weight',
    layers: Array.from({ length: c.layers }, (_, i) => {
      const at = `layers.${i}`;
      return {
        attentionInputNorm: { name: `${at}.input_layernorm`, width: C },
        mlpInputNorm: { name: `${at}.post_attention_layernorm`, width: C },
        qkv: { fused: { ...linear(`${at}.attention.query_key_value`, C, 3 * C, c.qkvBias, 'out-in'), perHead: { heads: c.heads, parts: 3 } } },
        out: linear(`${at}.attention.dense`, C, C, c.outputBias, 'out-in'),
        postNorm: false,
        up: linear(`${at}.mlp.dense_h_to_4h`, C, c.intermediate, true, 'out-in'),
        down: linear(`${at}.mlp.dense_4h_to_h`, c.intermediate, C, true, 'out-in'),
        parallel: c.parallelResidual === true,
      };
    }),
    finalNorm: { name: 'final_layer_norm', width: C },
    head: c.tiedEmbeddings ? ['embed_out.weight', 'embed_in.weight'] : ['embed_out.weight'],
  };
}

/** GPT-J: split q/k/v without biases, attention and MLP in parallel from ln_1, an LM head with a bias. */
function gptj(c: ModelConfig): ModelLayout {
  const C = c.hidden;
  return {
    tokenEmbeddings: 'wte.weight',
    layers: Array.from({ length: c.layers }, (_, i) => {
      const at = `h.${i}`;
      return {
        attentionInputNorm: { name: `${at}.ln_1`, width: C },
        qkv: { q: linear(`${at}.attn.q_proj`, C, C, false, 'out-in'), k: linear(`${at}.attn.k_proj`, C, C, false, 'out-in'), v: linear(`${at}.attn.v_proj`, C, C, false, 'out-in') },
        out: linear(`${at}.attn.out_proj`, C, C, false, 'out-in'),
        postNorm: false,
        up: linear(`${at}.mlp.fc_in`, C, c.intermediate, true, 'out-in'),
        down: linear(`${at}.mlp.fc_out`, c.intermediate, C, true, 'out-in'),
        parallel: true,
      };
    }),
    finalNorm: { name: 'ln_f', width: C },
    head: ['lm_head.weight'],
    headBias: 'lm_head.bias',
  };
}

/** GPT-Neo: GPT-2's block with nn.Linear layers, q/k/v without biases. */
function gptNeo(c: ModelConfig): ModelLayout {
  const C = c.hidden;
  return {
    tokenEmbeddings: 'wte.weight',
    positionEmbeddings: 'wpe.weight',
    layers: Array.from({ length: c.layers }, (_, i) => {
      const at = `h.${i}`;
      return {
        attentionInputNorm: { name: `${at}.ln_1`, width: C },
        mlpInputNorm: { name: `${at}.ln_2`, width: C },
        qkv: { q: linear(`${at}.attn.attention.q_proj`, C, C, false, 'out-in'), k: linear(`${at}.attn.attention.k_proj`, C, C, false, 'out-in'), v: linear(`${at}.attn.attention.v_proj`, C, C, false, 'out-in') },
        out: linear(`${at}.attn.attention.out_proj`, C, C, true, 'out-in'),
        postNorm: false,
        up: linear(`${at}.mlp.c_fc`, C, c.intermediate, true, 'out-in'),
        down: linear(`${at}.mlp.c_proj`, c.intermediate, C, true, 'out-in'),
      };
    }),
    finalNorm: { name: 'ln_f', width: C },
    head: ['lm_head.weight', 'wte.weight'],
  };
}

/** OPT: pre-LN, or post-LN when do_layer_norm_before is false (the same two norms after each residual add). */
function opt(c: ModelConfig): ModelLayout {
  const C = c.hidden;
  const post = c.postLayerNorm === true;
  // layer_norm_elementwise_affine false: every LayerNorm, the final one too, without weight or bias.
  const norm = (name: string): NormLayout => ({ name, width: C, ...(c.normParameters ? { parameters: c.normParameters } : {}) });
  return {
    tokenEmbeddings: 'decoder.embed_tokens.weight',
    positionEmbeddings: 'decoder.embed_positions.weight',
    layers: Array.from({ length: c.layers }, (_, i) => {
      const at = `decoder.layers.${i}`;
      const [attentionNorm, mlpNorm] = [norm(`${at}.self_attn_layer_norm`), norm(`${at}.final_layer_norm`)];
      return {
        ...(post ? { attentionOutputNorm: attentionNorm, mlpOutputNorm: mlpNorm } : { attentionInputNorm: attentionNorm, mlpInputNorm: mlpNorm }),
        qkv: { q: linear(`${at}.self_attn.q_proj`, C, C, c.qkvBias, 'out-in'), k: linear(`${at}.self_attn.k_proj`, C, C, c.qkvBias, 'out-in'), v: linear(`${at}.self_attn.v_proj`, C, C, c.qkvBias, 'out-in') },
        out: linear(`${at}.self_attn.out_proj`, C, C, c.outputBias, 'out-in'),
        postNorm: post,
        up: linear(`${at}.fc1`, C, c.intermediate, c.mlpBias, 'out-in'),
        down: linear(`${at}.fc2`, c.intermediate, C, c.mlpBias, 'out-in'),
      };
    }),
    ...(post ? {} : { finalNorm: norm('decoder.final_layer_norm') }),
    head: ['lm_head.weight', 'decoder.embed_tokens.weight'],
    ...(c.embeddingWidth !== undefined
      ? { projectIn: linear('decoder.project_in', c.embeddingWidth, C, false, 'out-in'), projectOut: linear('decoder.project_out', C, c.embeddingWidth, false, 'out-in') }
      : {}),
  };
}

/** Phi-2: one LayerNorm before attention and MLP side by side, `dense` output, final_layernorm, an LM head with a bias. */
function phi(c: ModelConfig): ModelLayout {
  const C = c.hidden;
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  return {
    tokenEmbeddings: 'embed_tokens.weight',
    layers: Array.from({ length: c.layers }, (_, i) => {
      const at = `layers.${i}`;
      return {
        attentionInputNorm: { name: `${at}.input_layernorm`, width: C },
        qkv: { q: linear(`${at}.self_attn.q_proj`, C, q, true, 'out-in'), k: linear(`${at}.self_attn.k_proj`, C, kv, true, 'out-in'), v: linear(`${at}.self_attn.v_proj`, C, kv, true, 'out-in') },
        ...(c.qkNorm ? { qNorm: { name: `${at}.self_attn.q_layernorm`, width: c.headDim }, kNorm: { name: `${at}.self_attn.k_layernorm`, width: c.headDim } } : {}),
        out: linear(`${at}.self_attn.dense`, q, C, true, 'out-in'),
        postNorm: false,
        up: linear(`${at}.mlp.fc1`, C, c.intermediate, true, 'out-in'),
        down: linear(`${at}.mlp.fc2`, c.intermediate, C, true, 'out-in'),
        parallel: true,
      };
    }),
    finalNorm: { name: 'final_layernorm', width: C },
    head: c.tiedEmbeddings ? ['lm_head.weight', 'embed_tokens.weight'] : ['lm_head.weight'],
    headBias: 'lm_head.bias',
  };
}

/** DistilBERT: BERT's post-LN block under other names, no token types. */
function distilbert(c: ModelConfig): ModelLayout {
  const C = c.hidden;
  return {
    tokenEmbeddings: 'embeddings.word_embeddings.weight',
    positionEmbeddings: 'embeddings.position_embeddings.weight',
    embeddingNorm: { name: 'embeddings.LayerNorm', width: C },
    layers: Array.from({ length: c.layers }, (_, i) => {
      const at = `transformer.layer.${i}`;
      return {
        qkv: { q: linear(`${at}.attention.q_lin`, C, C, true, 'out-in'), k: linear(`${at}.attention.k_lin`, C, C, true, 'out-in'), v: linear(`${at}.attention.v_lin`, C, C, true, 'out-in') },
        out: linear(`${at}.attention.out_lin`, C, C, true, 'out-in'),
        attentionOutputNorm: { name: `${at}.sa_layer_norm`, width: C },
        postNorm: true,
        up: linear(`${at}.ffn.lin1`, C, c.intermediate, true, 'out-in'),
        down: linear(`${at}.ffn.lin2`, c.intermediate, C, true, 'out-in'),
        mlpOutputNorm: { name: `${at}.output_layer_norm`, width: C },
      };
    }),
    head: ['vocab_projector.weight', 'embeddings.word_embeddings.weight'],
    mlmTransform: { dense: linear('vocab_transform', C, C, true, 'out-in'), norm: { name: 'vocab_layer_norm', width: C }, bias: 'vocab_projector.bias' },
  };
}

/** ModernBERT: fused Wqkv (q | k | v), GeGLU from Wi (the activated half first), no first attn_norm, norms without bias unless norm_bias. */
function modernbert(c: ModelConfig): ModelLayout {
  const C = c.hidden;
  const norm = (name: string): NormLayout => ({ name, width: C, ...(c.normParameters ? { parameters: c.normParameters } : {}) });
  const wi = linear('', C, c.intermediate, c.mlpBias, 'out-in');
  return {
    tokenEmbeddings: 'embeddings.tok_embeddings.weight',
    embeddingNorm: norm('embeddings.norm'),
    layers: Array.from({ length: c.layers }, (_, i) => {
      const at = `layers.${i}`;
      return {
        // Layer 0's attn_norm is an Identity: the embeddings' norm came just before.
        ...(i === 0 ? {} : { attentionInputNorm: norm(`${at}.attn_norm`) }),
        mlpInputNorm: norm(`${at}.mlp_norm`),
        qkv: { fused: linear(`${at}.attn.Wqkv`, C, 3 * C, c.qkvBias, 'out-in') },
        out: linear(`${at}.attn.Wo`, C, C, c.outputBias, 'out-in'),
        postNorm: false,
        gate: { ...wi, name: `${at}.mlp.Wi`, rows: { start: 0, total: 2 * c.intermediate } },
        up: { ...wi, name: `${at}.mlp.Wi`, rows: { start: c.intermediate, total: 2 * c.intermediate } },
        down: linear(`${at}.mlp.Wo`, c.intermediate, C, c.mlpBias, 'out-in'),
      };
    }),
    finalNorm: norm('final_norm'),
    head: ['decoder.weight', 'embeddings.tok_embeddings.weight'],
    mlmTransform: { dense: linear('head.dense', C, C, c.headDenseBias !== false, 'out-in'), norm: norm('head.norm'), bias: 'decoder.bias' },  };
}

// ---- encoder–decoder families (issue 43)

/** T5: block.N.layer.0 self-attention, (decoder) layer.1 cross-attention, then the MLP, each with its RMS norm before; no biases. */
function t5Layout(c: ModelConfig): ModelLayout {
  const C = c.hidden;
  const dec = decoderConfigOf(c);
  const tables = ['shared.weight', 'encoder.embed_tokens.weight', 'decoder.embed_tokens.weight'];
  const stack = (side: 'encoder' | 'decoder', s: ModelConfig): ModelLayout => ({
    tokenEmbeddings: tables[0],
    tokenEmbeddingsAlso: tables.slice(1),
    layers: Array.from({ length: s.layers }, (_, i) => {
      const at = `${side}.block.${i}.layer`;
      const inner = s.heads * s.headDim;
      const attention = (name: string) => ({ q: unbiased(`${name}.q`, C, inner), k: unbiased(`${name}.k`, C, inner), v: unbiased(`${name}.v`, C, inner), out: unbiased(`${name}.o`, inner, C) });
      const self = attention(`${at}.0.SelfAttention`);
      const mlp = `${at}.${side === 'decoder' ? 2 : 1}`;
      return {
        attentionInputNorm: { name: `${at}.0.layer_norm`, width: C },
        qkv: { q: self.q, k: self.k, v: self.v },
        out: self.out,
        postNorm: false,
        mlpInputNorm: { name: `${mlp}.layer_norm`, width: C },
        ...(s.gatedMlp
          ? { gate: unbiased(`${mlp}.DenseReluDense.wi_0`, C, s.intermediate), up: unbiased(`${mlp}.DenseReluDense.wi_1`, C, s.intermediate) }
          : { up: unbiased(`${mlp}.DenseReluDense.wi`, C, s.intermediate) }),
        down: unbiased(`${mlp}.DenseReluDense.wo`, s.intermediate, C),
        ...(side === 'decoder' ? { cross: { inputNorm: { name: `${at}.1.layer_norm`, width: C }, ...attention(`${at}.1.EncDecAttention`) } } : {}),
      };
    }),
    finalNorm: { name: `${side}.final_layer_norm`, width: C },
    relativeBias: { table: `${side}.block.0.layer.0.SelfAttention.relative_attention_bias.weight`, bidirectional: side === 'encoder' },
    head: c.tiedEmbeddings ? ['lm_head.weight', ...tables] : ['lm_head.weight'],
  });
  return { ...stack('encoder', c), decoder: stack('decoder', dec) };
}

/** BART, Marian, mBART: encoder.layers.N / decoder.layers.N with self_attn, (decoder) encoder_attn, fc1/fc2, biased; post-LN (BART, Marian) or pre-LN with a final layer_norm (mBART). */
function bartLayout(c: ModelConfig): ModelLayout {
  const C = c.hidden;
  const post = c.postLayerNorm === true;
  const dec = decoderConfigOf(c);
  const stack = (side: 'encoder' | 'decoder', s: ModelConfig): ModelLayout => ({
    tokenEmbeddings: `${side}.embed_tokens.weight`,
    tokenEmbeddingsAlso: ['shared.weight'],
    ...(c.sinusoidalPositions ? {} : { positionEmbeddings: `${side}.embed_positions.weight`, embeddingNorm: { name: `${side}.layernorm_embedding`, width: C } }),
    layers: Array.from({ length: s.layers }, (_, i) => {
      const at = `${side}.layers.${i}`;
      const attention = (name: string) => ({ q: linear(`${name}.q_proj`, C, C, true, 'out-in'), k: linear(`${name}.k_proj`, C, C, true, 'out-in'), v: linear(`${name}.v_proj`, C, C, true, 'out-in'), out: linear(`${name}.out_proj`, C, C, true, 'out-in') });
      const self = attention(`${at}.self_attn`);
      const norm = (name: string): NormLayout => ({ name: `${at}.${name}`, width: C });
      return {
        ...(post ? { attentionOutputNorm: norm('self_attn_layer_norm'), mlpOutputNorm: norm('final_layer_norm') } : { attentionInputNorm: norm('self_attn_layer_norm'), mlpInputNorm: norm('final_layer_norm') }),
        qkv: { q: self.q, k: self.k, v: self.v },
        out: self.out,
        postNorm: post,
        up: linear(`${at}.fc1`, C, s.intermediate, true, 'out-in'),
        down: linear(`${at}.fc2`, s.intermediate, C, true, 'out-in'),
        ...(side === 'decoder' ? { cross: { ...(post ? { outputNorm: norm('encoder_attn_layer_norm') } : { inputNorm: norm('encoder_attn_layer_norm') }), ...attention(`${at}.encoder_attn`) } } : {}),
      };
    }),
    ...(post ? {} : { finalNorm: { name: `${side}.layer_norm`, width: C } }),
    head: ['lm_head.weight', 'decoder.embed_tokens.weight', 'shared.weight'],
    headBias: 'final_logits_bias',
  });
  return { ...stack('encoder', c), decoder: stack('decoder', dec) };
}

/** The class prefix of a vision checkpoint's model tensors, as its architecture names it (the run checks it against the weights: visionPrefixOf). */
function guessedVisionPrefix(c: ModelConfig): string {
  if (c.modelType.startsWith('clip') || c.modelType.startsWith('siglip')) return 'vision_model.';
  if (!c.vision?.classifier) return '';
  return c.modelType === 'dinov2_with_registers' ? 'dinov2_with_registers.' : `${c.modelType}.`;
}

/** Prefixes a vision checkpoint's model tensors carry, by class: ViTModel none, ViTForImageClassification vit., CLIP's vision_model., …. */
export const VISION_PREFIXES = ['', 'vit.', 'deit.', 'dinov2.', 'dinov2_with_registers.', 'vision_model.'];

/** The prefix under which `has` finds the patch projection, or undefined. */
export function visionPrefixOf(c: ModelConfig, has: (name: string) => boolean): string | undefined {
  return VISION_PREFIXES.find((prefix) => has(visionLayout(c, prefix).vision!.patch.weight));
}

/**
 * ViT, DeiT and DINOv2 name their blocks encoder.layer.N (ViT's layernorm_before/after and
 * intermediate/output, DINOv2's norm1/norm2, mlp.fc1/fc2 and layer scales); CLIP and SigLIP name
 * them encoder.layers.N with self_attn.{q,k,v,out}_proj. All store nn.Linear [out, in].
 */
export function visionLayout(c: ModelConfig, prefix: string): ModelLayout {
  const v = c.vision as VisionSpec;
  const C = c.hidden;
  const tower = c.modelType.startsWith('clip') || c.modelType.startsWith('siglip');
  const dinov2 = c.modelType.startsWith('dinov2');
  const at = (name: string) => `${prefix}${name}`;
  const layers: LayerLayout[] = Array.from({ length: c.layers }, (_, i) => {
    if (tower) {
      const L = at(`encoder.layers.${i}`);
      return {
        attentionInputNorm: { name: `${L}.layer_norm1`, width: C },
        mlpInputNorm: { name: `${L}.layer_norm2`, width: C },
        qkv: { q: linear(`${L}.self_attn.q_proj`, C, C, true, 'out-in'), k: linear(`${L}.self_attn.k_proj`, C, C, true, 'out-in'), v: linear(`${L}.self_attn.v_proj`, C, C, true, 'out-in') },
        out: linear(`${L}.self_attn.out_proj`, C, C, true, 'out-in'),
        postNorm: false,
        up: linear(`${L}.mlp.fc1`, C, c.intermediate, true, 'out-in'),
        down: linear(`${L}.mlp.fc2`, c.intermediate, C, true, 'out-in'),
      };
    }
    const L = at(`encoder.layer.${i}`);
    return {
      attentionInputNorm: { name: dinov2 ? `${L}.norm1` : `${L}.layernorm_before`, width: C },
      mlpInputNorm: { name: dinov2 ? `${L}.norm2` : `${L}.layernorm_after`, width: C },
      qkv: {
        q: linear(`${L}.attention.attention.query`, C, C, c.qkvBias, 'out-in'),
        k: linear(`${L}.attention.attention.key`, C, C, c.qkvBias, 'out-in'),
        v: linear(`${L}.attention.attention.value`, C, C, c.qkvBias, 'out-in'),
      },
      out: linear(`${L}.attention.output.dense`, C, C, true, 'out-in'),
      postNorm: false,
      up: linear(dinov2 ? `${L}.mlp.fc1` : `${L}.intermediate.dense`, C, c.intermediate, true, 'out-in'),
      down: linear(dinov2 ? `${L}.mlp.fc2` : `${L}.output.dense`, c.intermediate, C, true, 'out-in'),
      ...(dinov2 ? { attentionScale: `${L}.layer_scale1.lambda1`, mlpScale: `${L}.layer_scale2.lambda1` } : {}),
    };
  });
  const labels = v.classifier?.labels.length ?? 0;
  const classifiers =
    v.classifier?.kind === 'class-and-distillation'
      ? [linear('cls_classifier', C, labels, true, 'out-in'), linear('distillation_classifier', C, labels, true, 'out-in')]
      : v.classifier
        ? [linear('classifier', v.classifier.kind === 'class-and-mean-patches' ? 2 * C : C, labels, true, 'out-in')]
        : [];
  const patch = tower ? at('embeddings.patch_embedding') : at('embeddings.patch_embeddings.projection');
  return {
    tokenEmbeddings: patch,
    ...(c.modelType.startsWith('clip') ? { embeddingNorm: { name: at('pre_layrnorm'), width: C } } : {}),
    layers,
    finalNorm: { name: tower ? at('post_layernorm') : at('layernorm'), width: C },
    head: [],
    vision: {
      patch: { weight: `${patch}.weight`, ...(v.patchBias ? { bias: `${patch}.bias` } : {}) },
      ...(v.classToken ? { classToken: tower ? at('embeddings.class_embedding') : at('embeddings.cls_token') } : {}),
      ...(v.distillationToken ? { distillationToken: at('embeddings.distillation_token') } : {}),
      ...(v.registers > 0 ? { registerTokens: at('embeddings.register_tokens') } : {}),
      positions: tower ? at('embeddings.position_embedding.weight') : at('embeddings.position_embeddings'),
      classifiers,
    },
  };
}

// ---- mixtures of experts: where a sparse layer keeps its router and experts (experts.ts runs them)

const unbiased = (name: string, inWidth: number, out: number): LinearLayout => linear(name, inWidth, out, false, 'out-in');

/** Where a sparse layer keeps its router, experts and shared expert, each as nn.Linear [out, in] without bias. */
export interface ExpertsLayout {
  router: LinearLayout;
  experts: MlpLayout[];
  shared?: MlpLayout & { gate: LinearLayout; sharedGate: LinearLayout };
}

/**
 * Layer `at`'s MoE pieces under their checkpoint names. Its gate/up/down are the first expert's
 * (one expert's MLP is what the forward reads at a time, and what the memory estimates count).
 */
export function expertsLayer(moe: MoeConfig, hidden: number, at: string): Pick<LayerLayout, 'experts' | 'gate' | 'up' | 'down'> {
  const I = moe.expertIntermediate;
  const mlp = (prefix: string, width: number, names: [gate: string, up: string, down: string]) => ({
    gate: unbiased(`${prefix}.${names[0]}`, hidden, width),
    up: unbiased(`${prefix}.${names[1]}`, hidden, width),
    down: unbiased(`${prefix}.${names[2]}`, width, hidden),
  });
  const block = moe.naming === 'mixtral' ? `${at}.block_sparse_moe` : `${at}.mlp`;
  const names: [string, string, string] = moe.naming === 'mixtral' ? ['w1', 'w3', 'w2'] : ['gate_proj', 'up_proj', 'down_proj'];
  const experts = Array.from({ length: moe.experts }, (_, e) => mlp(`${block}.experts.${e}`, I, names));
  const shared = moe.sharedIntermediate ? { ...mlp(`${block}.shared_expert`, moe.sharedIntermediate, names), sharedGate: unbiased(`${block}.shared_expert_gate`, hidden, 1) } : undefined;
  return { experts: { router: unbiased(`${block}.gate`, hidden, moe.experts), experts, ...(shared ? { shared } : {}) }, ...experts[0] };
}
