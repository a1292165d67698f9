// A model folder's config.json read as each architecture's own code reads it (Hugging Face
// transformers' configuration_*.py and modeling_*.py; the conventions and their sources are in
// docs/models.md). The result is data: which norm, which MLP, which positions, and per layer the
// attention variants (RoPE frequencies, window, softcap, scale) the engine applies.

/** The model types this forward pass runs, as config.json's `model_type` names them. */
export const SUPPORTED_MODEL_TYPES = ['gpt2', 'bert', 'llama', 'mistral', 'qwen2', 'qwen3', 'gemma2', 'gemma3', 'gemma3_text'] as const;

export class ModelConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelConfigError';
  }
}

/** LayerNorm (x − μ)/σ·w + b; RMSNorm x/rms·w; Gemma's RMSNorm x/rms·(1 + w). */
export type NormKind = 'layer' | 'rms' | 'rms-plus-one';
/** gelu_new and gelu_pytorch_tanh are the same tanh approximation; gelu is the erf form. */
export type Activation = 'gelu-tanh' | 'gelu-erf' | 'silu';

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
}

export interface ModelConfig {
  modelType: string;
  family: 'gpt2' | 'bert' | 'llama';
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
}

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
    default:
      throw new ModelConfigError(
        `config.json's model_type ${modelType === undefined ? 'is missing' : JSON.stringify(modelType)}${modelType === undefined ? '' : ' is not supported'}: supported are ${SUPPORTED_MODEL_TYPES.join(', ')}`,
      );
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
    maxPositions: int(json, 'max_position_embeddings', 2048),
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
        return 'sliding_attention';
      case 'gemma2': // even layers local, odd global
        return i % 2 === 0 ? 'sliding_attention' : 'full_attention';
      case 'gemma3':
      case 'gemma3_text': // every sliding_window_pattern-th layer global
        return (i + 1) % int(json, 'sliding_window_pattern', 6) === 0 ? 'full_attention' : 'sliding_attention';
      case 'qwen2':
      case 'qwen3': // use_sliding_window: the layers from max_window_layers on
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
function ropeByLayerType(json: Json, modelType: string, headDim: number): Record<string, RopeFrequencies> {
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
  for (const [type, set] of Object.entries(sets)) out[type] = ropeFrequencies(set, defaultTheta, headDim);
  return out;
}

/** inv_freq of one rope set, as modeling_rope_utils computes it for default, linear and llama3. */
export function ropeFrequencies(set: Json, defaultTheta: number, headDim: number): RopeFrequencies {
  const type = String(set.rope_type ?? set.type ?? 'default');
  const theta = typeof set.rope_theta === 'number' ? set.rope_theta : defaultTheta;
  if (set.partial_rotary_factor !== undefined && set.partial_rotary_factor !== 1) throw new ModelConfigError('config.json asks for partial_rotary_factor, which is not supported');
  const half = headDim / 2;
  const base = Float64Array.from({ length: half }, (_, i) => theta ** (-(2 * i) / headDim));
  const factor = (): number => {
    const value = set.factor;
    if (typeof value !== 'number' || !(value > 0)) throw new ModelConfigError(`config.json's rope type "${type}" needs a positive factor`);
    return value;
  };
  switch (type) {
    case 'default':
      return { theta, type, inverseFrequencies: base, plain: true };
    case 'linear': {
      const f = factor();
      return { theta, type, inverseFrequencies: base.map((v) => v / f), plain: f === 1 };
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
      return { theta, type, inverseFrequencies: scaled, plain: false };
    }
    default:
      throw new ModelConfigError(`config.json's rope type "${type}" is not supported: supported are default, linear and llama3`);
  }
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
    default:
      throw new ModelConfigError(`config.json's ${key} ${JSON.stringify(value)} is not supported: supported are gelu_new, gelu_pytorch_tanh, gelu and silu`);
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
