// The whole-model forward pass, one walk over a ModelLayout for every architecture: embeddings,
// then per layer norm → Q/K/V (LinearBackend) → per-head q/k norm → RoPE (the engine's rotate)
// → attention (the engine: ONNX Runtime's graph or the fast path's online softmax, or the
// reference for softcap and windows) → output projection → residual → MLP. A layer's weights are
// read when it runs and dropped after. Each layer keeps its normed input and its Q and K as
// scored, so any head's weights can be recomputed on demand and any head opened step by step.
import { columns, addColumns, zeros } from '../engine/kernels';
import { forwardOutput, headWeights, checkCancelled } from '../engine/attention';
import { referenceOnly } from '../engine/fast/index';
import { attentionOutputOnBackend } from '../engine/native/select';
import { rotate } from '../engine/variants';
import type { AttentionOptions, AttentionSpec, Matrix } from '../types';
import type { LinearBackend } from './backend';
import type { LayerAttention, ModelConfig } from './config';
import type { LayerLayout, LinearLayout, ModelLayout, NormLayout } from './layout';
import { activate, addInPlace, gated, gatherRows, norm } from './ops';
import { ReadBuffer, type Weights } from './weights';

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
}

export interface ForwardResult {
  layers: LayerRecord[];
  /** The last layer's output after the final norm, [n × hidden]. */
  hidden: Float32Array;
}

export class ModelForward {
  /** Where the products' weights are read, each consumed before the next is read. */
  private readonly readBuffer = new ReadBuffer();

  constructor(
    readonly config: ModelConfig,
    readonly layout: ModelLayout,
    readonly weights: Weights,
    readonly backend: LinearBackend,
  ) {}

  async run(ids: readonly number[], control: ForwardControl = {}): Promise<ForwardResult> {
    let x = await this.embed(ids);
    const layers: LayerRecord[] = [];
    for (let i = 0; i < this.layout.layers.length; i++) {
      checkCancelled(control);
      const { output, record } = await this.layer(i, x, ids.length, control);
      x = output;
      layers.push(record);
    }
    const hidden = this.layout.finalNorm ? await this.norm(x, this.layout.finalNorm) : x;
    return { layers, hidden };
  }

  private async embed(ids: readonly number[]): Promise<Float32Array> {
    const c = this.config;
    const { tokenEmbeddings, positionEmbeddings, typeEmbeddings, embeddingNorm } = this.layout;
    for (const id of ids) if (!Number.isInteger(id) || id < 0 || id >= c.vocab) throw new RangeError(`token id ${id} is outside the vocabulary (0…${c.vocab - 1})`);
    // Only the rows of the tokens present are read, not the whole table.
    const x = new Float32Array(ids.length * c.hidden);
    for (const [r, id] of ids.entries()) x.set(await this.weights.rows(tokenEmbeddings, [c.vocab, c.hidden], id, 1), r * c.hidden);
    if (c.embeddingScale !== 1) {
      const scale = Math.fround(c.embeddingScale); // the models multiply by √hidden in their dtype
      for (let i = 0; i < x.length; i++) x[i] *= scale;
    }
    if (positionEmbeddings) addInPlace(x, await this.weights.rows(positionEmbeddings, [c.maxPositions, c.hidden], 0, ids.length));
    if (typeEmbeddings) addInPlace(x, gatherRows(await this.weights.rows(typeEmbeddings, [c.typeVocab, c.hidden], 0, 1), c.hidden, ids.map(() => 0)));
    return embeddingNorm ? this.norm(x, embeddingNorm) : x;
  }

