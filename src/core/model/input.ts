// What a model run is given and what it predicts: plain data, shared by the core, the protocol and
// the heads' stack contract (a leaf module, so that none of them imports the forward pass for a type).
import type { Decoding } from './samplingConfig';

/** An encoder–decoder model's target: text (after decoder_start_token_id), the decoder's exact input ids, or tokens generated greedily (at most `generate`). */
export type TargetInput = { text: string } | { ids: number[] } | { generate: number };

/** A multilingual translation model's languages (mBART's codes, `en_XX`): of the source, of the target. */
export interface Languages {
  source?: string;
  target?: string;
}

/** A text model's input (for an encoder–decoder model, the source, and its target, and for a
 * multilingual one their languages); or a picture. */
export type ModelInput = { text: string; target?: TargetInput; languages?: Languages } | { ids: number[]; target?: TargetInput; languages?: Languages } | { image: ImageInput };

/**
 * The input of B when run A (`a`, which ran on `ids`) is compared with another text (`text`) or,
 * without one, another checkpoint. An encoder–decoder's B reads A's target as A's decoder did: a
 * generated target as its ids (`ids` are then the target's), so the decoder's and the
 * cross-attention compare on one target, and in A's languages (mBART's). A run on the probe's tokens
 * or a picture gives its ids.
 */
export function comparedInput(a: ModelInput | { probe: unknown }, ids: number[], text?: string): ModelInput {
  if ('probe' in a || 'image' in a) return { ids };
  const generated = a.target !== undefined && 'generate' in a.target;
  const target = a.target ? { target: generated ? { ids } : a.target } : {};
  // A generated target's ids hold its language's code already: only the source's language stays.
  const { source, target: targetLanguage } = a.languages ?? {};
  const chosen = { ...(source !== undefined ? { source } : {}), ...(targetLanguage !== undefined && !generated ? { target: targetLanguage } : {}) };
  const languages = Object.keys(chosen).length > 0 ? { languages: chosen } : {};
  if (text !== undefined) return { text, ...target, ...languages };
  return 'text' in a ? { text: a.text, ...target, ...languages } : { ids: a.ids, ...target, ...languages };
}

/** A picture for a vision model: the file's bytes (PNG or JPEG) and a name for messages. */
export interface ImageInput {
  name: string;
  bytes: Uint8Array;
}

export interface Prediction {
  /** The position whose output predicts: the next token for causal LMs, the token under [MASK] for BERT. */
  position: number;
  /** 'label': a vision classifier's top 5 classes (id2label), at the class token. */
  kind: 'next' | 'mask' | 'label';
  top: { id: number; token: string; probability: number }[];
}

/** A generated run's decoding (generate.ts), plain data like the rest. */
export interface GenerationStep {
  /** 0 for the first new token. */
  index: number;
  /** The new token's position in the final sequence (promptLength + index). */
  position: number;
  id: number;
  /** Its label, as the run's tokens show it. */
  token: string;
  /** The 5 most probable tokens at position − 1, before the choice (a sampled token may be outside them). */
  candidates: Prediction;
  /**
   * The attention row this step computed: of the token at position − 1 (the one fed, whose output
   * chose `id`) over keys 0…position − 1, per layer [heads × position] row-major. Equal to that
   * row of one forward over the final sequence.
   */
  attention: Float32Array[];
  /** Milliseconds of this step: the fed token's one-row forward, the LM head and the choice. */
  ms: number;
}

/**
 * The prompt's attention as the generation's first forward computed it: every token but the last
 * (which is fed as step 0), each layer × head's lower triangle packed by query row — row r's r + 1
 * keys at r(r + 1)/2 — heads after one another, layer-major. With each step's row after it, the
 * attention of the sequence so far: what the heads page draws while the model writes.
 */
export interface PromptAttention {
  queries: number;
  layers: number;
  heads: number;
  /** Absent when there are more than LIVE_PROMPT_VALUES of them (generate.ts): too many to draw as they come. */
  weights?: Float32Array;
}

export interface Generation {
  promptLength: number;
  steps: GenerationStep[];
  stoppedBy: 'eos' | 'length' | 'cancelled';
  /** How its tokens were chosen: greedy, or sampled with which values from where. */
  decoding: Decoding;
  /** The end-of-sequence ids that stop it (generation_config.json's, else config.json's; may be none). */
  eosIds: number[];
  /** The generated tokens decoded as text (special tokens as written), when the folder has a tokenizer. */
  text?: string;
  /** Milliseconds of the prompt's forward that filled the cache (all but its last token, which is step 0's). */
  prefillMs: number;
  /** Bytes of the key/value cache: 2 × layers × kv_heads × head_dim × 4 per position of prompt + maxNewTokens. */
  cacheBytes: number;
}

declare module './run' {
  interface ModelRun {
    /** A generated run's decoding: the prompt's length, each step, why it stopped. */
    generation?: Generation;
  }
}
