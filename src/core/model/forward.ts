// The whole-model forward pass, one walk over a ModelLayout for every architecture: embeddings,
// then per layer norm → Q/K/V (LinearBackend) → per-head q/k norm → RoPE (the engine's rotate)
// → attention (the engine: the fast path's online softmax, or the reference for softcap and
// windows) → output projection → residual → MLP; the products go to the LinearBackend (ONNX
// Runtime where it loads). A layer's weights are read when it runs and dropped after. Each layer keeps its normed input and its Q and K as scored, so any head's
// weights can be recomputed on demand and any head opened step by step, and every head's weights
// pooled to the model view's opening thumbnails as the attention computes them (the weights
// themselves are not kept: layers × heads × n² floats). A generation's prompt also writes each
// layer's K and V into a key/value cache (cache.ts), and each new token then runs alone (step):
// one row through the same walk, its attention over the cache.
import { columns, addColumns, zeros } from '../engine/kernels';
import { forwardOutput, headWeights, checkCancelled } from '../engine/attention';
import { forwardFast, forwardFastHere, referenceOnly } from '../engine/fast/index';
import { LayerPools } from '../heads/pool';
import type { AttentionOptions, AttentionSpec, Matrix } from '../types';
import type { LinearBackend, LinearWeights } from './backend';
import { type Activation, type LayerAttention, type ModelConfig, outputWidth, type RopeFrequencies, ropeAt } from './config';
import { type LayerRouting, mixtureOfExperts } from './experts';
import type { CrossLayout, LayerLayout, LinearLayout, MlpLayout, ModelLayout, NormLayout } from './layout';
import { relativeBias } from './relative';
import { addInPlace, gatherRows, norm } from './ops';
import { ReadBuffer, type Weights } from './weights';
import type { KeyValueCache } from './cache';

export interface ForwardControl {
  isCancelled?: () => boolean;
  /** The fast path's shared cancel flag: non-zero stops the kernels within one share. */
  cancelFlag?: Int32Array;
}

/** What one layer keeps after the run. */
export interface LayerRecord {
  /** The layer's attention input after its norm, [n × hidden]. */
  input: Float32Array;
  /** Q [n × heads·head_dim] and K [n × kv_heads·head_dim] as scored: after q/k norm and RoPE. */
  Q: Float32Array;
  K: Float32Array;
  /** Every head's weights pooled (max and mean) as the model view first asks for them. */
  pools: LayerPools;
  /** A mixture-of-experts layer's routing, as the run used it. */
  routing?: LayerRouting;
  /** A decoder layer's cross-attention: its normed input [n × hidden], Q [n × heads·head_dim], K of the encoder's output [keys × …], its pools. */
  cross?: CrossRecord;
}

/** What a decoder layer's cross-attention keeps: as LayerRecord, its keys the encoder's `keys` positions. */
export interface CrossRecord extends Omit<LayerRecord, 'cross' | 'routing'> {
  keys: number;
}

/** Which attention of a layer: its self-attention, or a decoder layer's cross-attention over the encoder's output. */
export type AttentionSite = 'self' | 'cross';

/** The encoder's output as a decoder reads it: its final states [rows × hidden], and each layer's cross K and V of them, made once. */
export interface EncoderMemory {
  states: Float32Array;
  rows: number;
  keysValues: Map<number, Promise<{ K: Float32Array; V: Float32Array }>>;
}

export function encoderMemory(states: Float32Array, rows: number): EncoderMemory {
  return { states, rows, keysValues: new Map() };
}


/** Bytes of the fast path's materialised n×n steps per weight of one head: the weights alone, in float32 (weightsOnly). */
const MATERIALIZED_BYTES_PER_WEIGHT = 4;
/** At most this many bytes of materialised steps at once (but one KV head's group always): heads are attended in groups under it. */
const MATERIALIZED_BYTES = 256 * 2 ** 20;

/** KV heads attended at once on n tokens, and the bytes of their materialised steps. */
export function attentionGroup(c: ModelConfig, n: number): { kvHeads: number; bytes: number } {
  const perKvHead = n * n * MATERIALIZED_BYTES_PER_WEIGHT * (c.heads / c.kvHeads);
  const kvHeads = Math.min(c.kvHeads, Math.max(1, Math.floor(MATERIALIZED_BYTES / perKvHead)));
  return { kvHeads, bytes: kvHeads * perKvHead };
}

/**
 * The fast path's memories of the last head groups attended or heads recomputed, which the next
 * reuse, whichever run asks: a fresh WebAssembly memory cost each run's first layer ~100 ms here
 * (512 tokens), and the compute threads are replaced once they have seen 512 MB of distinct
 * memories. Taken while in use (takeSpareMemory), so two runs at once never share one. Two are
 * kept, the latest first: comparing two runs recomputes a layer's heads of both at once.
 */
const spareMemories: { output: Matrix }[] = [];
const SPARE_MEMORIES = 2;

function takeSpareMemory(): { output: Matrix } | undefined {
  return spareMemories.pop();
}

function keepSpareMemory(output: Matrix): void {
  spareMemories.push({ output });
  if (spareMemories.length > SPARE_MEMORIES) spareMemories.shift();
}

export interface ForwardResult {
  layers: LayerRecord[];
  /** The last layer's output after the final norm, [n × hidden]. */
  hidden: Float32Array;
}

/**
 * Where every forward reads its products' weights, each use consumed before the next: one memory
 * for all runs, since fresh pages cost a fault each (~15 µs here: a GPT-2-small run growing its
 * own buffer to a layer's MLP faulted ~11,000 pages in, 0.1–0.2 s). Runs at once take turns.
 */
const readBuffer = new ReadBuffer();
/** More than this is not held between runs (a large model's layer weights). */
const MAX_IDLE_READ_BYTES = 256 * 2 ** 20;
/**
 * The two memories a mixture's expert groups are read into in turn (mlps): one group's weights
 * read and widened on this thread while the backend runs the group before on its own.
 */