  private async layer(index: number, x: Float32Array, n: number, control: ForwardControl): Promise<{ output: Float32Array; record: LayerRecord }> {
    const L = this.layout.layers[index];
    const input = L.attentionInputNorm ? await this.norm(x, L.attentionInputNorm) : x;
    const { Q, K, V } = await this.queriesKeysValues(index, input, n);
    const attended = await this.attend(index, Q, K, V, n, control);
    x = await this.residual(x, await this.linear(attended, n, L.out), L.postNorm, L.attentionOutputNorm);
    checkCancelled(control);
    const mlpInput = L.mlpInputNorm ? await this.norm(x, L.mlpInputNorm) : x;
    const up = await this.linear(mlpInput, n, L.up);
    const hidden = L.gate ? gated(await this.linear(mlpInput, n, L.gate), up, this.config.activation) : activate(up, this.config.activation);
    x = await this.residual(x, await this.linear(hidden, n, L.down), L.postNorm, L.mlpOutputNorm);
    return { output: x, record: { input, Q, K } };
  }

  /** x + y, with the output norm after the sum (post-LN: BERT) or on y before it (Gemma 2/3). */
  private async residual(x: Float32Array, y: Float32Array, postNorm: boolean, outputNorm: NormLayout | undefined): Promise<Float32Array> {
    if (!outputNorm) return addInPlace(y, x);
    return postNorm ? this.norm(addInPlace(y, x), outputNorm) : addInPlace(await this.norm(y, outputNorm), x);
  }

  /** Q, K and V of a layer from its normed input, Q and K as scored (q/k norm, then RoPE). */
  async queriesKeysValues(index: number, input: Float32Array, n: number, rotated = true): Promise<{ Q: Float32Array; K: Float32Array; V: Float32Array }> {
    const c = this.config;
    const L = this.layout.layers[index];
    const qWidth = c.heads * c.headDim;
    const kvWidth = c.kvHeads * c.headDim;
    let Q: Float32Array, K: Float32Array, V: Float32Array;
    if ('fused' in L.qkv) {
      const qkv = matrix(n, qWidth + 2 * kvWidth, await this.linear(input, n, L.qkv.fused));
      [Q, K, V] = [columns(qkv, 0, qWidth), columns(qkv, qWidth, kvWidth), columns(qkv, qWidth + kvWidth, kvWidth)].map((m) => m.data as Float32Array);
    } else {
      [Q, K, V] = [await this.linear(input, n, L.qkv.q), await this.linear(input, n, L.qkv.k), await this.linear(input, n, L.qkv.v)];
    }
    // Per-head norms: each head's vector is a row of width head_dim in the same storage.
    if (L.qNorm) Q = await this.norm(Q, L.qNorm);
    if (L.kNorm) K = await this.norm(K, L.kNorm);
    const rope = c.attention[index].rope;
    if (rope && rotated) {
      Q = rotateHeads(Q, n, c.heads, c.headDim, rope.inverseFrequencies);
      K = rotateHeads(K, n, c.kvHeads, c.headDim, rope.inverseFrequencies);
    }
    return { Q, K, V };
  }

  /** Every head's output side by side, [n × heads·head_dim], by the engine. */
  private async attend(index: number, Q: Float32Array, K: Float32Array, V: Float32Array, n: number, control: ForwardControl): Promise<Float32Array> {
    const c = this.config;
    const spec: AttentionSpec = {
      Q: matrix(n, c.heads * c.headDim, Q),
      K: matrix(n, c.kvHeads * c.headDim, K),
      V: matrix(n, c.kvHeads * c.headDim, V),
      options: this.attentionOptions(index, c.heads, c.kvHeads),
    };
    // Plain attention goes to the backend that wins (ONNX Runtime's one graph, or the fast path's
    // online softmax; no n×n kept); softcap and windows are the reference engine's modifiers.
    if (referenceOnly(spec) === undefined) return Float32Array.from((await attentionOutputOnBackend(spec, control)).output.data);
    return forwardOutput(spec, control).data as Float32Array;
  }

