// A model folder's config.json read as each architecture's own code reads it (Hugging Face
// transformers' configuration_*.py and modeling_*.py; the conventions and their sources are in
// docs/models.md). The result is data: which norm, which MLP, which positions, and per layer the
// attention variants (RoPE frequencies, window, softcap, scale) the engine applies.
import { implausibleSizes } from './plausible';

/** Issue 40's dense model types, each read as its configuration_*.py and modeling_*.py read config.json. */
export const DENSE_MODEL_TYPES = ['gpt_neox', 'gptj', 'gpt_neo', 'opt', 'phi', 'phi3', 'olmo', 'olmo2', 'stablelm', 'granite', 'gemma', 'roberta', 'xlm-roberta', 'distilbert', 'modernbert'] as const;

/** The model types this forward pass runs, as config.json's `model_type` names them. */
export const SUPPORTED_MODEL_TYPES = ['gpt2', 'bert', 'llama', 'mistral', 'qwen2', 'qwen3', 'gemma2', 'gemma3', 'gemma3_text', ...DENSE_MODEL_TYPES, 'mixtral', 'qwen2_moe', 'olmoe', 'qwen3_moe'] as const;
/** The encoder–decoder models this forward pass runs (a source, and a target given or generated). */
export const SUPPORTED_ENCODER_DECODER_TYPES = ['t5', 'bart', 'marian', 'mbart'] as const;
/** The vision transformers this forward pass runs on a picture (their vision tower, for CLIP and SigLIP). */
/** config.json's `model_type` as written, found without parsing the file: the editor asks it of
 * many files (is this a model's config, and of which family?) before any run. */
export function modelTypeOf(configText: string): string | undefined {
  return /"model_type"\s*:\s*"([^"]+)"/.exec(configText)?.[1];
}

export const SUPPORTED_VISION_TYPES = ['vit', 'deit', 'dinov2', 'dinov2_with_registers', 'clip', 'clip_vision_model', 'siglip', 'siglip_vision_model'] as const;

export class ModelConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelConfigError';
  }
}

/** LayerNorm (x − μ)/σ·w + b; RMSNorm x/rms·w; Gemma's RMSNorm x/rms·(1 + w). */
export type NormKind = 'layer' | 'rms' | 'rms-plus-one';
/** gelu_new and gelu_pytorch_tanh are the same tanh approximation; gelu is the erf form; quick_gelu (CLIP) is x·σ(1.702x). */
export type Activation = 'gelu-tanh' | 'gelu-erf' | 'silu' | 'relu' | 'gelu-quick';

export interface LayerAttention {
  /** Multiplies Q·Kᵀ (1/√head_dim, or what the model says). */
  scale: number;
  /** Rotary frequencies of this layer (inv_freq), head_dim/2 of them; absent: no RoPE. */
  rope?: RopeFrequencies;
  /** Keys a query sees, itself included (sliding window); absent: every earlier key. */
  window?: number;
  /** Scores → C·tanh(scores/C) after scaling (Gemma 2). */
  softcap?: number;
}

export interface RopeFrequencies {
  /** rope_theta of this layer. */
  theta: number;
  /** rope_type as the config gives it: default, linear, llama3. */
  type: string;
  /** inv_freq after the rope type's scaling. */
  inverseFrequencies: Float64Array;
  /** True when inverseFrequencies are exactly theta^(−2i/d): the engine's own RoPE reproduces them. */
  plain: boolean;
  /** The leading columns of each head that turn (rotary_pct, rotary_dim, partial_rotary_factor); absent: all head_dim. */
  rotaryDim?: number;
  /** GPT-J's rotate-every-two: columns (2i, 2i + 1) pair up, not rotate-half's (i, i + d/2). */
  interleaved?: boolean;
  /** cos and sin multiplied by this (yarn, longrope); absent: 1. */
  attentionFactor?: number;
  /** longrope: on a run longer than `beyond` tokens these frequencies (long_factor) replace inverseFrequencies (short_factor). */
  long?: { inverseFrequencies: Float64Array; beyond: number };
  /** Dynamic NTK: a run of n > `original` tokens turns on theta·(factor·n/original − (factor − 1))^(d/(d − 2)). */
  dynamic?: { factor: number; original: number };
}

export interface ModelConfig {
  modelType: string;
  /** Which weight-name map (layout.ts) the checkpoint follows; the Llama relatives share one. */
  family: 'gpt2' | 'bert' | 'llama' | DenseFamily | 'vision' | EncoderDecoderFamily;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediate: number;
  vocab: number;
  maxPositions: number;
  norm: NormKind;
  normEps: number;
  activation: Activation;
  /** gate·act ⊙ up (SwiGLU, GeGLU) rather than a plain two-layer MLP. */
  gatedMlp: boolean;
  causal: boolean;
  /** Biases on q/k/v (GPT-2, BERT, Qwen2; attention_bias elsewhere). */
  qkvBias: boolean;
  /** Bias on the attention output and the MLP (GPT-2, BERT; attention_bias / mlp_bias elsewhere). */
  outputBias: boolean;
  mlpBias: boolean;
  /** Per-head RMSNorm on q and k before RoPE (Qwen3, Gemma 3). */
  qkNorm: boolean;
  /** Norms after the attention and the MLP too (Gemma 2/3: four norms per layer). */
  sandwichNorms: boolean;
  /** Embeddings multiplied by this (√hidden in Gemma). */
  embeddingScale: number;
  tiedEmbeddings: boolean;
  finalSoftcap?: number;
  typeVocab: number;
  attention: LayerAttention[];
  // ---- the conventions of issue 40's dense families (absent: as the eight above)
  /** x + attention(norm₁(x)) + mlp(norm₂(x)): both read the block's input (GPT-J, GPT-NeoX, Phi, StableLM). */
  parallelResidual?: boolean;
  /** Each sublayer's output times this before the residual add (Granite's residual_multiplier). */
  residualScale?: number;
  /** Logits times this (Granite: 1 / logits_scaling). */
  logitScale?: number;
  /** q, k and v clamped to [−c, c] after their projections (OLMo's clip_qkv), or after the q/k norms (OLMoE's: `clipAfterQkNorms`). */
  clipQkv?: number;
  clipAfterQkNorms?: boolean;
  /** Where q/k norms act: each head's head_dim (Qwen3, the default) or the whole projection (OLMo 2). */
  qkNormOver?: 'head' | 'projection';
  /** StableLM's qk_layernorm: one LayerNorm (no bias) per head, each with weights of its own. */
  qkNormPerHeadWeights?: boolean;
  /** OLMo 2: no norm before the sublayers; norms on the attention's and the MLP's outputs before each residual add. */
  outputNormsOnly?: boolean;
  /** Norms without learned parameters (OLMo's LayerNorm), or LayerNorms without a bias (ModernBERT's norm_bias false). */
  normParameters?: 'none' | 'weight';
  /** Learned positions: row `offset + position` of a table of `rows` (OPT: offset 2; RoBERTa: positions count from padding_idx + 1, pads stay at padding_idx). */
  positions?: { offset: number; rows: number; paddingId?: number };
  /** q, k and v in one projection: q | k | v along its outputs (Phi-3, ModernBERT), or per head [heads, 3, head_dim] (GPT-NeoX). */
  fusedQkv?: 'concatenated' | 'per-head';
  /** The gated MLP's two input projections in one tensor, the activated half first (Phi-3's gate_up_proj, ModernBERT's Wi). */
  fusedGateUp?: boolean;
  /** A bias on the LM head (GPT-J, Phi). */
  headBias?: boolean;
  /** OPT's do_layer_norm_before false (OPT-350m): each block's two norms after its residual adds, no final norm. */
  postLayerNorm?: boolean;
  /** OPT's _remove_final_layer_norm (checkpoints fine-tuned before transformers 4.20.1): pre-LN blocks without decoder.final_layer_norm. */
  noFinalNorm?: boolean;
  /** ModernBERT's classifier_bias: a bias on the MLM head's dense layer. */
  headDenseBias?: boolean;
  /** The MLM head's activation where it is not the layers' (ModernBERT's classifier_activation). */
  headActivation?: Activation;
  /** The embeddings' and the LM head's width where it differs from hidden (OPT-350m's word_embed_proj_dim: project_in after the embeddings, project_out before the head). */
  embeddingWidth?: number;
  /** Mixtures of experts: the router's description (experts.ts runs it); absent for dense models. */
  moe?: MoeConfig;
  /** Vision transformers: how a picture becomes the tokens (patches.ts). */
  vision?: VisionSpec;
  /** Marian: fixed sinusoidal positions (sin in the first half of the columns, cos in the second, as transformers lays them out) added to the embeddings. */
  sinusoidalPositions?: boolean;
  /** Encoder–decoder models: the decoder and what joins it to the encoder (the config's own layers are the encoder's). */
  encoderDecoder?: EncoderDecoderSpec;
}

/** The weight-name maps of the encoder–decoder families: T5's, and BART's (Marian and mBART use BART's names). */
export type EncoderDecoderFamily = 't5' | 'bart';