const expertReads = [new ReadBuffer(), new ReadBuffer()];
let expertTurn = 0;

/** What the largest use of `layout`'s weights takes of the read memory: a layer's MLP, read side by side, or its largest product. */
export function largestRead(layout: ModelLayout, weights: Weights): { bytes: number; values: number } {
  const room = (...layers: (LinearLayout | undefined)[]) =>
    layers.reduce((sum, L) => {
      const { bytes, values } = L ? weights.readRoom(`${L.name}.weight`) : { bytes: 0, values: 0 };
      return { bytes: sum.bytes + bytes, values: sum.values + values };
    }, { bytes: 0, values: 0 });
  const uses = layout.layers.flatMap((L) => [room(L.up, L.gate, L.down), room(L.experts?.shared?.up, L.experts?.shared?.gate, L.experts?.shared?.down), room(L.out), ...('fused' in L.qkv ? [room(L.qkv.fused)] : [room(L.qkv.q), room(L.qkv.k), room(L.qkv.v)])]);
  return { bytes: Math.max(0, ...uses.map((use) => use.bytes)), values: Math.max(0, ...uses.map((use) => use.values)) };
}

/** Room for the largest use of `layout`'s weights, paged in before a first run (not when too large to hold idle). */
export function reserveReads(layout: ModelLayout, weights: Weights): Promise<void> {
  const { bytes, values } = largestRead(layout, weights);
  return bytes + 4 * values > MAX_IDLE_READ_BYTES ? Promise.resolve() : readBuffer.reserve(bytes, values);
}

/** After a run: the read memory is kept for the next one unless it is too large to hold idle. */
export async function trimReads(): Promise<void> {
  await Promise.all([readBuffer, ...expertReads].map((buffer) => buffer.trim(MAX_IDLE_READ_BYTES)));
}

export class ModelForward {
  constructor(
    readonly config: ModelConfig,
    readonly layout: ModelLayout,
    readonly weights: Weights,
    readonly backend: LinearBackend,
  ) {}

  /**
   * The whole forward of `ids` from position 0; with an empty `cache`, their keys and values are
   * written into it (a generation's prompt). A decoder's layers read the encoder's output `memory`.
   */
  async run(ids: readonly number[], control: ForwardControl = {}, cache?: KeyValueCache, memory?: EncoderMemory): Promise<ForwardResult> {
    if (cache && cache.length !== 0) throw new RangeError(`a whole forward starts at position 0, not after ${cache.length} cached positions`);
    return this.runFrom(await this.embed(ids), ids.length, control, cache, memory);
  }

  /** The layers and the final norm from embeddings x [n × hidden] made elsewhere (a picture's patches: patches.ts). */
  async runFrom(embedded: Float32Array, n: number, control: ForwardControl = {}, cache?: KeyValueCache, memory?: EncoderMemory): Promise<ForwardResult> {
    let x = embedded;
    const layers: LayerRecord[] = [];
    const bias = await this.selfBias(0, n, n);
    this.fullBias = bias && { n, data: bias };
    for (let i = 0; i < this.layout.layers.length; i++) {
      checkCancelled(control);
      const { output, record } = await this.layer(i, x, n, control, cache, undefined, { memory, bias });
      x = output;
      layers.push(record!); // a whole forward's layers always keep theirs
    }
    cache?.advance(n);
    return { layers, hidden: await this.output(x, n) };
  }

  /**
   * One new token at the position after `cache`'s: each product on its one row, its attention over
   * the cached keys and values (to which it adds its own), a decoder's cross-attention over the
   * encoder's output `memory`. Returns its final hidden state and its self-attention row in every
   * layer, [heads × positions] (the weights of the token over every position up to itself, as one
   * forward over the whole sequence would give them).
   */
  async step(id: number, cache: KeyValueCache, control: ForwardControl = {}, memory?: EncoderMemory): Promise<{ hidden: Float32Array; attention: Float32Array[] }> {
    let x = await this.embed([id], cache.length);
    const attention: Float32Array[] = [];
    const bias = await this.selfBias(cache.length, 1, cache.length + 1);
    for (let i = 0; i < this.layout.layers.length; i++) {
      checkCancelled(control);
      x = (await this.layer(i, x, 1, control, cache, attention, { memory, bias })).output;
    }
    cache.advance(1);
    return { hidden: await this.output(x, 1), attention };
  }

  /** The last layer's output x [n × hidden] after the final norm (and OPT's project_out). */
  private async output(x: Float32Array, n: number): Promise<Float32Array> {
    const normed = this.layout.finalNorm ? await this.norm(x, this.layout.finalNorm) : x;
    return this.layout.projectOut ? this.linear(normed, n, this.layout.projectOut) : normed;
  }

  /** The self-attention bias of the layers (T5's relative positions) for query rows at positions first… against `keys` keys, [heads × queries × keys]; undefined without one. */
  private async selfBias(first: number, queries: number, keys: number): Promise<Float32Array | undefined> {
    const relative = this.layout.relativeBias;
    const r = this.config.encoderDecoder?.relativePositions;
    if (!relative || !r) return undefined;
    const table = await this.weights.get(relative.table, [r.buckets, this.config.heads]);
    return relativeBias(table, this.config.heads, relative.bidirectional, r.buckets, r.maxDistance, first, queries, keys);
  }