  /** The engine's options for layer `index`'s attention (RoPE is applied before, on Q and K). */
  attentionOptions(index: number, heads: number, kvHeads: number): AttentionOptions {
    const a: LayerAttention = this.config.attention[index];
    return {
      heads,
      kvHeads,
      score: 'scaled_dot',
      scale: a.scale,
      dtype: 'float32',
      ...(this.config.causal ? { causal: 'top-left' as const } : {}),
      ...(a.window !== undefined ? { window: a.window } : {}),
      ...(a.softcap !== undefined ? { softcap: a.softcap } : {}),
    };
  }

  /** One head's weights [n × n] from a layer's record, by the engine's own steps. */
  headWeights(index: number, head: number, record: LayerRecord, n: number): Float32Array {
    const c = this.config;
    const kvHead = Math.floor(head / (c.heads / c.kvHeads));
    const K = columns(matrix(n, c.kvHeads * c.headDim, record.K), kvHead * c.headDim, c.headDim);
    const spec: AttentionSpec = {
      Q: columns(matrix(n, c.heads * c.headDim, record.Q), head * c.headDim, c.headDim),
      K,
      V: K, // V does not enter the weights
      options: this.attentionOptions(index, 1, 1),
    };
    return headWeights(spec, 0).data as Float32Array;
  }

  async linear(x: Float32Array, n: number, L: LinearLayout): Promise<Float32Array> {
    return this.readBuffer.exclusive(async () => {
      const { weight, bias } = await this.linearWeights(L, this.readBuffer);
      return this.backend.matmul(x, weight, n, L.in, L.out, L.stored === 'out-in', bias);
    });
  }

  /** x [n × width] times rows [first, first + count) of a [rows × width] table, transposed (+ bias): an LM head's chunk. */
  async timesRows(x: Float32Array, n: number, table: string, shape: [number, number], first: number, count: number, bias?: Float32Array): Promise<Float32Array> {
    return this.readBuffer.exclusive(async () => this.backend.matmul(x, await this.weights.rows(table, shape, first, count, this.readBuffer), n, shape[1], count, true, bias));
  }

  /** A linear layer's weights: fresh arrays, or views on `buffer` (inside its `exclusive`). */
  async linearWeights(L: LinearLayout, buffer?: ReadBuffer): Promise<{ weight: Float32Array; bias?: Float32Array }> {
    const weight = await this.weights.get(`${L.name}.weight`, L.stored === 'in-out' ? [L.in, L.out] : [L.out, L.in], buffer);
    return L.bias ? { weight, bias: await this.weights.get(`${L.name}.bias`, [L.out]) } : { weight };
  }

  async norm(x: Float32Array, N: NormLayout): Promise<Float32Array> {
    const c = this.config;
    // Old BERT checkpoints name LayerNorm's parameters gamma and beta.
    const weightName = this.weights.first(`${N.name}.weight`, `${N.name}.gamma`) ?? `${N.name}.weight`;
    const weight = await this.weights.get(weightName, [N.width]);
    const bias = c.norm === 'layer' ? await this.weights.get(this.weights.first(`${N.name}.bias`, `${N.name}.beta`) ?? `${N.name}.bias`, [N.width]) : undefined;
    return norm(x, N.width, c.norm, c.normEps, weight, bias);
  }

  layerLayout(index: number): LayerLayout {
    return this.layout.layers[index];
  }
}

export function matrix(rows: number, cols: number, data: Float32Array): Matrix {
  return { rows, cols, data };
}

/** RoPE (rotate-half) on each head's columns of x [n × heads·headDim], by the engine's rotate. */
function rotateHeads(x: Float32Array, n: number, heads: number, headDim: number, frequencies: Float64Array): Float32Array {
  const whole = matrix(n, heads * headDim, x);
  const out = zeros(n, heads * headDim, 'float32');
  for (let h = 0; h < heads; h++) {
    addColumns(out, rotate(columns(whole, h * headDim, headDim), { base: 0, layout: 'half', frequencies }, 0, 'float32'), h * headDim);
  }
  return out.data as Float32Array;
}