/** An encoder–decoder model's decoder and the conventions around it (the encoder is the ModelConfig itself). */
export interface EncoderDecoderSpec {
  /** The decoder's stack: its layers, heads and MLP width (BART's decoder_*; T5's num_decoder_layers). */
  decoder: { layers: number; heads: number; intermediate: number; vocab: number };
  /** The decoder's first input token (decoder_start_token_id). */
  decoderStartId: number;
  /** Where greedy generation stops (eos_token_id). */
  eosId?: number;
  /** T5: a learned bias per head on bucketed relative positions (bidirectional in the encoder, causal in the decoder), from layer 0's table of each stack. */
  relativePositions?: { buckets: number; maxDistance: number };
  /** The final hidden state times this before the LM head (T5 v1.0's tied head: d_model^−½); absent: 1. */
  headInputScale?: number;
  /** final_logits_bias [1 × vocab] added to the logits (BART, Marian, mBART). */
  finalLogitsBias: boolean;
  /** Tokens generation never picks (single-token bad_words_ids: Marian's pad), as transformers' generate forbids them. */
  forbidden: number[];
}

/** The width of the token embeddings, of the final hidden state and of the LM head's rows. */
export function outputWidth(c: ModelConfig): number {
  return c.embeddingWidth ?? c.hidden;
}

/** The weight-name maps of issue 40's dense families (the Llama relatives among them use Llama's). */
export type DenseFamily = 'gpt_neox' | 'gptj' | 'gpt_neo' | 'opt' | 'phi' | 'roberta' | 'distilbert' | 'modernbert';

type Json = Record<string, unknown>;

/** Reads config.json's text; every problem is a ModelConfigError with one clear message. */
export function parseModelConfig(text: string): ModelConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ModelConfigError(`config.json is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ModelConfigError('config.json is not a JSON object');
  let json = raw as Json;
  const modelType = json.model_type;
  // Gemma 3's multimodal checkpoints keep the language model's settings under text_config.
  if (modelType === 'gemma3' && typeof json.text_config === 'object' && json.text_config !== null) json = { ...(json.text_config as Json), model_type: 'gemma3' };
  const implausible = implausibleSizes(json); // before anything is allocated per layer or per unit of size
  if (implausible) throw new ModelConfigError(implausible);
  switch (modelType) {
    case 'gpt2':
      return gpt2(json);
    case 'bert':
      return bert(json);
    case 'llama':
    case 'mistral':
    case 'qwen2':
    case 'qwen3':
    case 'gemma2':
    case 'gemma3':
    case 'gemma3_text':
      return llamaFamily(json, modelType);
    case 'mixtral':
    case 'qwen2_moe':
    case 'olmoe':
    case 'qwen3_moe':
      return mixtureOfExperts(json, modelType);
    case 'vit':
    case 'deit':
    case 'dinov2':
    case 'dinov2_with_registers':
    case 'clip':
    case 'clip_vision_model':
    case 'siglip':
    case 'siglip_vision_model':
      return visionFamily(json, modelType);
    case 't5':
      return t5(json);
    case 'bart':
    case 'marian':
    case 'mbart':
      return bartFamily(json, modelType);
    default: {
      const dense = denseFamily(json, modelType);
      if (dense) return dense;
      if (isObject(json.auto_map)) throw remoteCodeError(json, modelType);
      throw new ModelConfigError(
        `config.json's model_type ${modelType === undefined ? 'is missing' : JSON.stringify(modelType)}${modelType === undefined ? '' : ' is not supported'}: supported are ${[...SUPPORTED_MODEL_TYPES, ...SUPPORTED_ENCODER_DECODER_TYPES, ...SUPPORTED_VISION_TYPES].join(', ')}`,
      );
    }
  }
}

/** GPT-2 and BERT alike: LayerNorm, biases on every linear layer, the LM head tied to the embeddings. */
const LAYER_NORM_BIASED_TIED = { norm: 'layer', qkvBias: true, outputBias: true, mlpBias: true, tiedEmbeddings: true } as const;

function gpt2(json: Json): ModelConfig {
  const hidden = int(json, 'n_embd', 768);
  const heads = int(json, 'n_head', 12);
  const layers = int(json, 'n_layer', 12);
  const headDim = divide(hidden, heads, 'n_embd', 'n_head');
  const byLayer = bool(json, 'scale_attn_by_inverse_layer_idx', false);
  const activation = json.activation_function ?? 'gelu_new';
  return {
    ...common('gpt2', 'gpt2', hidden, layers, heads, heads, headDim),
    intermediate: int(json, 'n_inner', 4 * hidden),
    vocab: int(json, 'vocab_size', 50257),
    maxPositions: int(json, 'n_positions', 1024),
    ...LAYER_NORM_BIASED_TIED,
    normEps: num(json, 'layer_norm_epsilon', 1e-5),
    activation: activationOf(activation, 'activation_function'),
    causal: true,
    attention: Array.from({ length: layers }, (_, layer) => ({ scale: 1 / Math.sqrt(headDim) / (byLayer ? layer + 1 : 1) })),
  };
}

function bert(json: Json): ModelConfig {
  const hidden = int(json, 'hidden_size', 768);
  const heads = int(json, 'num_attention_heads', 12);
  const layers = int(json, 'num_hidden_layers', 12);
  const headDim = divide(hidden, heads, 'hidden_size', 'num_attention_heads');
  const positions = json.position_embedding_type ?? 'absolute';
  if (positions !== 'absolute') throw new ModelConfigError(`config.json's position_embedding_type ${JSON.stringify(positions)} is not supported: only "absolute"`);
  return {
    ...common('bert', 'bert', hidden, layers, heads, heads, headDim),
    intermediate: int(json, 'intermediate_size', 4 * hidden),
    vocab: int(json, 'vocab_size', 30522),
    maxPositions: int(json, 'max_position_embeddings', 512),
    ...LAYER_NORM_BIASED_TIED,
    normEps: num(json, 'layer_norm_eps', 1e-12),
    activation: activationOf(json.hidden_act ?? 'gelu', 'hidden_act'),
    causal: false,
    typeVocab: int(json, 'type_vocab_size', 2),
    attention: Array.from({ length: layers }, () => ({ scale: 1 / Math.sqrt(headDim) })),
  };
}

function llamaFamily(json: Json, modelType: string): ModelConfig {
  const gemma = modelType.startsWith('gemma');
  const gemma3 = modelType.startsWith('gemma3');
  const hidden = int(json, 'hidden_size', 4096);
  const heads = int(json, 'num_attention_heads', 32);
  const layers = int(json, 'num_hidden_layers', 32);
  const kvHeads = int(json, 'num_key_value_heads', heads);
  if (heads % kvHeads !== 0) throw new ModelConfigError(`config.json's num_attention_heads (${heads}) is not a multiple of num_key_value_heads (${kvHeads})`);
  const headDim = json.head_dim === undefined || json.head_dim === null ? divide(hidden, heads, 'hidden_size', 'num_attention_heads') : int(json, 'head_dim', 0);
  const layerTypes = layerTypesOf(json, modelType, layers);
  const window = json.sliding_window === null || json.sliding_window === undefined ? undefined : int(json, 'sliding_window', 0);
  // Gemma scales scores by query_pre_attn_scalar^−½ (head_dim unless the config says otherwise).
  const scale = gemma ? 1 / Math.sqrt(num(json, 'query_pre_attn_scalar', headDim)) : 1 / Math.sqrt(headDim);
  const softcap = optionalNumber(json, 'attn_logit_softcapping');
  const ropes = ropeByLayerType(json, modelType, headDim);
  const attentionBias = bool(json, 'attention_bias', false);
  return {
    ...common(modelType, 'llama', hidden, layers, heads, kvHeads, headDim),
    intermediate: int(json, 'intermediate_size', 4 * hidden),
    vocab: int(json, 'vocab_size', 32000),
    maxPositions: positionsOf(json, ropes.full_attention, 2048),
    norm: gemma ? 'rms-plus-one' : 'rms',
    normEps: num(json, 'rms_norm_eps', 1e-6),
    activation: activationOf(json.hidden_activation ?? json.hidden_act ?? (gemma ? 'gelu_pytorch_tanh' : 'silu'), 'hidden_act'),
    gatedMlp: true,
    causal: true,
    qkvBias: modelType === 'qwen2' || attentionBias,
    outputBias: attentionBias,
    mlpBias: bool(json, 'mlp_bias', false),
    qkNorm: modelType === 'qwen3' || gemma3,
    sandwichNorms: gemma,
    embeddingScale: gemma ? Math.sqrt(hidden) : 1,
    tiedEmbeddings: bool(json, 'tie_word_embeddings', gemma),
    finalSoftcap: optionalNumber(json, 'final_logit_softcapping'),
    attention: layerTypes.map((type) => ({
      scale,
      rope: ropes[type] ?? ropes.full_attention,
      ...(type === 'sliding_attention' && window !== undefined ? { window } : {}),
      ...(softcap !== undefined ? { softcap } : {}),
    })),
  };
}

/** The MoE families are Llama's block with the MLP routed through experts (experts.ts). */
function mixtureOfExperts(json: Json, modelType: string): ModelConfig {
  // MixtralConfig's rope_theta defaults to 1e6; the others' to Llama's 1e4.
  const base = llamaFamily(modelType === 'mixtral' && json.rope_theta === undefined && json.rope_parameters === undefined ? { ...json, rope_theta: 1e6 } : json, modelType);
  const perHeadNorm = modelType === 'qwen3_moe';
  return {
    ...base,
    qkvBias: modelType === 'qwen2_moe' ? bool(json, 'qkv_bias', true) || base.qkvBias : base.qkvBias,
    qkNorm: modelType === 'olmoe' || perHeadNorm,
    ...(modelType === 'olmoe' ? { qkNormOver: 'projection' as const } : {}),
    // OLMoE clamps q, k and v to ±clip_qkv after its q/k norms (OlmoeAttention); no released OLMoE sets it.
    ...(modelType === 'olmoe' && optionalNumber(json, 'clip_qkv') !== undefined ? { clipQkv: num(json, 'clip_qkv', 0), clipAfterQkNorms: true } : {}),
    moe: moeConfigOf(json, modelType, base.layers, base.intermediate),
  };
}