  /** The input rows of `ids` at positions first…: token embeddings (scaled, projected), position and type rows (Marian's sinusoidal ones), the embedding norm. */
  private async embed(ids: readonly number[], first = 0): Promise<Float32Array> {
    const c = this.config;
    const { positionEmbeddings, typeEmbeddings, embeddingNorm } = this.layout;
    const tokenEmbeddings = this.weights.first(this.layout.tokenEmbeddings, ...(this.layout.tokenEmbeddingsAlso ?? [])) ?? this.layout.tokenEmbeddings;
    for (const id of ids) if (!Number.isInteger(id) || id < 0 || id >= c.vocab) throw new RangeError(`token id ${id} is outside the vocabulary (0…${c.vocab - 1})`);
    // Only the rows of the tokens present are read, not the whole table: each distinct token once
    // (the induction probe repeats every token), all reads under way at once.
    const distinct = [...new Set(ids)];
    const width = outputWidth(c);
    const rows = await Promise.all(distinct.map((id) => this.weights.rows(tokenEmbeddings, [c.vocab, width], id, 1)));
    const rowOf = new Map(distinct.map((id, i) => [id, rows[i]]));
    let x: Float32Array = new Float32Array(ids.length * width);
    for (const [r, id] of ids.entries()) x.set(rowOf.get(id)!, r * width);
    if (c.embeddingScale !== 1) {
      const scale = Math.fround(c.embeddingScale); // the models multiply by √hidden in their dtype
      for (let i = 0; i < x.length; i++) x[i] *= scale;
    }
    if (this.layout.projectIn) x = await this.linear(x, ids.length, this.layout.projectIn);
    if (positionEmbeddings) addInPlace(x, await this.positionRows(positionEmbeddings, ids, first));
    if (c.sinusoidalPositions) addInPlace(x, sinusoidalRows(first, ids.length, width));
    if (typeEmbeddings) addInPlace(x, gatherRows(await this.weights.rows(typeEmbeddings, [c.typeVocab, c.hidden], 0, 1), c.hidden, ids.map(() => 0)));
    return embeddingNorm ? this.norm(x, embeddingNorm) : x;
  }

  /**
   * Layer `index` on x [n × hidden]. With a cache, its keys and values go into it; with `stepRows`
   * too, the one new row attends over the cache and its weights go to stepRows[index] (no record
   * is kept: a generation's views come from one forward over the final sequence). A decoder layer
   * attends to the encoder's output `memory` too; `bias` is the self-attention's per-head bias.
   */
  private async layer(index: number, x: Float32Array, n: number, control: ForwardControl, cache?: KeyValueCache, stepRows?: Float32Array[], { memory, bias }: { memory?: EncoderMemory; bias?: Float32Array } = {}): Promise<{ output: Float32Array; record?: LayerRecord }> {
    const L = this.layout.layers[index];
    // A resident model's first run: the next layer's weights are read while this one computes.
    const next = this.layout.layers[index + 1];
    if (next) this.weights.prefetch(linearsOf(next).map((P) => `${P.name}.weight`));
    const input = L.attentionInputNorm ? await this.norm(x, L.attentionInputNorm) : x;
    const first = cache?.length ?? 0;
    const { Q, K, V } = await this.queriesKeysValues(index, input, n, true, first);
    cache?.write(index, K, V, n);
    const pools = stepRows ? undefined : new LayerPools(this.config.heads, n, n, this.config.causal);
    const attended = cache && stepRows ? this.attendCached(index, Q, cache, control, stepRows, bias) : await this.attend(index, 'self', Q, K, V, n, n, pools as LayerPools, control, bias);
    const attention = this.scaled(await this.layerScaled(await this.linear(attended, n, L.out), L.attentionScale));
    if (L.parallel) {
      // GPT-J, GPT-NeoX, Phi, StableLM: the MLP reads the block's input (its own norm, or the attention's), not the sum.
      checkCancelled(control);
      const mlp = this.scaled(await this.layerScaled(await this.mlp(L.mlpInputNorm ? await this.norm(x, L.mlpInputNorm) : input, n, L), L.mlpScale));
      return { output: addInPlace(addInPlace(mlp, attention), x), ...(pools ? { record: { input, Q, K, pools } } : {}) };
    }
    x = await this.residual(x, attention, L.postNorm, L.attentionOutputNorm);
    let cross: CrossRecord | undefined;
    if (L.cross) {
      if (!memory) throw new RangeError(`${this.config.modelType}'s decoder layer ${index} needs the encoder's output`);
      checkCancelled(control);
      const crossed = await this.crossAttention(index, L.cross, x, n, memory, control);
      x = await this.residual(x, crossed.output, L.postNorm, L.cross.outputNorm);
      cross = crossed.record;
    }
    checkCancelled(control);
    const mlpInput = L.mlpInputNorm ? await this.norm(x, L.mlpInputNorm) : x;
    const c = this.config;
    // A mixture of experts runs its router and chosen experts in place of the MLP (experts.ts).
    const mlp = L.experts && c.moe ? await mixtureOfExperts(this, mlpInput, n, L.experts, c.moe) : { output: await this.mlp(mlpInput, n, L) };
    x = await this.residual(x, this.scaled(await this.layerScaled(mlp.output, L.mlpScale)), L.postNorm, L.mlpOutputNorm);
    return { output: x, ...(pools ? { record: { input, Q, K, pools, ...('routing' in mlp ? { routing: mlp.routing } : {}), ...(cross ? { cross } : {}) } } : {}) };
  }

  /** A decoder layer's cross-attention on x [n × hidden]: its queries from x (normed, pre-LN), its keys and values the encoder output's, made once per layer. */
  private async crossAttention(index: number, X: CrossLayout, x: Float32Array, n: number, memory: EncoderMemory, control: ForwardControl): Promise<{ output: Float32Array; record: CrossRecord }> {
    const input = X.inputNorm ? await this.norm(x, X.inputNorm) : x;
    const Q = await this.linear(input, n, X.q);
    const { K, V } = await this.crossKeysValues(index, memory);
    const pools = new LayerPools(this.config.heads, n, memory.rows, false);
    const attended = await this.attend(index, 'cross', Q, K, V, n, memory.rows, pools, control);
    return { output: await this.linear(attended, n, X.out), record: { input, Q, K, pools, keys: memory.rows } };
  }

