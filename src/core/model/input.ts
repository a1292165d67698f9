// What a model run is given and what it predicts: plain data, shared by the core, the protocol and
// the heads' stack contract (a leaf module, so that none of them imports the forward pass for a type).

export type ModelInput = { text: string } | { ids: number[] };

export interface Prediction {
  /** The position whose output predicts: the next token for causal LMs, the token under [MASK] for BERT. */
  position: number;
  kind: 'next' | 'mask';
  top: { id: number; token: string; probability: number }[];
}