function common(modelType: string, family: ModelConfig['family'], hidden: number, layers: number, heads: number, kvHeads: number, headDim: number) {
  return {
    modelType,
    family,
    hidden,
    layers,
    heads,
    kvHeads,
    headDim,
    gatedMlp: false,
    qkNorm: false,
    sandwichNorms: false,
    embeddingScale: 1,
    typeVocab: 0,
    finalSoftcap: undefined as number | undefined,
  };
}

/** Each layer's kind: `layer_types` when given, else each model's default pattern. */
function layerTypesOf(json: Json, modelType: string, layers: number): string[] {
  if (Array.isArray(json.layer_types)) {
    if (json.layer_types.length !== layers || !json.layer_types.every((t) => t === 'sliding_attention' || t === 'full_attention')) {
      throw new ModelConfigError(`config.json's layer_types must list ${layers} entries, each "sliding_attention" or "full_attention"`);
    }
    return json.layer_types as string[];
  }
  const sliding = json.sliding_window !== null && json.sliding_window !== undefined;
  return Array.from({ length: layers }, (_, i) => {
    if (!sliding) return 'full_attention';
    switch (modelType) {
      case 'mistral':
      case 'mixtral':
        return 'sliding_attention';
      case 'gemma2': // even layers local, odd global
        return i % 2 === 0 ? 'sliding_attention' : 'full_attention';
      case 'gemma3':
      case 'gemma3_text': // every sliding_window_pattern-th layer global
        return (i + 1) % int(json, 'sliding_window_pattern', 6) === 0 ? 'full_attention' : 'sliding_attention';
      case 'qwen2':
      case 'qwen3':
      case 'qwen2_moe':
      case 'qwen3_moe': // use_sliding_window: the layers from max_window_layers on
        return bool(json, 'use_sliding_window', false) && i >= int(json, 'max_window_layers', layers) ? 'sliding_attention' : 'full_attention';
      default:
        return 'full_attention';
    }
  });
}

/**
 * The rotary frequencies per layer type. `rope_parameters` (transformers ≥ 5) is either one set or
 * one per layer type; older files have `rope_theta` beside `rope_scaling` (`type` an older
 * spelling of `rope_type`). Gemma 3's local layers use `rope_local_base_freq` without scaling.
 */
function ropeByLayerType(json: Json, modelType: string, headDim: number, family: RopeContext = {}): Record<string, RopeFrequencies> {
  const defaultTheta = num(json, 'rope_theta', 10000);
  const parameters = json.rope_parameters ?? json.rope_scaling;
  const sets: Record<string, Json> = {};
  if (isObject(parameters) && (isObject(parameters.full_attention) || isObject(parameters.sliding_attention))) {
    for (const type of ['full_attention', 'sliding_attention']) if (isObject(parameters[type])) sets[type] = parameters[type] as Json;
  } else {
    sets.full_attention = isObject(parameters) ? parameters : {};
  }
  if (modelType.startsWith('gemma3') && !sets.sliding_attention) sets.sliding_attention = { rope_type: 'default', rope_theta: num(json, 'rope_local_base_freq', 10000) };
  const out: Record<string, RopeFrequencies> = {};
  const context: RopeContext = {
    maxPositions: optionalNumber(json, 'max_position_embeddings'),
    originalMaxPositions: optionalNumber(json, 'original_max_position_embeddings'),
    partialRotaryFactor: optionalNumber(json, 'partial_rotary_factor'),
    ...family,
  };
  for (const [type, set] of Object.entries(sets)) out[type] = ropeFrequencies(set, defaultTheta, headDim, context);
  return out;
}

/** What a family says about its rotary embedding beside the rope set itself. */
export interface RopeContext {
  /** Columns that turn, when the family says so outright (GPT-NeoX's rotary_pct, GPT-J's rotary_dim). */
  rotaryDim?: number;
  /** partial_rotary_factor at the config's top level (Phi, StableLM, Phi-3); a rope set's own wins. */
  partialRotaryFactor?: number;
  /** GPT-J's rotate-every-two layout. */
  interleaved?: boolean;
  /** max_position_embeddings: dynamic's, yarn's and longrope's reference length. */
  maxPositions?: number;
  /** config.json's top-level original_max_position_embeddings (Phi-3's longrope). */
  originalMaxPositions?: number;
}

/** The rope types read, as modeling_rope_utils names them (`su`, Phi-3's first name for longrope, too). */
export const SUPPORTED_ROPE_TYPES = ['default', 'linear', 'llama3', 'dynamic', 'yarn', 'longrope'] as const;

/**
 * inv_freq of one rope set, as modeling_rope_utils computes it: over the rotary width d (head_dim,
 * or its partial share), theta^(−2i/d), then the rope type's scaling. Dynamic NTK and longrope
 * depend on the run's length: ropeAt gives a run's frequencies.
 */
export function ropeFrequencies(set: Json, defaultTheta: number, headDim: number, context: RopeContext = {}): RopeFrequencies {
  const given = String(set.rope_type ?? set.type ?? 'default');
  const type = given === 'su' ? 'longrope' : given;
  const theta = typeof set.rope_theta === 'number' ? set.rope_theta : defaultTheta;
  const partial = typeof set.partial_rotary_factor === 'number' ? set.partial_rotary_factor : (context.partialRotaryFactor ?? 1);
  if (!(partial > 0 && partial <= 1)) throw new ModelConfigError(`config.json's partial_rotary_factor must be in (0, 1], not ${partial}`);
  // int(head_dim · factor), as the modeling files truncate it.
  const dim = context.rotaryDim ?? Math.trunc(headDim * partial);
  if (dim % 2 !== 0 || dim <= 0 || dim > headDim) throw new ModelConfigError(`the rotary width ${dim} (of head_dim ${headDim}) is ${dim % 2 !== 0 ? 'odd: RoPE turns pairs of columns' : 'out of range'}`);
  const half = dim / 2;
  const base = Float64Array.from({ length: half }, (_, i) => theta ** (-(2 * i) / dim));
  const shape = { theta, type, ...(dim !== headDim ? { rotaryDim: dim } : {}), ...(context.interleaved ? { interleaved: true } : {}) };
  const whole = dim === headDim;
  const factor = (): number => {
    const value = set.factor;
    if (typeof value !== 'number' || !(value > 0)) throw new ModelConfigError(`config.json's rope type "${type}" needs a positive factor`);
    return value;
  };
  const maxPositions = (): number => {
    if (context.maxPositions === undefined) throw new ModelConfigError(`config.json's rope type "${type}" needs max_position_embeddings`);
    return context.maxPositions;
  };
  switch (type) {
    case 'default':
      return { ...shape, inverseFrequencies: base, plain: whole };
    case 'linear': {
      const f = factor();
      return { ...shape, inverseFrequencies: base.map((v) => v / f), plain: whole && f === 1 };
    }
    case 'llama3': {
      const f = factor();
      const low = numberIn(set, 'low_freq_factor', type);
      const high = numberIn(set, 'high_freq_factor', type);
      const original = numberIn(set, 'original_max_position_embeddings', type);
      const lowWavelength = original / low;
      const highWavelength = original / high;
      const scaled = base.map((inv) => {
        const wavelength = (2 * Math.PI) / inv;
        if (wavelength < highWavelength) return inv;
        if (wavelength > lowWavelength) return inv / f;
        const smooth = (original / wavelength - low) / (high - low);
        return (1 - smooth) * (inv / f) + smooth * inv;
      });
      return { ...shape, inverseFrequencies: scaled, plain: false };
    }
    case 'dynamic':
      // Up to max_position_embeddings tokens the plain frequencies; past it, ropeAt turns theta up for the run's length.
      return { ...shape, inverseFrequencies: base, plain: false, dynamic: { factor: factor(), original: maxPositions() } };
    case 'yarn':
      return { ...shape, ...yarn(set, theta, dim, factor(), maxPositions()), plain: false };
    case 'longrope':
      return { ...shape, ...longrope(set, theta, dim, maxPositions(), context.originalMaxPositions), plain: false };
    default:
      throw new ModelConfigError(`config.json's rope type "${given}" is not supported: supported are ${SUPPORTED_ROPE_TYPES.join(', ')}`);
  }
}

/**
 * YaRN: frequencies blended between interpolated (÷ factor) and kept by a ramp over the dimensions,
 * and cos/sin × mscale. The set's factor is used as given; its original_max_position_embeddings
 * (else max_position_embeddings) is only the length the correction range is measured against
 * (transformers ≥ 4.56 warns when max / original differs from factor and keeps the factor).
 */