  /** Layer `index`'s cross-attention keys and values of the encoder's output (computed at its first use, then kept with the memory). */
  crossKeysValues(index: number, memory: EncoderMemory): Promise<{ K: Float32Array; V: Float32Array }> {
    const X = this.layout.layers[index].cross;
    if (!X) return Promise.reject(new RangeError(`layer ${index} has no cross-attention`));
    let made = memory.keysValues.get(index);
    if (!made) {
      made = (async () => ({ K: await this.linear(memory.states, memory.rows, X.k), V: await this.linear(memory.states, memory.rows, X.v) }))();
      memory.keysValues.set(index, made);
    }
    return made;
  }

  /** y [n × hidden] times a layer scale's [hidden] vector (DINOv2), in place; y itself without one. */
  private async layerScaled(y: Float32Array, scale: string | undefined): Promise<Float32Array> {
    if (!scale) return y;
    const width = this.config.hidden;
    const lambda = await this.weights.get(scale, [width]);
    for (let i = 0; i < y.length; i++) y[i] *= lambda[i % width];
    return y;
  }

  /** A sublayer's output times Granite's residual_multiplier (in place), before its residual add. */
  private scaled(y: Float32Array): Float32Array {
    const scale = this.config.residualScale;
    if (scale !== undefined && scale !== 1) for (let i = 0; i < y.length; i++) y[i] *= scale;
    return y;
  }

  /**
   * The learned position rows of the run's tokens: rows offset…offset + n − 1 (OPT's offset 2), or
   * RoBERTa's positions counted from padding_idx + 1 over the tokens that are not padding (a pad
   * token stays at padding_idx), as create_position_ids_from_input_ids numbers them.
   */
  private async positionRows(table: string, ids: readonly number[], first: number): Promise<Float32Array> {
    const c = this.config;
    const { offset, rows, paddingId } = c.positions ?? { offset: 0, rows: c.maxPositions };
    if (paddingId === undefined) return this.weights.rows(table, [rows, c.hidden], offset + first, ids.length);
    if (first !== 0) throw new RangeError('positions counted past padding (RoBERTa) start at the first token');
    let count = 0;
    const positions = ids.map((id) => (id === paddingId ? paddingId : paddingId + ++count));
    const last = Math.max(...positions);
    if (last >= rows) throw new RangeError(`the input needs position ${last} but the model has ${rows} position rows`);
    return gatherRows(await this.weights.rows(table, [rows, c.hidden], 0, last + 1), c.hidden, positions);
  }

  /** x + y, with the output norm after the sum (post-LN: BERT) or on y before it (Gemma 2/3). */
  private async residual(x: Float32Array, y: Float32Array, postNorm: boolean, outputNorm: NormLayout | undefined): Promise<Float32Array> {
    if (!outputNorm) return addInPlace(y, x);
    return postNorm ? this.norm(addInPlace(y, x), outputNorm) : addInPlace(await this.norm(y, outputNorm), x);
  }

  /** Q, K and V of a layer from its normed input of the n positions first…, Q and K as scored (q/k norm, then RoPE). */
  async queriesKeysValues(index: number, input: Float32Array, n: number, rotated = true, first = 0): Promise<{ Q: Float32Array; K: Float32Array; V: Float32Array }> {
    const c = this.config;
    const L = this.layout.layers[index];
    const qWidth = c.heads * c.headDim;
    const kvWidth = c.kvHeads * c.headDim;
    let Q: Float32Array, K: Float32Array, V: Float32Array;
    if ('fused' in L.qkv) {
      [Q, K, V] = await this.withLinearWeights(L.qkv.fused, (weights) => this.backend.matmulParts(input, n, weights, [qWidth, kvWidth, kvWidth]));
    } else {
      [Q, K, V] = [await this.linear(input, n, L.qkv.q), await this.linear(input, n, L.qkv.k), await this.linear(input, n, L.qkv.v)];
    }
    if (c.clipQkv !== undefined && !c.clipAfterQkNorms) for (const t of [Q, K, V]) clampInPlace(t, c.clipQkv);
    // Per-head norms: each head's vector is a row of width head_dim in the same storage (OLMo 2's span the whole projection).
    if (L.qNorm) Q = await this.norm(Q, L.qNorm);
    if (L.kNorm) K = await this.norm(K, L.kNorm);
    if (c.clipQkv !== undefined && c.clipAfterQkNorms) for (const t of [Q, K, V]) clampInPlace(t, c.clipQkv);
    const rope = c.attention[index].rope;
    if (rope && rotated) {
      Q = rotateHeads(Q, n, c.heads, c.headDim, rope, first);
      K = rotateHeads(K, n, c.kvHeads, c.headDim, rope, first);
    }
    return { Q, K, V };
  }

