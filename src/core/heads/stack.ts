// One kind of result for many heads (design.md §4): a whole-model run, attentions saved from
// someone's PyTorch, and a multi-head problem all become an AttentionStack. The model view, the
// head view, head scores, rollout and comparisons are views and analyses over this shape, run in
// the worker; the page receives only what it draws (pooled maps, top-k lines, score tables).
// Pure data and functions: no `vscode` import.
import type { ModelRouting } from '../model/experts';
import type { Prediction } from '../model/input';

/** Where a stack came from: tells the page what a click on a head opens. */
export type StackSource =
  | { kind: 'model'; architecture: string; folder: string }
  | { kind: 'saved'; file: string }
  | { kind: 'problem'; document: string; problem: number };

/**
 * The attentions of an encoder–decoder run, by name (design.md §4: kinds are names, views select
 * one and never fork per family): the encoder's self-attention [source × source], the decoder's
 * causal self-attention [target × target], and the decoder's cross-attention [target × source]
 * (queries from the decoder, keys and values from the encoder's output).
 */
export type AttentionKind = 'encoder' | 'decoder' | 'cross';

/** How a thumbnail cell summarises its block of weights. */
export type PoolMode = 'max' | 'mean';

export interface AttentionStack {
  source: StackSource;
  /** Query labels, as the user should read them (byte-level markers already made visible). */
  tokens: string[];
  /** Key labels when they differ from the queries' (cross-attention); else the same as tokens. */
  keyTokens: string[];
  /** Token ids when known (model runs, saved files with ids): head scores that compare tokens
   * (duplicate, induction) need them and are null without. */
  tokenIds?: number[];
  layerCount: number;
  headCount: number;
  /** True when every head is square and has no weight past its diagonal: a causal model's run by
   * construction, a saved file's when its rows were checked so (saved.ts). The analyses' kernels
   * then read only the lower triangles. Nothing else checks it. */
  lowerTriangular?: boolean;
  queryCount: number;
  keyCount: number;
  /**
   * The attention weights of one head, [queryCount × keyCount] row-major, each row a
   * distribution (or all zero when fully masked). May compute on demand (a model run keeps each
   * layer's input and recomputes a head rather than holding layers × heads × n² floats); callers
   * must not write into the returned array.
   */
  weights(layer: number, head: number): Float32Array | Float64Array;
  /**
   * Every head of `layer`, a group at a time, where a stack that computes its heads on demand does
   * a group at once for less than its heads one by one (a model run: on the compute threads).
   * `use` gets each group's first head and its weights, views valid only until it resolves.
   * Absent: `weights`, head by head.
   */
  headGroups?(layer: number, use: (first: number, heads: (Float32Array | Float64Array)[]) => Promise<void>): Promise<void>;
  /**
   * Head `head` of `layer` already pooled by `mode` in blocks of rowBlock × colBlock (as poolMap
   * lays it out), when the computation that made the stack kept it (a model run pools every head
   * at the model view's opening size during its forward); undefined otherwise.
   */
  pooled?(layer: number, head: number, mode: PoolMode, rowBlock: number, colBlock: number): Float32Array | undefined;
  /** A model run's prediction at a query position, computed on demand (absent unless the stack is a model run). */
  predictAt?(position: number): Promise<Prediction | undefined>;
  /** A mixture-of-experts model run's routing, recorded during its forward (core/model/experts.ts). */
  routing?: ModelRouting;
  /** Which kind of attention this stack holds, when its run has several (an encoder–decoder model's); absent: its only kind. */
  kind?: AttentionKind;
  /**
   * Every kind of attention of the run this stack belongs to, each a stack of its own with its
   * tokens per axis (`kinds[stack.kind] === stack`); absent when the run has one kind. The
   * encoder's stack has the source on both axes, the decoder's the target on both, the cross
   * stack the target as queries (`tokens`) and the source as keys (`keyTokens`).
   */
  kinds?: { [K in AttentionKind]?: AttentionStack };
}