function yarn(set: Json, theta: number, dim: number, factor: number, maxPositions: number): { inverseFrequencies: Float64Array; attentionFactor: number } {
  const original = typeof set.original_max_position_embeddings === 'number' ? set.original_max_position_embeddings : maxPositions;
  const mscale = (scale: number, m = 1) => (scale <= 1 ? 1 : 0.1 * m * Math.log(scale) + 1);
  const m = typeof set.mscale === 'number' ? set.mscale : 0;
  const mAll = typeof set.mscale_all_dim === 'number' ? set.mscale_all_dim : 0;
  const attentionFactor = typeof set.attention_factor === 'number' ? set.attention_factor : m && mAll ? mscale(factor, m) / mscale(factor, mAll) : mscale(factor);
  const betaFast = typeof set.beta_fast === 'number' && set.beta_fast ? set.beta_fast : 32;
  const betaSlow = typeof set.beta_slow === 'number' && set.beta_slow ? set.beta_slow : 1;
  const truncate = set.truncate !== false;
  const correction = (rotations: number) => (dim * Math.log(original / (rotations * 2 * Math.PI))) / (2 * Math.log(theta));
  let low = correction(betaFast);
  let high = correction(betaSlow);
  if (truncate) [low, high] = [Math.floor(low), Math.ceil(high)];
  low = Math.max(low, 0);
  high = Math.min(high, dim - 1);
  if (low === high) high += 0.001;
  const inverseFrequencies = Float64Array.from({ length: dim / 2 }, (_, i) => {
    const position = theta ** ((2 * i) / dim);
    const ramp = Math.min(1, Math.max(0, (i - low) / (high - low)));
    const extrapolation = 1 - ramp;
    return (1 / (factor * position)) * (1 - extrapolation) + (1 / position) * extrapolation;
  });
  return { inverseFrequencies, attentionFactor };
}

/** LongRoPE (Phi-3): per-frequency divisors, short_factor up to the original context and long_factor past it, and cos/sin × the attention factor. */
function longrope(set: Json, theta: number, dim: number, maxPositions: number, topLevelOriginal: number | undefined): Pick<RopeFrequencies, 'inverseFrequencies' | 'attentionFactor' | 'long'> {
  const factors = (key: string): number[] => {
    const value = set[key];
    if (!Array.isArray(value) || value.length !== dim / 2 || !value.every((v) => typeof v === 'number' && v > 0)) {
      throw new ModelConfigError(`config.json's rope type "longrope" needs ${key}: ${dim / 2} positive numbers (one per rotary frequency)`);
    }
    return value as number[];
  };
  const [short, long] = [factors('short_factor'), factors('long_factor')];
  // The pretrained context: the top level's (Phi-3's) before the set's, else max_position_embeddings. The set's
  // factor when it has one, else max_position_embeddings / that context (standardize_rope_params, _compute_longrope_parameters).
  const setOriginal = typeof set.original_max_position_embeddings === 'number' ? set.original_max_position_embeddings : undefined;
  const original = topLevelOriginal ?? setOriginal ?? maxPositions;
  const factor = typeof set.factor === 'number' ? set.factor : maxPositions / original;
  const attentionFactor = typeof set.attention_factor === 'number' ? set.attention_factor : factor <= 1 ? 1 : Math.sqrt(1 + Math.log(factor) / Math.log(original));
  const divided = (by: number[]) => Float64Array.from(by, (f, i) => 1 / (f * theta ** ((2 * i) / dim)));
  return { inverseFrequencies: divided(short), attentionFactor, long: { inverseFrequencies: divided(long), beyond: original } };
}

/** The frequencies and cos/sin factor of a run of n tokens (dynamic NTK and longrope depend on n). */
export function ropeAt(rope: RopeFrequencies, n: number): { inverseFrequencies: Float64Array; attentionFactor: number } {
  const attentionFactor = rope.attentionFactor ?? 1;
  if (rope.long && n > rope.long.beyond) return { inverseFrequencies: rope.long.inverseFrequencies, attentionFactor };
  if (rope.dynamic && n > rope.dynamic.original) {
    const d = 2 * rope.inverseFrequencies.length;
    const { factor, original } = rope.dynamic;
    const theta = rope.theta * ((factor * n) / original - (factor - 1)) ** (d / (d - 2));
    return { inverseFrequencies: Float64Array.from({ length: d / 2 }, (_, i) => theta ** (-(2 * i) / d)), attentionFactor };
  }
  return { inverseFrequencies: rope.inverseFrequencies, attentionFactor };
}