  /**
   * Every head's output side by side, [n × heads·head_dim], by the engine, each head's weights
   * pooled into `pools` as they are computed. Plain attention runs on the fast path in groups of
   * KV heads whose n×n steps fit MATERIALIZED_BYTES; softcap and windows are the reference
   * engine's modifiers (one head's n×n at a time).
   */
  private async attend(index: number, site: AttentionSite, Q: Float32Array, K: Float32Array, V: Float32Array, n: number, keys: number, pools: LayerPools, control: ForwardControl, bias?: Float32Array): Promise<Float32Array> {
    const c = this.config;
    const d = c.headDim;
    const v = matrix(keys, c.kvHeads * d, V);
    const whole: AttentionSpec = { Q: matrix(n, c.heads * d, Q), K: matrix(keys, c.kvHeads * d, K), V: v, options: this.attentionOptions(index, c.heads, c.kvHeads, site, keys - n) };
    // One query row (a generated token's cross-attention) is too little work for the compute
    // threads' hand-off: Marian's 6 layers spent more of a token waiting for them than computing.
    if (!bias && (n === 1 || referenceOnly(whole) !== undefined)) return forwardOutput(whole, control, (head, weights) => pools.add(head, weights.data)).data as Float32Array;
    const output = zeros(n, c.heads * d, 'float32');
    for (const { h0, kv0, kvCount } of this.headGroups(n, keys, bias !== undefined)) {
      const spec = this.groupSpec(index, site, Q, K, n, keys, kv0, kvCount, headColumns(v, kv0 * d, kvCount * d), bias);
      checkCancelled(control);
      const pass = await forwardFast(spec, true, { cancelFlag: control.cancelFlag, recycle: takeSpareMemory(), weightsOnly: true });
      if (pass) {
        pass.heads.forEach((head, i) => pools.add(h0 + i, head.weights.data));
        addColumns(output, pass.output, h0 * d);
        keepSpareMemory(pass.output); // read to the end above
      } else addColumns(output, forwardOutput(spec, control, (head, weights) => pools.add(h0 + head, weights.data)), h0 * d);
    }
    return output.data as Float32Array;
  }

  /**
   * A new token's attention over the cache (its own key and value already written): its query
   * row of every head by the engine's reference steps, the row placed last (causal bottom-right:
   * every cached key, the window counted back from the token, softcap as in the whole forward);
   * with a per-head `bias` (T5's relative positions, [heads × 1 × positions]), head by head, each
   * with its row as the additive mask. One row is too little work for the compute threads'
   * hand-off. Each head's weights go to rows[index], [heads × positions].
   */
  private attendCached(index: number, Q: Float32Array, cache: KeyValueCache, control: ForwardControl, rows: Float32Array[], bias?: Float32Array): Float32Array {
    const c = this.config;
    const { K, V } = cache.layer(index, 1);
    const weights = new Float32Array(c.heads * K.rows);
    const options: AttentionOptions = { ...this.attentionOptions(index, c.heads, c.kvHeads), causal: 'bottom-right' };
    rows[index] = weights;
    if (!bias) return forwardOutput({ Q: matrix(1, c.heads * c.headDim, Q), K, V, options }, control, (head, w) => weights.set(w.data, head * K.rows)).data as Float32Array;
    const d = c.headDim;
    const output = zeros(1, c.heads * d, 'float32');
    for (let h = 0; h < c.heads; h++) {
      const kv = Math.floor(h / (c.heads / c.kvHeads));
      const spec: AttentionSpec = { Q: columns(matrix(1, c.heads * d, Q), h * d, d), K: columns(K as Matrix, kv * d, d), V: columns(V as Matrix, kv * d, d), options: { ...options, heads: 1, kvHeads: 1 }, mask: headBias(bias, h, 1, K.rows) };
      addColumns(output, forwardOutput(spec, control, (_, w) => weights.set(w.data, h * K.rows)), h * d);
    }
    return output.data as Float32Array;
  }

  /**
   * The KV heads attended at once on n queries and `keys` keys (every head's weights within
   * MATERIALIZED_BYTES: GPT-2-small up to 2048 tokens in one group), with their first query head;
   * one at a time where each head has a bias of its own (its additive mask).
   */
  private *headGroups(n: number, keys: number, perHead: boolean): Generator<{ h0: number; kv0: number; kvCount: number }> {
    const c = this.config;
    const kvPerGroup = perHead ? 1 : attentionGroup(c, Math.max(n, keys)).kvHeads;
    for (let kv0 = 0; kv0 < c.kvHeads; kv0 += kvPerGroup) yield { h0: kv0 * (c.heads / c.kvHeads), kv0, kvCount: Math.min(kvPerGroup, c.kvHeads - kv0) };
  }

  /**
   * Layer `index`'s attention of KV heads kv0… (kvCount of them) and their query heads, reading
   * the layer's own Q [n × heads·head_dim] and K. `V` defaults to one zero column per KV head: the
   * weights do not depend on it, and a head_dim-wide V would double the work of recomputing them.
   */
  private groupSpec(index: number, site: AttentionSite, Q: Float32Array, K: Float32Array, n: number, keys: number, kv0: number, kvCount: number, V = zeros(keys, kvCount, 'float32'), bias?: Float32Array): AttentionSpec {
    const c = this.config;
    const d = c.headDim;
    const group = c.heads / c.kvHeads;
    return {
      Q: headColumns(matrix(n, c.heads * d, Q), kv0 * group * d, kvCount * group * d),
      K: headColumns(matrix(keys, c.kvHeads * d, K), kv0 * d, kvCount * d),
      V,
      options: this.attentionOptions(index, kvCount * group, kvCount, site, keys - n),
      ...(bias ? { mask: headBias(bias, kv0, n, keys) } : {}),
    };
  }

  /**
   * Every head's weights of layer `index`, recomputed from its record by the kernels that ran the
   * layer, a head group (attend's) at a time on the compute threads: `use` gets each group's first
   * head and its heads' weights, views valid only until it resolves (the next group reuses the
   * memory). A whole-stack analysis reads them so: GPT-2-small's 12 heads of 1024 tokens in ~50 ms,
   * against ~10 ms a head one by one on the worker (headWeights).
   */
  async eachHeadGroup(index: number, record: LayerRecord | CrossRecord, n: number, use: (first: number, heads: Float32Array[]) => Promise<void>, site: AttentionSite = 'self'): Promise<void> {
    const keys = 'keys' in record ? record.keys : n;
    const bias = site === 'self' ? this.fullBiasOf(n) : undefined;
    for (const { h0, kv0, kvCount } of this.headGroups(n, keys, bias !== undefined)) {
      const spec = this.groupSpec(index, site, record.Q, record.K, n, keys, kv0, kvCount, undefined, bias);
      const pass = referenceOnly(spec) === undefined ? await forwardFast(spec, true, { recycle: takeSpareMemory(), weightsOnly: true }) : undefined;
      if (!pass) {
        for (let h = h0; h < h0 + kvCount * (this.config.heads / this.config.kvHeads); h++) await use(h, [this.headWeights(index, h, record, n, site)]);
        continue;
      }
      try {
        await use(h0, pass.heads.map((head) => head.weights.data as Float32Array));
      } finally {
        keepSpareMemory(pass.output);
      }
    }
  }

