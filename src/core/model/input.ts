// What a model run is given and what it predicts: plain data, shared by the core, the protocol and
// the heads' stack contract (a leaf module, so that none of them imports the forward pass for a type).

/** An encoder–decoder model's target: text (after decoder_start_token_id), the decoder's exact input ids, or tokens generated greedily (at most `generate`). */
export type TargetInput = { text: string } | { ids: number[] } | { generate: number };

/** A text model's input (for an encoder–decoder model, the source, and its target); or a picture. */
export type ModelInput = { text: string; target?: TargetInput } | { ids: number[]; target?: TargetInput } | { image: ImageInput };

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