function activationOf(value: unknown, key: string): Activation {
  switch (value) {
    case 'gelu_new':
    case 'gelu_pytorch_tanh':
    case 'gelu_fast':
      return 'gelu-tanh';
    case 'gelu':
      return 'gelu-erf';
    case 'silu':
    case 'swish':
      return 'silu';
    case 'relu':
      return 'relu';
    case 'quick_gelu':
      return 'gelu-quick';
    default:
      throw new ModelConfigError(`config.json's ${key} ${JSON.stringify(value)} is not supported: supported are gelu_new, gelu_pytorch_tanh, gelu, quick_gelu, silu and relu`);
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function int(json: Json, key: string, fallback: number): number {
  const value = json[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) throw new ModelConfigError(`config.json's ${key} must be a positive whole number, not ${JSON.stringify(value)}`);
  return value;
}

function num(json: Json, key: string, fallback: number): number {
  const value = json[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new ModelConfigError(`config.json's ${key} must be a number, not ${JSON.stringify(value)}`);
  return value;
}

function optionalNumber(json: Json, key: string): number | undefined {
  return json[key] === undefined || json[key] === null ? undefined : num(json, key, 0);
}

function numberIn(set: Json, key: string, type: string): number {
  const value = set[key];
  if (typeof value !== 'number' || !(value > 0)) throw new ModelConfigError(`config.json's rope type "${type}" needs a positive ${key}`);
  return value;
}

function bool(json: Json, key: string, fallback: boolean): boolean {
  const value = json[key] ?? fallback;
  if (typeof value !== 'boolean') throw new ModelConfigError(`config.json's ${key} must be true or false, not ${JSON.stringify(value)}`);
  return value;
}

function divide(a: number, b: number, aKey: string, bKey: string): number {
  if (a % b !== 0) throw new ModelConfigError(`config.json's ${aKey} (${a}) is not a multiple of ${bKey} (${b})`);
  return a / b;
}

// ---------------------------------------------------------------- encoder–decoder families (issue 43)

/**
 * T5 (modeling_t5.py): RMS norms before each sublayer (T5LayerNorm: no mean, no bias), no biases,
 * no 1/√d scaling, no position embeddings but a relative position bias per head; v1.0's ReLU MLP
 * and tied head (scaled by d_model^−½), v1.1 / Flan's gated-gelu MLP (gelu_new) and untied head.
 */
function t5(json: Json): ModelConfig {
  const hidden = int(json, 'd_model', 512);
  const heads = int(json, 'num_heads', 8);
  const layers = int(json, 'num_layers', 6);
  const headDim = int(json, 'd_kv', 64);
  const intermediate = int(json, 'd_ff', 2048);
  const vocab = int(json, 'vocab_size', 32128);
  const projection = json.feed_forward_proj ?? 'relu';
  if (typeof projection !== 'string' || !/^(gated-)?[a-z_]+$/.test(projection)) throw new ModelConfigError(`config.json's feed_forward_proj ${JSON.stringify(projection)} is not supported: "relu", "gated-gelu", or "gated-" and an activation`);
  const gated = projection.startsWith('gated-');
  // T5Config: `gated-gelu` means gelu_new; any other `[gated-]act` names the activation itself.
  let activation: Activation;
  try {
    activation = activationOf(projection === 'gated-gelu' ? 'gelu_new' : projection.replace(/^gated-/, ''), 'feed_forward_proj');
  } catch {
    throw new ModelConfigError(`config.json's feed_forward_proj ${JSON.stringify(projection)} is not supported: "relu", "gated-gelu", or [gated-] and one of gelu_new, gelu, silu, relu`);
  }
  const tied = bool(json, 'tie_word_embeddings', true);
  const pad = whole(json, 'pad_token_id', 0);
  return {
    ...common('t5', 't5', hidden, layers, heads, heads, headDim),
    intermediate,
    vocab,
    // Relative positions: no table to run out of.
    maxPositions: Number.MAX_SAFE_INTEGER,
    norm: 'rms',
    normEps: num(json, 'layer_norm_epsilon', 1e-6),
    activation,
    gatedMlp: gated,
    causal: false,
    qkvBias: false,
    outputBias: false,
    mlpBias: false,
    tiedEmbeddings: tied,
    attention: Array.from({ length: layers }, () => ({ scale: 1 })),
    encoderDecoder: {
      decoder: { layers: int(json, 'num_decoder_layers', layers), heads, intermediate, vocab },
      decoderStartId: whole(json, 'decoder_start_token_id', pad),
      eosId: whole(json, 'eos_token_id', 1),
      relativePositions: { buckets: int(json, 'relative_attention_num_buckets', 32), maxDistance: int(json, 'relative_attention_max_distance', 128) },
      ...(tied ? { headInputScale: hidden ** -0.5 } : {}),
      finalLogitsBias: false,
      forbidden: [],
    },
  };
}

/**
 * BART, Marian and mBART (modeling_bart.py, modeling_marian.py, modeling_mbart.py): biased
 * projections, q scaled by head_dim^−½, LayerNorm; BART and Marian post-LN, mBART pre-LN with a
 * final norm per stack; BART and mBART learned positions offset by 2 and layernorm_embedding,
 * Marian sinusoidal positions; embeddings × √d_model under scale_embedding (the opus-mt configs set it);
 * final_logits_bias on the logits.
 */
function bartFamily(json: Json, modelType: string): ModelConfig {
  const marian = modelType === 'marian';
  // Defaults as configuration_{bart,marian,mbart}.py give them (the published configs set them all).
  const hidden = int(json, 'd_model', 1024);
  const layers = int(json, 'encoder_layers', 12);
  const heads = int(json, 'encoder_attention_heads', 16);
  const headDim = divide(hidden, heads, 'd_model', 'encoder_attention_heads');
  const decoderHeads = int(json, 'decoder_attention_heads', 16);
  divide(hidden, decoderHeads, 'd_model', 'decoder_attention_heads');
  const vocab = int(json, 'vocab_size', marian ? 58101 : 50265);
  // MarianConfig: decoder_vocab_size defaults to vocab_size (the decoder's embeddings and LM head).
  const decoderVocab = json.decoder_vocab_size === undefined || json.decoder_vocab_size === null ? vocab : int(json, 'decoder_vocab_size', vocab);
  const positions = int(json, 'max_position_embeddings', 1024);
  const pad = whole(json, 'pad_token_id', marian ? 58100 : 1);
  const badWords = Array.isArray(json.bad_words_ids) ? json.bad_words_ids : [];
  const forbidden = badWords.flatMap((ids) => (Array.isArray(ids) && ids.length === 1 && Number.isInteger(ids[0]) ? [ids[0] as number] : []));
  if (marian && (json.share_encoder_decoder_embeddings === false || decoderVocab !== vocab)) throw new ModelConfigError("config.json's separate source and target vocabularies (share_encoder_decoder_embeddings false, or a decoder_vocab_size other than vocab_size) are not supported");
  return {
    ...common(modelType, 'bart', hidden, layers, heads, heads, headDim),
    intermediate: int(json, 'encoder_ffn_dim', 4096),
    vocab,
    maxPositions: positions,
    norm: 'layer',
    normEps: 1e-5, // nn.LayerNorm's default: the modeling files build their norms without an eps from the config
    activation: activationOf(json.activation_function ?? 'gelu', 'activation_function'),
    causal: false,
    qkvBias: true,
    outputBias: true,
    mlpBias: true,
    embeddingScale: bool(json, 'scale_embedding', false) ? Math.sqrt(hidden) : 1,
    tiedEmbeddings: bool(json, 'tie_word_embeddings', true),
    attention: Array.from({ length: layers }, () => ({ scale: headDim ** -0.5 })),
    ...(marian ? { sinusoidalPositions: true } : { positions: { offset: 2, rows: positions + 2 } }),
    ...(modelType === 'mbart' ? {} : { postLayerNorm: true }),
    encoderDecoder: {
      decoder: { layers: int(json, 'decoder_layers', 12), heads: decoderHeads, intermediate: int(json, 'decoder_ffn_dim', 4096), vocab: decoderVocab },
      decoderStartId: whole(json, 'decoder_start_token_id', marian ? pad : 2),
      eosId: whole(json, 'eos_token_id', marian ? 0 : 2),
      finalLogitsBias: true,
      forbidden,
    },
  };
}

/** The decoder's own description: the model's settings with the decoder's sizes, causal, one attention entry per decoder layer. */
export function decoderConfigOf(c: ModelConfig): ModelConfig {
  const d = c.encoderDecoder;
  if (!d) throw new RangeError(`${c.modelType} has no decoder`);
  const headDim = c.family === 't5' ? c.headDim : c.hidden / d.decoder.heads;
  return { ...c, layers: d.decoder.layers, heads: d.decoder.heads, kvHeads: d.decoder.heads, headDim, intermediate: d.decoder.intermediate, vocab: d.decoder.vocab, causal: true, attention: Array.from({ length: d.decoder.layers }, () => ({ scale: c.family === 't5' ? 1 : headDim ** -0.5 })) };
}

/** A token id the config may give (0 allowed). */
function whole(json: Json, key: string, fallback: number): number {
  const value = json[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new ModelConfigError(`config.json's ${key} must be a token id (a whole number), not ${JSON.stringify(value)}`);
  return value;
}

// ---------------------------------------------------------------- issue 40's dense families


function denseFamily(json: Json, modelType: unknown): ModelConfig | undefined {
  switch (modelType) {
    case 'gpt_neox':
      return gptNeox(json);
    case 'gptj':
      return gptj(json);
    case 'gpt_neo':
      return gptNeo(json);
    case 'opt':
      return opt(json);
    case 'phi':
      return phi(json);
    case 'phi3':
    case 'olmo':
    case 'olmo2':
    case 'stablelm':
    case 'granite':
    case 'gemma':
      return llamaRelative(json, modelType);
    case 'roberta':
    case 'xlm-roberta':
      return roberta(json, modelType);
    case 'distilbert':
      return distilbert(json);
    case 'modernbert':
      return modernbert(json);
    default:
      return undefined;
  }
}

/** A model whose architecture exists only as Python in its folder (auto_map → modeling_*.py). */
function remoteCodeError(json: Json, modelType: unknown): ModelConfigError {
  const files = [...new Set(Object.values(json.auto_map as Json).flatMap((v) => (Array.isArray(v) ? v : [v])).filter((v): v is string => typeof v === 'string').map((v) => `${v.split('--').pop()?.split('.')[0]}.py`))];
  const name = modelType === undefined ? 'no model_type' : `model_type ${JSON.stringify(modelType)}`;
  return new ModelConfigError(
    `config.json has ${name} and its architecture only as Python code (auto_map → ${files.join(', ')}): Attention Lens does not run a model folder's code (it could do anything on your machine), so it runs only architectures it knows: ${SUPPORTED_MODEL_TYPES.join(', ')}`,
  );
}

/** The fields every dense family shares, with the eight's defaults. */
function dense(modelType: string, family: ModelConfig['family'], dims: { hidden: number; layers: number; heads: number; kvHeads?: number; headDim?: number }) {
  const kvHeads = dims.kvHeads ?? dims.heads;
  if (dims.heads % kvHeads !== 0) throw new ModelConfigError(`config.json's num_attention_heads (${dims.heads}) is not a multiple of num_key_value_heads (${kvHeads})`);
  return common(modelType, family, dims.hidden, dims.layers, dims.heads, kvHeads, dims.headDim ?? divide(dims.hidden, dims.heads, 'hidden_size', 'num_attention_heads'));
}

/** The same RoPE on every layer, from rope_theta (or a family's older name for it) and rope_scaling / rope_parameters. */
function uniformRope(json: Json, modelType: string, headDim: number, context: RopeContext, thetaKey = 'rope_theta'): RopeFrequencies {
  const withTheta = json[thetaKey] !== undefined && json.rope_theta === undefined ? { ...json, rope_theta: json[thetaKey] } : json;
  return ropeByLayerType(withTheta, modelType, headDim, context).full_attention;
}

/** A run longer than max_position_embeddings is what dynamic NTK is for: no cut at that length. */
function positionsOf(json: Json, rope: RopeFrequencies | undefined, fallback: number): number {
  return rope?.dynamic ? Number.MAX_SAFE_INTEGER : int(json, 'max_position_embeddings', fallback);
}

/** Pythia (GPT-NeoX): rotary_pct of each head rotate-half, fused query_key_value per head, parallel residual by default. */
function gptNeox(json: Json): ModelConfig {
  const hidden = int(json, 'hidden_size', 6144);
  const heads = int(json, 'num_attention_heads', 64);
  const layers = int(json, 'num_hidden_layers', 44);
  const base = dense('gpt_neox', 'gpt_neox', { hidden, layers, heads });
  const pct = num(json, 'rotary_pct', num(json, 'partial_rotary_factor', 0.25));
  const rope = uniformRope(json, 'gpt_neox', base.headDim, { rotaryDim: Math.trunc(base.headDim * pct) }, 'rotary_emb_base');
  const bias = bool(json, 'attention_bias', true);
  return {
    ...base,
    intermediate: int(json, 'intermediate_size', 4 * hidden),
    vocab: int(json, 'vocab_size', 50432),
    maxPositions: positionsOf(json, rope, 2048),
    norm: 'layer',
    normEps: num(json, 'layer_norm_eps', 1e-5),
    activation: activationOf(json.hidden_act ?? 'gelu', 'hidden_act'),
    causal: true,
    qkvBias: bias,
    outputBias: bias,
    mlpBias: true,
    tiedEmbeddings: bool(json, 'tie_word_embeddings', false),
    attention: Array.from({ length: layers }, () => ({ scale: 1 / Math.sqrt(base.headDim), rope })),
    parallelResidual: bool(json, 'use_parallel_residual', true),
  };
}

/** GPT-J: rotary_dim columns of each head with rotate-every-two pairs, attention and MLP in parallel from ln_1. */
function gptj(json: Json): ModelConfig {
  const hidden = int(json, 'n_embd', 4096);
  const heads = int(json, 'n_head', 16);
  const layers = int(json, 'n_layer', 28);
  const base = dense('gptj', 'gptj', { hidden, layers, heads });
  const rotaryDim = json.rotary_dim === null || json.rotary_dim === undefined ? base.headDim : int(json, 'rotary_dim', 64);
  // GPT-J's sinusoidal table has base 10000, fixed in its modeling file.
  const rope = ropeFrequencies({ rope_type: 'default' }, 10000, base.headDim, { rotaryDim, interleaved: true });
  return {
    ...base,
    intermediate: int(json, 'n_inner', 4 * hidden),
    vocab: int(json, 'vocab_size', 50400),
    maxPositions: int(json, 'n_positions', 2048),
    norm: 'layer',
    normEps: num(json, 'layer_norm_epsilon', 1e-5),
    activation: activationOf(json.activation_function ?? 'gelu_new', 'activation_function'),
    causal: true,
    qkvBias: false,
    outputBias: false,
    mlpBias: true,
    tiedEmbeddings: bool(json, 'tie_word_embeddings', false),
    attention: Array.from({ length: layers }, () => ({ scale: 1 / Math.sqrt(base.headDim), rope })),
    parallelResidual: true,
    headBias: true,
  };
}

/** GPT-Neo: GPT-2's block, layers global or local (window_size) as attention_types lists them, and no 1/√d on the scores. */
function gptNeo(json: Json): ModelConfig {
  const hidden = int(json, 'hidden_size', 2048);
  // GPTNeoConfig's attribute_map: num_attention_heads and num_hidden_layers are other names of num_heads and num_layers.
  const heads = int(json, json.num_heads === undefined && json.num_attention_heads !== undefined ? 'num_attention_heads' : 'num_heads', 16);
  const layers = int(json, json.num_layers === undefined && json.num_hidden_layers !== undefined ? 'num_hidden_layers' : 'num_layers', 24);
  const kinds = gptNeoLayerKinds(json, layers);
  const window = int(json, 'window_size', 256);
  return {
    ...dense('gpt_neo', 'gpt_neo', { hidden, layers, heads }),
    intermediate: json.intermediate_size === null || json.intermediate_size === undefined ? 4 * hidden : int(json, 'intermediate_size', 0),
    vocab: int(json, 'vocab_size', 50257),
    maxPositions: int(json, 'max_position_embeddings', 2048),
    norm: 'layer',
    normEps: num(json, 'layer_norm_epsilon', 1e-5),
    activation: activationOf(json.activation_function ?? 'gelu_new', 'activation_function'),
    causal: true,
    qkvBias: false,
    outputBias: true,
    mlpBias: true,
    tiedEmbeddings: bool(json, 'tie_word_embeddings', true),
    // GPT-Neo multiplies no scale into its scores; a local layer's query sees itself and the window_size − 1 keys before it.
    attention: kinds.map((kind) => ({ scale: 1, ...(kind === 'local' ? { window } : {}) })),
  };
}

/**
 * attention_types expanded to one kind per layer (or attention_layers, already expanded); without
 * either, GPTNeoConfig's default [[["global", "local"], 12]]: 24 layers alternating, first global.
 */
function gptNeoLayerKinds(json: Json, layers: number): string[] {
  let kinds: unknown[] = [];
  const types = Array.isArray(json.attention_types) || Array.isArray(json.attention_layers) ? json.attention_types : [[['global', 'local'], 12]];
  if (Array.isArray(types)) {
    for (const item of types) {
      if (!Array.isArray(item) || !Array.isArray(item[0]) || typeof item[1] !== 'number') throw new ModelConfigError('config.json\'s attention_types must be a list of [["global" | "local", …], repeats]');
      for (let r = 0; r < item[1]; r++) kinds.push(...(item[0] as unknown[]));
    }
  } else if (Array.isArray(json.attention_layers)) kinds = json.attention_layers;
  if (kinds.length !== layers || !kinds.every((k) => k === 'global' || k === 'local')) throw new ModelConfigError(`config.json's attention_types give ${kinds.length} layers of "global"/"local", but num_layers is ${layers}`);
  return kinds as string[];
}

/** OPT: learned positions offset by 2, ReLU, pre-LN or (do_layer_norm_before false) post-LN. */
function opt(json: Json): ModelConfig {
  const hidden = int(json, 'hidden_size', 768);
  const heads = int(json, 'num_attention_heads', 12);
  const layers = int(json, 'num_hidden_layers', 12);
  const projected = json.word_embed_proj_dim === undefined || json.word_embed_proj_dim === null ? hidden : int(json, 'word_embed_proj_dim', hidden);
  const base = dense('opt', 'opt', { hidden, layers, heads });
  const maxPositions = int(json, 'max_position_embeddings', 2048);
  const bias = bool(json, 'enable_bias', true);
  const before = bool(json, 'do_layer_norm_before', true);
  return {
    ...base,
    intermediate: int(json, 'ffn_dim', 3072),
    vocab: int(json, 'vocab_size', 50272),
    maxPositions,
    norm: 'layer',
    normEps: 1e-5, // nn.LayerNorm's default: OPT gives no eps
    activation: activationOf(json.activation_function ?? 'relu', 'activation_function'),
    causal: true,
    qkvBias: bias,
    outputBias: bias,
    mlpBias: bias,
    tiedEmbeddings: bool(json, 'tie_word_embeddings', true),
    attention: Array.from({ length: layers }, () => ({ scale: 1 / Math.sqrt(base.headDim) })),
    positions: { offset: 2, rows: maxPositions + 2 },
    ...(bool(json, 'layer_norm_elementwise_affine', true) ? {} : { normParameters: 'none' as const }),
    ...(before ? {} : { postLayerNorm: true }),
    // OPTDecoder makes final_layer_norm only when do_layer_norm_before and not _remove_final_layer_norm.
    ...(before && bool(json, '_remove_final_layer_norm', false) ? { noFinalNorm: true } : {}),
    ...(projected !== hidden ? { embeddingWidth: projected } : {}),
  };
}

/** Phi-2: partial_rotary_factor of each head rotate-half, one LayerNorm before attention and MLP side by side. */
function phi(json: Json): ModelConfig {
  const hidden = int(json, 'hidden_size', 2048);
  const heads = int(json, 'num_attention_heads', 32);
  const layers = int(json, 'num_hidden_layers', 24);
  const base = dense('phi', 'phi', { hidden, layers, heads, kvHeads: json.num_key_value_heads === null || json.num_key_value_heads === undefined ? heads : int(json, 'num_key_value_heads', heads) });
  const rope = uniformRope(json, 'phi', base.headDim, { partialRotaryFactor: num(json, 'partial_rotary_factor', 0.5) });
  return {
    ...base,
    intermediate: int(json, 'intermediate_size', 8192),
    vocab: int(json, 'vocab_size', 51200),
    maxPositions: positionsOf(json, rope, 2048),
    norm: 'layer',
    normEps: num(json, 'layer_norm_eps', 1e-5),
    activation: activationOf(json.hidden_act ?? 'gelu_new', 'hidden_act'),
    causal: true,
    qkvBias: true,
    outputBias: true,
    mlpBias: true,
    qkNorm: bool(json, 'qk_layernorm', false),
    tiedEmbeddings: bool(json, 'tie_word_embeddings', false),
    attention: Array.from({ length: layers }, () => ({ scale: 1 / Math.sqrt(base.headDim), rope })),
    parallelResidual: true,
    headBias: true,
  };
}

/**
 * Llama's names and block with one family's conventions on top: Phi-3's fused projections and
 * longrope, OLMo's parameterless LayerNorm and clip_qkv, OLMo 2's output norms and whole-projection
 * q/k norms, StableLM's LayerNorms, partial rotary, per-head q/k norms and parallel block, Granite's
 * multipliers, Gemma's (1 + w) norm, √hidden embeddings and GeGLU.
 */
function llamaRelative(given: Json, modelType: 'phi3' | 'olmo' | 'olmo2' | 'stablelm' | 'granite' | 'gemma'): ModelConfig {
  // Llama's reading of the shared fields (Gemma's under its own name: llamaFamily knows Gemma 2's conventions, not v1's).
  // GemmaConfig's head_dim is 256 unless config.json says otherwise (not hidden / heads).
  const json = modelType === 'phi3' ? phi3Defaults(given) : modelType === 'gemma' ? { ...given, head_dim: given.head_dim ?? 256 } : given;
  const llama = llamaFamily(modelType === 'gemma' ? { ...json, model_type: 'llama' } : json, modelType === 'gemma' ? 'llama' : modelType);
  const c: ModelConfig = { ...llama, modelType };
  const rope = c.attention[0].rope;
  const withRope = (r: RopeFrequencies | undefined) => c.attention.map((a) => ({ ...a, rope: r }));
  switch (modelType) {
    case 'phi3': {
      // Phi-3's sliding_window (Phi-3-mini: 2047) masks every layer, as Mistral's does.
      const window = optionalNumber(json, 'sliding_window');
      return {
        ...c,
        fusedQkv: 'concatenated',
        fusedGateUp: true,
        normEps: num(json, 'rms_norm_eps', 1e-5),
        maxPositions: positionsOf(json, rope, 4096),
        attention: c.attention.map((a) => ({ ...a, ...(window !== undefined ? { window: int(json, 'sliding_window', 0) } : {}) })),
      };
    }
    case 'olmo':
      return { ...c, norm: 'layer', normEps: 1e-5, normParameters: 'none', ...(optionalNumber(json, 'clip_qkv') !== undefined ? { clipQkv: num(json, 'clip_qkv', 0) } : {}) };
    case 'olmo2':
      return { ...c, normEps: num(json, 'rms_norm_eps', 1e-5), outputNormsOnly: true, qkNorm: true, qkNormOver: 'projection' };
    case 'stablelm': {
      const partial = uniformRope(json, modelType, c.headDim, { partialRotaryFactor: num(json, 'partial_rotary_factor', 0.25) });
      const qkNorm = bool(json, 'qk_layernorm', false);
      const qkvBias = bool(json, 'use_qkv_bias', false);
      return {
        ...c,
        norm: 'layer',
        normEps: num(json, 'layer_norm_eps', 1e-5),
        qkvBias,
        outputBias: false,
        mlpBias: false,
        qkNorm,
        ...(qkNorm ? { qkNormPerHeadWeights: true } : {}),
        attention: withRope(partial),
        maxPositions: positionsOf(json, partial, 4096),
        parallelResidual: bool(json, 'use_parallel_residual', false),
      };
    }
    case 'granite': {
      const scale = num(json, 'attention_multiplier', 1);
      return {
        ...c,
        embeddingScale: num(json, 'embedding_multiplier', 1),
        residualScale: num(json, 'residual_multiplier', 1),
        logitScale: 1 / num(json, 'logits_scaling', 1),
        attention: c.attention.map((a) => ({ ...a, scale })),
      };
    }
    case 'gemma':
      // Gemma 1: Llama's block with (1 + w) RMSNorm, embeddings × √hidden, GeGLU on hidden_act (GemmaMLP reads hidden_act;
      // hidden_activation, read by transformers 4.38–4.46, is ignored since), tied head.
      return {
        ...c,
        norm: 'rms-plus-one',
        embeddingScale: Math.sqrt(c.hidden),
        activation: activationOf(json.hidden_act ?? 'gelu_pytorch_tanh', 'hidden_act'),
        tiedEmbeddings: bool(json, 'tie_word_embeddings', true),
        attention: c.attention.map((a) => ({ ...a, scale: 1 / Math.sqrt(c.headDim), window: undefined })),
      };
  }
}

/**
 * What Phi3Config adds to config.json: original_max_position_embeddings 4096 when absent (longrope's
 * pretrained context), and a rope type "su" or "yarn" read as "longrope" (convert_rope_params_to_dict).
 */
function phi3Defaults(json: Json): Json {
  const key = isObject(json.rope_parameters) ? 'rope_parameters' : 'rope_scaling';
  const set = json[key];
  const type = isObject(set) ? (set.rope_type ?? set.type) : undefined;
  const renamed = isObject(set) && (type === 'su' || type === 'yarn') ? { [key]: { ...set, rope_type: 'longrope', type: undefined } } : {};
  return { ...json, original_max_position_embeddings: json.original_max_position_embeddings ?? 4096, ...renamed };
}

/** RoBERTa and XLM-RoBERTa: BERT's block; positions counted from padding_idx + 1, skipping pads; the MLM head as lm_head. */
function roberta(json: Json, modelType: string): ModelConfig {
  const c = bert({ ...json, vocab_size: json.vocab_size ?? 50265, max_position_embeddings: json.max_position_embeddings ?? 514, type_vocab_size: json.type_vocab_size ?? 1 });
  const paddingId = json.pad_token_id === undefined ? 1 : int(json, 'pad_token_id', 1);
  const rows = int(json, 'max_position_embeddings', 514);
  if (rows <= paddingId + 1) throw new ModelConfigError(`config.json's max_position_embeddings (${rows}) leaves no position after padding_idx + 1 (${paddingId + 1})`);
  // RobertaLMHead's activation is the erf gelu whatever hidden_act is (the layers follow hidden_act).
  return { ...c, modelType, family: 'roberta', maxPositions: rows - paddingId - 1, normEps: num(json, 'layer_norm_eps', 1e-12), positions: { offset: 0, rows, paddingId }, headActivation: 'gelu-erf' };
}

/** DistilBERT: BERT's post-LN block under its own names, no token types, the MLM head as vocab_transform / vocab_projector. */
function distilbert(json: Json): ModelConfig {
  const hidden = int(json, 'dim', 768);
  const heads = int(json, 'n_heads', 12);
  const layers = int(json, 'n_layers', 6);
  const base = dense('distilbert', 'distilbert', { hidden, layers, heads });
  return {
    ...base,
    intermediate: int(json, 'hidden_dim', 4 * hidden),
    vocab: int(json, 'vocab_size', 30522),
    maxPositions: int(json, 'max_position_embeddings', 512),
    ...LAYER_NORM_BIASED_TIED,
    normEps: 1e-12, // DistilBERT's LayerNorms are built with eps 1e-12, not from the config
    activation: activationOf(json.activation ?? 'gelu', 'activation'),
    causal: false,
    tiedEmbeddings: bool(json, 'tie_word_embeddings', true),
    attention: Array.from({ length: layers }, () => ({ scale: 1 / Math.sqrt(base.headDim) })),
  };
}

/**
 * ModernBERT: RoPE (global_rope_theta on global layers, local_rope_theta on local ones), every
 * global_attn_every_n_layers-th layer global and the others seeing local_attention / 2 keys on
 * each side, GeGLU, no biases, LayerNorms without bias unless norm_bias.
 */
function modernbert(json: Json): ModelConfig {
  const hidden = int(json, 'hidden_size', 768);
  const heads = int(json, 'num_attention_heads', 12);
  const layers = int(json, 'num_hidden_layers', 22);
  const base = dense('modernbert', 'modernbert', { hidden, layers, heads });
  const every = int(json, 'global_attn_every_n_layers', 3);
  const local = int(json, 'local_attention', 128);
  // ModernBertConfig.convert_rope_params_to_dict: one set per layer type from rope_parameters (default rope), a legacy
  // rope_scaling merged into both, rope_theta else global_rope_theta / local_rope_theta.
  const parameters = isObject(json.rope_parameters) ? json.rope_parameters : {};
  const scaling = isObject(json.rope_scaling) ? json.rope_scaling : {};
  const legacy = scaling.type !== undefined && scaling.rope_type === undefined ? { ...scaling, rope_type: scaling.type } : scaling;
  const ropeOf = (type: string, thetaKey: string, theta: number) =>
    ropeFrequencies({ rope_type: 'default', ...(isObject(parameters[type]) ? parameters[type] : {}), ...legacy }, num(json, thetaKey, theta), base.headDim, { maxPositions: optionalNumber(json, 'max_position_embeddings') ?? 8192 });
  const [global, localRope] = [ropeOf('full_attention', 'global_rope_theta', 160000), ropeOf('sliding_attention', 'local_rope_theta', 10000)];
  const kinds = Array.isArray(json.layer_types) && json.layer_types.length === layers ? json.layer_types.map((t) => t === 'sliding_attention') : Array.from({ length: layers }, (_, i) => i % every !== 0);
  const attentionBias = bool(json, 'attention_bias', false);
  const mlpBias = bool(json, 'mlp_bias', false);
  if (!bool(json, 'decoder_bias', true)) throw new ModelConfigError("config.json's decoder_bias false is not supported");
  return {
    ...base,
    intermediate: int(json, 'intermediate_size', 1152),
    vocab: int(json, 'vocab_size', 50368),
    maxPositions: int(json, 'max_position_embeddings', 8192),
    norm: 'layer',
    normEps: num(json, 'norm_eps', 1e-5),
    activation: activationOf(json.hidden_activation ?? 'gelu', 'hidden_activation'),
    gatedMlp: true,
    causal: false,
    qkvBias: attentionBias,
    outputBias: attentionBias,
    mlpBias,
    tiedEmbeddings: bool(json, 'tie_word_embeddings', true),
    // A local layer's query sees the keys within local_attention / 2 on each side: |i − j| < window.
    attention: kinds.map((sliding) => ({ scale: 1 / Math.sqrt(base.headDim), rope: sliding ? localRope : global, ...(sliding ? { window: Math.floor(local / 2) + 1 } : {}) })),
    ...(bool(json, 'norm_bias', false) ? {} : { normParameters: 'weight' as const }),
    fusedQkv: 'concatenated',
    fusedGateUp: true,
    headDenseBias: bool(json, 'classifier_bias', false),
    headActivation: activationOf(json.classifier_activation ?? 'gelu', 'classifier_activation'),
  };}

/** How a vision transformer turns a picture into its tokens (transformers' *Embeddings modules), as data. */
export interface VisionSpec {
  /** The picture size the position embeddings were trained for, [height, width]. */
  imageSize: [number, number];
  patchSize: number;
  channels: number;
  /** Tokens before the patches: the class token, DeiT's distillation token, DINOv2's registers (after the class token). */
  classToken: boolean;
  distillationToken: boolean;
  registers: number;
  /**
   * A picture whose patch grid is not the trained one: refused (ViT, DeiT, CLIP and SigLIP without
   * interpolate_pos_encoding), or the patch positions interpolated bicubically as PyTorch's
   * interpolate does (DINOv2: a = −0.75, no antialias; DINOv2 with registers: antialias=True).
   */
  interpolation: 'none' | 'bicubic' | 'bicubic-antialias';
  /** Where the position table is kept: [1, positions, hidden] parameter, or an nn.Embedding [positions, hidden]. */
  positionTable: 'parameter' | 'embedding';
  /** The patch projection (a Conv2d) has a bias. */
  patchBias: boolean;
  /** The classification head the checkpoint's architecture names, with id2label's labels in order. */
  classifier?: { kind: 'class-token' | 'class-and-distillation' | 'class-and-mean-patches'; labels: string[] };
  /** The class whose tensors hold the model under a prefix (vit., deit., dinov2., vision_model.), guessed from `architectures`. */
  architecture: string;
}

/**
 * ViT, DeiT, DINOv2 (with registers) and the vision towers of CLIP and SigLIP, each as its
 * configuration_*.py gives the defaults. All are pre-LN encoders (no causal mask) with biased
 * q/k/v, a plain MLP and LayerNorm; CLIP adds pre_layrnorm, DINOv2 the layer scales.
 */
function visionFamily(top: Json, modelType: string): ModelConfig {
  const tower = modelType === 'clip' || modelType === 'siglip';
  // CLIPModel and SiglipModel keep the vision tower's settings under vision_config.
  const json: Json = tower ? (isObject(top.vision_config) ? top.vision_config : {}) : top;
  const clip = modelType.startsWith('clip');
  const siglip = modelType.startsWith('siglip');
  const dinov2 = modelType.startsWith('dinov2');
  const defaults = clip
    ? { hidden: 768, intermediate: 3072, image: 224, patch: 32, act: 'quick_gelu', eps: 1e-5 }
    : siglip
      ? { hidden: 768, intermediate: 3072, image: 224, patch: 16, act: 'gelu_pytorch_tanh', eps: 1e-6 }
      : dinov2
        ? { hidden: 768, intermediate: 0, image: 224, patch: 14, act: 'gelu', eps: 1e-6 }
        : { hidden: 768, intermediate: 3072, image: 224, patch: 16, act: 'gelu', eps: 1e-12 };
  const hidden = int(json, 'hidden_size', defaults.hidden);
  const heads = int(json, 'num_attention_heads', 12);
  const layers = int(json, 'num_hidden_layers', 12);
  const headDim = divide(hidden, heads, 'hidden_size', 'num_attention_heads');
  if (dinov2 && bool(json, 'use_swiglu_ffn', false)) throw new ModelConfigError("config.json's use_swiglu_ffn (DINOv2's SwiGLU MLP, giant models) is not supported");
  const intermediate = dinov2 ? Math.trunc(hidden * num(json, 'mlp_ratio', 4)) : int(json, 'intermediate_size', defaults.intermediate);
  const imageSize = pair(json.image_size ?? defaults.image, 'image_size');
  const patchSize = int(json, 'patch_size', defaults.patch);
  const qkvBias = clip || siglip ? true : bool(json, 'qkv_bias', true);
  const architectures = Array.isArray(top.architectures) ? top.architectures.map(String) : [];
  const architecture = architectures[0] ?? '';
  const positions = (imageSize[0] / patchSize) * (imageSize[1] / patchSize);
  const vision: VisionSpec = {
    imageSize,
    patchSize,
    channels: int(json, 'num_channels', 3),
    classToken: !siglip,
    distillationToken: modelType === 'deit',
    registers: modelType === 'dinov2_with_registers' ? int(json, 'num_register_tokens', 4) : 0,
    interpolation: modelType === 'dinov2' ? 'bicubic' : modelType === 'dinov2_with_registers' ? 'bicubic-antialias' : 'none',
    positionTable: clip || siglip ? 'embedding' : 'parameter',
    patchBias: !clip,
    architecture,
  };
  const classifierKind = /ForImageClassificationWithTeacher$/.test(architecture)
    ? 'class-and-distillation'
    : /ForImageClassification$/.test(architecture)
      ? dinov2
        ? 'class-and-mean-patches'
        : siglip
          ? undefined
          : 'class-token'
      : undefined;
  if (classifierKind) vision.classifier = { kind: classifierKind, labels: labelsOf(top) };
  return {
    ...common(modelType, 'vision', hidden, layers, heads, heads, headDim),
    intermediate,
    vocab: vision.classifier?.labels.length ?? 0,
    maxPositions: positions + (vision.classToken ? 1 : 0) + (vision.distillationToken ? 1 : 0),
    norm: 'layer',
    normEps: num(json, 'layer_norm_eps', defaults.eps),
    activation: activationOf(json.hidden_act ?? defaults.act, 'hidden_act'),
    causal: false,
    qkvBias,
    outputBias: true,
    mlpBias: true,
    tiedEmbeddings: false,
    attention: Array.from({ length: layers }, () => ({ scale: 1 / Math.sqrt(headDim) })),
    vision,
  };
}

// ---- mixtures of experts: the router's description (experts.ts runs it)

/** How an MoE model routes: read from config.json, the same for every sparse layer. */
export interface MoeConfig {
  /** Routed experts per sparse layer (num_local_experts or num_experts). */
  experts: number;
  /** Experts each token goes to (num_experts_per_tok). */
  topK: number;
  /** The top-k softmax weights divided by their sum (Mixtral always; norm_topk_prob elsewhere). */
  normTopK: boolean;
  /** Each routed expert's intermediate width. */
  expertIntermediate: number;
  /** Qwen2-MoE: an always-on expert of this width, scaled by sigmoid(shared_expert_gate · x). */
  sharedIntermediate?: number;
  /** Per layer: true where the MLP is the mixture, false where it is the dense MLP (mlp_only_layers, decoder_sparse_step). */
  sparse: boolean[];
  /** How the checkpoint names the experts: Mixtral's block_sparse_moe.experts.E.w1/w2/w3, or mlp.experts.E.gate_proj/up_proj/down_proj. */
  naming: 'mixtral' | 'qwen';
}

/** The model types routed through experts (config.ts lists them among the supported ones). */
const MOE_MODEL_TYPES: readonly unknown[] = ['mixtral', 'qwen2_moe', 'olmoe', 'qwen3_moe'];

function isMoeModelType(modelType: unknown): boolean {
  return MOE_MODEL_TYPES.includes(modelType);
}

/** The routing settings of an MoE config.json (undefined for the dense families). */
export function moeConfigOf(json: Json, modelType: string, layers: number, intermediate: number): MoeConfig | undefined {
  if (!isMoeModelType(modelType)) return undefined;
  const mixtral = modelType === 'mixtral';
  const expertsKey = mixtral ? 'num_local_experts' : 'num_experts';
  const defaults: Record<string, [experts: number, topK: number]> = { mixtral: [8, 2], qwen2_moe: [60, 4], olmoe: [64, 8], qwen3_moe: [128, 8] };
  const [defaultExperts, defaultTopK] = defaults[modelType];
  const experts = wholeOrZero(json, expertsKey, defaultExperts, true);
  const topK = wholeOrZero(json, 'num_experts_per_tok', defaultTopK, false);
  if (experts > 0 && topK > experts) throw new ModelConfigError(`config.json's num_experts_per_tok (${topK}) is more than its ${expertsKey} (${experts}): a token cannot take more experts than there are`);
  // Qwen2-MoE and Qwen3-MoE: a layer is sparse unless listed in mlp_only_layers, and then only every decoder_sparse_step-th.
  const step = mixtral || modelType === 'olmoe' ? 1 : wholeOrZero(json, 'decoder_sparse_step', 1, false);
  const denseOnly = mixtral || modelType === 'olmoe' ? [] : json.mlp_only_layers ?? [];
  if (!Array.isArray(denseOnly) || !denseOnly.every((l) => Number.isInteger(l))) throw new ModelConfigError("config.json's mlp_only_layers must be a list of layer indices");
  const sparse = Array.from({ length: layers }, (_, i) => experts > 0 && !denseOnly.includes(i) && (i + 1) % step === 0);
  const moeIntermediate = modelType === 'qwen2_moe' || modelType === 'qwen3_moe' ? wholeOrZero(json, 'moe_intermediate_size', modelType === 'qwen2_moe' ? 1408 : 768, false) : intermediate;
  const shared = modelType === 'qwen2_moe' ? wholeOrZero(json, 'shared_expert_intermediate_size', 5632, true) : 0;
  const normTopK = mixtral ? true : bool(json, 'norm_topk_prob', false);
  return { experts, topK, normTopK, expertIntermediate: moeIntermediate, ...(shared > 0 ? { sharedIntermediate: shared } : {}), sparse, naming: mixtral ? 'mixtral' : 'qwen' };
}

function wholeOrZero(json: Json, key: string, fallback: number, zeroAllowed: boolean): number {
  const value = json[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < (zeroAllowed ? 0 : 1)) throw new ModelConfigError(`config.json's ${key} must be a ${zeroAllowed ? 'whole number' : 'positive whole number'}, not ${JSON.stringify(value)}`);
  return value;
}

/** id2label's labels in id order (numbered when the config has none). */
function labelsOf(json: Json): string[] {
  const map = isObject(json.id2label) ? json.id2label : {};
  const count = typeof json.num_labels === 'number' ? json.num_labels : Object.keys(map).length;
  return Array.from({ length: count }, (_, i) => (typeof map[String(i)] === 'string' ? (map[String(i)] as string) : `LABEL_${i}`));
}

/** image_size as [height, width]: one number or a pair. */
function pair(value: unknown, key: string): [number, number] {
  const values = Array.isArray(value) ? value : [value, value];
  if (values.length !== 2 || !values.every((v) => typeof v === 'number' && Number.isInteger(v) && v > 0)) throw new ModelConfigError(`config.json's ${key} must be a positive whole number or two, not ${JSON.stringify(value)}`);
  return values as [number, number];
}