  /**
   * The engine's options for layer `index`'s attention (RoPE is applied before, on Q and K): its
   * self-attention, causal when the model is (queries after `past` cached positions: aligned
   * bottom-right), or a decoder layer's cross-attention, which sees every source position.
   */
  attentionOptions(index: number, heads: number, kvHeads: number, site: AttentionSite = 'self', past = 0): AttentionOptions {
    const a: LayerAttention = this.config.attention[index];
    return {
      heads,
      kvHeads,
      score: 'scaled_dot',
      scale: a.scale,
      dtype: 'float32',
      ...(this.config.causal && site === 'self' ? { causal: past > 0 ? ('bottom-right' as const) : ('top-left' as const) } : {}),
      ...(a.window !== undefined ? { window: a.window } : {}),
      ...(a.softcap !== undefined ? { softcap: a.softcap } : {}),
    };
  }

  /** One head's weights [n × keys] from a layer's record (its self-attention's, or its cross-attention's), by the engine's own steps. */
  headWeights(index: number, head: number, record: LayerRecord | CrossRecord, n: number, site: AttentionSite = 'self'): Float32Array {
    const c = this.config;
    const keys = 'keys' in record ? record.keys : n;
    const kvHead = Math.floor(head / (c.heads / c.kvHeads));
    const K = columns(matrix(keys, c.kvHeads * c.headDim, record.K), kvHead * c.headDim, c.headDim);
    const bias = site === 'self' ? this.fullBiasOf(n) : undefined;
    const spec: AttentionSpec = {
      Q: columns(matrix(n, c.heads * c.headDim, record.Q), head * c.headDim, c.headDim),
      K,
      V: zeros(keys, 1, 'float32'), // V does not enter the weights (groupSpec)
      options: this.attentionOptions(index, 1, 1, site),
      ...(bias ? { mask: headBias(bias, head, n, keys) } : {}),
    };
    if (referenceOnly(spec) === undefined) {
      // The kernels that ran the layer, on this thread: the same numbers as the run's, in ~10 ms at 1024 tokens.
      const pass = forwardFastHere(spec, true, { recycle: takeSpareMemory(), weightsOnly: true });
      if (pass) {
        keepSpareMemory(pass.output);
        return pass.heads[0].weights.data.slice() as Float32Array;
      }
    }
    return headWeights(spec, 0).data as Float32Array;
  }

  /**
   * Row `query` of one head's weights [n] from a layer's record: that query's Q against every key,
   * by the engine's reference steps (n × head_dim products, not the head's n²): the picture's
   * overlays of every layer × head from one patch. Undefined where a row's mask depends on its
   * position (causal, a window, a position bias): the caller then takes the row from the whole head.
   */
  headRow(index: number, head: number, record: LayerRecord, n: number, query: number): Float32Array | undefined {
    const c = this.config;
    const options = this.attentionOptions(index, 1, 1);
    if (options.causal !== undefined || options.window !== undefined || this.fullBiasOf(n) !== undefined) return undefined;
    const width = c.heads * c.headDim;
    const kvHead = Math.floor(head / (c.heads / c.kvHeads));
    const spec: AttentionSpec = {
      Q: columns(matrix(1, width, record.Q.subarray(query * width, (query + 1) * width)), head * c.headDim, c.headDim),
      K: columns(matrix(n, c.kvHeads * c.headDim, record.K), kvHead * c.headDim, c.headDim),
      V: zeros(n, 1, 'float32'),
      options,
    };
    return headWeights(spec, 0).data as Float32Array;
  }

  /** x [n × L.in] through the linear layer L, then `activation` when given. */
  async linear(x: Float32Array, n: number, L: LinearLayout, activation?: Activation): Promise<Float32Array> {
    return this.withLinearWeights(L, (w) =>
      // A resident model's constant weight goes to the backend whole (its session keeps it pre-packed).
      w.constant && !activation ? this.backend.matmulParts(x, n, w, [L.out]).then(([y]) => y) : this.backend.matmul(x, w.weight, n, L.in, L.out, L.stored === 'out-in', w.bias, activation),
    );
  }

  /** An MLP (a layer's, or an expert's) on x [n × hidden], its weights read together into the forward's reused memory and run in one backend call. */
  mlp(x: Float32Array, n: number, L: MlpLayout): Promise<Float32Array> {
    return readBuffer.exclusive(async () => {
      // A fused gate_up (Phi-3, ModernBERT) is read once and cut in two.
      if (L.gate && L.gate.name === L.up.name) {
        const [[gate, up], down] = await Promise.all([this.fusedRowWeights([L.gate, L.up]), this.linearWeights(L.down)]);
        return this.backend.mlp(x, n, { up, gate, down, activation: this.config.activation });
      }
      const [up, gate, down] = await Promise.all([this.linearWeights(L.up), L.gate && this.linearWeights(L.gate), this.linearWeights(L.down)]);
      return this.backend.mlp(x, n, { up, gate, down, activation: this.config.activation });
    });
  }

