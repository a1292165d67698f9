// Where each architecture keeps its pieces: tensor names (without the class prefix), shapes and
// storage layouts, as data the one forward pass (forward.ts) walks. GPT-2's Conv1D stores
// weights [in, out]; nn.Linear stores [out, in].
import type { ModelConfig } from './config';

export interface LinearLayout {
  name: string;
  in: number;
  out: number;
  bias: boolean;
  /** 'in-out': y = x·W (Conv1D); 'out-in': y = x·Wᵀ (nn.Linear). */
  stored: 'in-out' | 'out-in';
}

export interface NormLayout {
  /** The module's name: its parameters are NAME.weight (and NAME.bias for LayerNorm). */
  name: string;
  width: number;
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
}

export interface ModelLayout {
  tokenEmbeddings: string;
  positionEmbeddings?: string;
  typeEmbeddings?: string;
  embeddingNorm?: NormLayout;
  layers: LayerLayout[];
  finalNorm?: NormLayout;
  /** The LM head: `lm_head.weight` or the tied token embeddings, [vocab × hidden]. */
  head: string[];
  /** BERT's MLM head: dense + activation + LayerNorm before the decoder, and the decoder's bias. */
  mlmTransform?: { dense: LinearLayout; norm: NormLayout; bias: string };
}

export function layoutOf(c: ModelConfig): ModelLayout {
  switch (c.family) {
    case 'gpt2':
      return gpt2(c);
    case 'bert':
      return bert(c);
    case 'llama':
      return llama(c);
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
      };
    }),
    finalNorm: { name: 'norm', width: C },
    head: c.tiedEmbeddings ? ['lm_head.weight', 'embed_tokens.weight'] : ['lm_head.weight'],
  };
}