  /**
   * MLPs of one kind (a mixture's chosen experts), each on its own rows of x ([Σ rows × in], the
   * parts' rows one after another), in one backend call; [Σ rows × out]. Their weights are read
   * into one of the two expert memories, in turn: called for the next group before this one ends,
   * the next group's reads and widening run while the backend computes this one.
   */
  mlps(x: Float32Array, parts: { rows: number; layout: MlpLayout }[]): Promise<Float32Array> {
    const buffer = expertReads[expertTurn++ % expertReads.length];
    const tensors = parts.flatMap(({ layout: L }) => [L.up, L.gate, L.down]).filter((P): P is LinearLayout => P !== undefined);
    const room = tensors.reduce((sum, P) => ((use) => ({ bytes: sum.bytes + use.bytes, values: sum.values + use.values }))(this.weights.readRoom(`${P.name}.weight`)), { bytes: 0, values: 0 });
    void buffer.reserve(room.bytes, room.values); // queued before the use below: its memory is made whole once, not grown tensor by tensor
    return buffer.exclusive(async () => {
      const widened = async (P: LinearLayout): Promise<LinearWeights> => ({
        weight: await this.weights.widened(`${P.name}.weight`, [P.out, P.in], buffer),
        in: P.in,
        out: P.out,
        transposed: true,
        ...(P.bias ? { bias: await this.weights.get(`${P.name}.bias`, [P.out]) } : {}),
      });
      const weights = await Promise.all(
        parts.map(async ({ rows, layout: L }) => {
          const [up, gate, down] = await Promise.all([widened(L.up), L.gate && widened(L.gate), widened(L.down)]);
          return { rows, weights: { up, ...(gate ? { gate } : {}), down, activation: this.config.activation } };
        }),
      );
      return this.backend.mlps(x, weights);
    });
  }

  /** Layers that are row ranges of one stored nn.Linear, from one read of it. */
  private async fusedRowWeights(parts: LinearLayout[]): Promise<LinearWeights[]> {
    const whole = parts[0];
    const total = whole.rows?.total ?? whole.out;
    const all = await this.linearWeights({ ...whole, out: total, rows: undefined });
    return parts.map((P) => {
      const start = P.rows?.start ?? 0;
      return { weight: all.weight.subarray(start * P.in, (start + P.out) * P.in), in: P.in, out: P.out, transposed: true, ...(all.bias ? { bias: all.bias.subarray(start, start + P.out) } : {}) };
    });
  }

  /** `use` of a linear layer's weights read into the forward's reused memory (no fresh pages to fault in): views valid only while it runs. */
  withLinearWeights<T>(L: LinearLayout, use: (weights: LinearWeights) => T | Promise<T>): Promise<T> {
    return readBuffer.exclusive(async () => use(await this.linearWeights(L)));
  }

  /**
   * x [n × width] times rows [first, first + count) of a [rows × width] table, transposed (+ bias):
   * an LM head's chunk; as a constant of a resident model (weights.ts's `linear` of those rows) when
   * `constant`.
   */
  async timesRows(x: Float32Array, n: number, table: string, shape: [number, number], first: number, count: number, bias: Float32Array | undefined, constant = false): Promise<Float32Array> {
    return readBuffer.exclusive(async () => {
      if (!constant) return this.backend.matmul(x, await this.weights.rows(table, shape, first, count, readBuffer), n, shape[1], count, true, bias);
      const w = await this.weights.linear(table, shape, readBuffer, { in: shape[1], out: count, transposed: true, ...(bias ? { bias } : {}) }, { first, count });
      return (await this.backend.matmulParts(x, n, w, [count]))[0];
    });
  }

  /** A linear layer's weights as views on the reused read buffer (inside its `exclusive`). */
  private async linearWeights(L: LinearLayout): Promise<LinearWeights> {
    if (L.rows) return (await this.fusedRowWeights([L]))[0];
    let bias = L.bias ? await this.weights.get(`${L.name}.bias`, [L.out]) : undefined;
    const shape = L.stored === 'in-out' ? [L.in, L.out] : [L.out, L.in];
    const layer = { in: L.in, out: L.out, transposed: L.stored === 'out-in' };
    // A resident model's weight goes to the backend as stored (a constant it keeps pre-packed).
    if (!L.perHead) return this.weights.linear(`${L.name}.weight`, shape, readBuffer, bias ? { ...layer, bias } : layer);
    // [heads, parts, width] outputs regrouped as [parts, heads, width]: q | k | v, each head's
    // columns in order; a constant's stored rows so too (GPT-NeoX's query_key_value was widened and
    // regrouped at every run: 130 ms of Pythia-160M's 540).
    const { heads, parts } = L.perHead;
    if (bias) bias = regroupRows(bias, heads, parts);
    return this.weights.linear(`${L.name}.weight`, shape, readBuffer, bias ? { ...layer, bias } : layer, undefined, (rows) => regroupRows(rows, heads, parts));
  }

  async norm(x: Float32Array, N: NormLayout): Promise<Float32Array> {
    const c = this.config;
    // OLMo's LayerNorm has no parameters at all.
    if (N.parameters === 'none') return norm(x, N.width, c.norm, c.normEps, new Float32Array(N.width).fill(1));
    // StableLM's per-head norms: one weight per head, side by side, taken by the rows in turn.
    if (N.perHead !== undefined) {
      const weights = await Promise.all(Array.from({ length: N.perHead }, (_, h) => this.weights.get(`${N.name}.norms.${h}.weight`, [N.width])));
      const weight = new Float32Array(N.perHead * N.width);
      weights.forEach((w, h) => weight.set(w, h * N.width));
      return norm(x, N.width, c.norm, c.normEps, weight);
    }
    // Old BERT checkpoints name LayerNorm's parameters gamma and beta.
    const weightName = this.weights.first(`${N.name}.weight`, `${N.name}.gamma`) ?? `${N.name}.weight`;
    const weight = await this.weights.get(weightName, [N.width]);
    const bias = c.norm === 'layer' && N.parameters !== 'weight' ? await this.weights.get(this.weights.first(`${N.name}.bias`, `${N.name}.beta`) ?? `${N.name}.bias`, [N.width]) : undefined;
    return norm(x, N.width, c.norm, c.normEps, weight, bias);
  }

  layerLayout(index: number): LayerLayout {
    return this.layout.layers[index];
  }

  /** The last full run's self-attention bias [heads × n × n] (T5's relative positions), undefined without one. */
  fullBiasOf(n: number): Float32Array | undefined {
    if (this.fullBias && this.fullBias.n !== n) throw new RangeError(`the run's position bias is for ${this.fullBias.n} tokens, not ${n}`);
    return this.fullBias?.data;
  }

  /** Set by each full run (not by a cached step): the bias its heads' weights are recomputed with. */
  private fullBias: { n: number; data: Float32Array } | undefined;
}

/** Head `head`'s bias [n × keys] of a [heads × n × keys] block, as the engine's additive mask. */
export function headBias(bias: Float32Array, head: number, n: number, keys: number): { kind: 'additive'; value: Matrix } {
  return { kind: 'additive', value: matrix(n, keys, bias.subarray(head * n * keys, (head + 1) * n * keys)) };
}

/**
 * Marian's fixed positions (MarianSinusoidalPositionalEmbedding) for positions first…first + n − 1:
 * column j < width/2 is sin(p / 10000^(2j/width)), column width/2 + j its cos (odd widths: the sin
 * half is the larger).
 */
export function sinusoidalRows(first: number, n: number, width: number): Float32Array {
  const sinCount = Math.ceil(width / 2);
  const out = new Float32Array(n * width);
  for (let r = 0; r < n; r++) {
    const p = first + r;
    for (let j = 0; j < width; j++) {
      // position_enc[p, k] = p / 10000^(2·⌊k/2⌋/width); the sin half takes its even columns, the cos half its odd ones.
      const k = j < sinCount ? 2 * j : 2 * (j - sinCount) + 1;
      const angle = p / 10000 ** ((2 * Math.floor(k / 2)) / width);
      out[r * width + j] = j < sinCount ? Math.sin(angle) : Math.cos(angle);
    }
  }
  return out;
}


export function matrix(rows: number, cols: number, data: Float32Array): Matrix {
  return { rows, cols, data };
}

/** A layer's linear layers. */
export function linearsOf(L: LayerLayout): LinearLayout[] {
  return ['fused' in L.qkv ? [L.qkv.fused] : [L.qkv.q, L.qkv.k, L.qkv.v], [L.out], L.gate ? [L.gate] : [], [L.up, L.down]].flat();
}

/** Columns [start, start + count) of m: m itself when that is all of it (no copy). */
function headColumns(m: Matrix, start: number, count: number): Matrix {
  return start === 0 && count === m.cols ? m : columns(m, start, count);
}

/**
 * RoPE on each head's columns of x [n × heads·headDim] at positions first…, as the engine's rotate
 * turns one head: its first rotaryDim columns turn (rotate-half, or GPT-J's interleaved pairs), at
 * the run's frequencies, then times the attention factor (yarn, longrope); the rest pass (partial
 * rotary). Each position's cos and sin are computed once for every head (head by head through
 * rotate, Qwen2.5-0.5B's 16 heads of Q and K recomputed them 16 times: 83 ms of a 128-token run).
 */
function rotateHeads(x: Float32Array, n: number, heads: number, headDim: number, rope: RopeFrequencies, first: number): Float32Array {
  // The frequencies of a run first + n long, as transformers picks them from the last position (longrope, dynamic NTK).
  const { inverseFrequencies: frequencies, attentionFactor } = ropeAt(rope, first + n);
  const width = rope.rotaryDim ?? headDim;
  const half = width / 2;
  if (width % 2 !== 0) throw new RangeError(`RoPE needs an even head width, not ${width}`);
  if (frequencies.length !== half) throw new RangeError(`RoPE has ${frequencies.length} frequencies for a head width of ${width}`);
  const cos = new Float64Array(n * half);
  const sin = new Float64Array(n * half);
  for (let r = 0; r < n; r++) {
    for (let k = 0; k < half; k++) {
      const angle = (first + r) * frequencies[k];
      cos[r * half + k] = Math.cos(angle);
      sin[r * half + k] = Math.sin(angle);
    }
  }
  const out = width === headDim ? new Float32Array(x.length) : x.slice();
  const [pairStep, pairOffset] = rope.interleaved ? [2, 1] : [1, half];
  for (let r = 0; r < n; r++) {
    for (let h = 0; h < heads; h++) {
      const start = (r * heads + h) * headDim;
      for (let k = 0; k < half; k++) {
        const a = start + pairStep * k;
        const b = a + pairOffset;
        const c = cos[r * half + k];
        const s = sin[r * half + k];
        const xa = x[a];
        const xb = x[b];
        out[a] = xa * c - xb * s;
        out[b] = xb * c + xa * s;
        if (attentionFactor !== 1) {
          out[a] *= attentionFactor;
          out[b] *= attentionFactor;
        }
      }
    }
  }
  return out;
}

/** The rows of an nn.Linear weight [heads·parts·width × in] (or its bias) stored per head, regrouped part by part. */
function regroupRows<T extends Float32Array | Uint8Array>(stored: T, heads: number, parts: number): T {
  const out = (stored instanceof Float32Array ? new Float32Array(stored.length) : new Uint8Array(stored.length)) as T;
  const block = stored.length / (heads * parts);
  for (let h = 0; h < heads; h++) for (let p = 0; p < parts; p++) out.set(stored.subarray((h * parts + p) * block, (h * parts + p + 1) * block), (p * heads + h) * block);
  return out;
}

function clampInPlace(x: Float32Array, limit: number): void {
  for (let i = 0; i < x.length; i++) x[i] = Math.min(limit, Math.max(-limit, x[i]));
}
