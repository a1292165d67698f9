// What a whole-model forward needs from a compute backend: the linear layers' products, one by
// one, cut into parts by columns, or a whole MLP at once. The WebAssembly kernels (portable) and a
// native backend (ONNX Runtime's CPU provider, where the platform has binaries) both implement it;
// the engine picks by measurement and falls back silently (design.md §4, "two backends behind one
// fast path").
import { columns } from '../engine/kernels';
import type { Activation } from './config';
import { multiplyInPlace } from './ops';
import type { TensorDType } from '../parse/tensors/tensor';
import type { ResidentModel } from './resident';

/**
 * A weight that stays the same for as long as its model is resident (resident.ts): a backend may
 * keep what it makes of it (ONNX Runtime: a session holding it pre-packed) under `key`, and tell
 * the model so (`model.hold`), until the model is let go.
 */
export interface ConstantWeight {
  /** Unique per resident model and tensor. */
  key: string;
  dtype: TensorDType;
  /** As stored ([out × in] for nn.Linear, [in × out] for Conv1D). */
  shape: number[];
  /** The stored bytes, when the backend does not hold the weight yet: on the run's reused memory, valid during the product's call only. */
  stored?: Uint8Array;
  /** The stored bytes read again into memory of their own (a session made after the call). */
  read: () => Promise<Uint8Array>;
  /** The stored rows put in the product's order (weights.ts's Arrange), when they are not in it. */
  arrange?: (stored: Uint8Array) => Uint8Array;
  model: ResidentModel;
  /** Makes `weight` readable when the stored bytes are not here (a backend that held it failed). */
  load?: () => Promise<void>;
}

/** A linear layer's weight B as stored, [in × out] (GPT-2's Conv1D) or [out × in] when `transposed` (nn.Linear), and its bias. */
export interface LinearWeights {
  weight: Float32Array;
  in: number;
  out: number;
  transposed: boolean;
  bias?: Float32Array;
  /** Set on a resident model's weights: then `weight` is widened only when read. */
  constant?: ConstantWeight;
}

/** A transformer block's MLP: down(act(x·up)), or down(act(x·gate) ⊙ x·up) when gated (SwiGLU, GeGLU). */
export interface MlpWeights {
  up: LinearWeights;
  gate?: LinearWeights;
  down: LinearWeights;
  activation: Activation;
}

/** One MLP of an `mlps` call and how many of x's rows are its own. */
export interface MlpPart {
  rows: number;
  weights: MlpWeights;
}

export interface LinearBackend {
  /** Shown in logs, the status bar and the bench: 'wasm', 'onnxruntime', 'reference'. */
  readonly name: string;
  /**
   * C[m × n] = A[m × k] · B, float32, row-major. B is [k × n] when `bTransposed` is false
   * (GPT-2's Conv1D, stored [in, out]) and [n × k] when true (nn.Linear's [out, in]).
   * `bias` (length n) is added to every row when given, then `activation` applied to every entry.
   */
  matmul(a: Float32Array, b: Float32Array, m: number, k: number, n: number, bTransposed: boolean, bias?: Float32Array, activation?: Activation): Promise<Float32Array>;
  /**
   * x [m × w.in] · w's B (+ bias), its columns cut into parts of `widths` (summing to w.out), each
   * [m × width] in an array of its own: GPT-2's fused c_attn into Q, K and V, with no copy of the
   * whole product made in JavaScript.
   */
  matmulParts(x: Float32Array, m: number, w: LinearWeights, widths: number[]): Promise<Float32Array[]>;
  /**
   * The MLP of x [m × up.in] in one call, [m × down.out]: ONNX Runtime runs it as one graph, so its
   * [m × ffn] intermediate never comes back to JavaScript as fresh memory (a page fault per 4 KiB:
   * GPT-2-small's at 512 tokens took 15–25 ms a layer here).
   */
  mlp(x: Float32Array, m: number, weights: MlpWeights): Promise<Float32Array>;
  /**
   * Several MLPs of one kind in one call, each on its own rows of x: x holds parts[0].rows rows,
   * then parts[1].rows, … ([Σ rows × in]), and the result each part's outputs in that order
   * ([Σ rows × out]). A mixture's chosen experts, each on its tokens only: ONNX Runtime runs a
   * group of them as one graph, one hand-off to its threads instead of one per expert.
   */
  mlps(x: Float32Array, parts: MlpPart[]): Promise<Float32Array>;
  /** Releases threads and native sessions. */
  dispose(): void;
}

/** The MLP as the backend's products, one after another (a backend with nothing better to do). */
export async function mlpByProducts(backend: LinearBackend, x: Float32Array, m: number, { up, gate, down, activation }: MlpWeights): Promise<Float32Array> {
  const product = (a: Float32Array, w: LinearWeights, act?: Activation) => backend.matmul(a, w.weight, m, w.in, w.out, w.transposed, w.bias, act);
  const hidden = gate ? multiplyInPlace(await product(x, gate, activation), await product(x, up)) : await product(x, up, activation);
  return product(hidden, down);
}

/** The MLPs as the backend's `mlp`, one after another, their outputs one after another. */
export async function mlpsOneByOne(backend: LinearBackend, x: Float32Array, parts: MlpPart[]): Promise<Float32Array> {
  const width = parts[0].weights.up.in;
  const outputs: Float32Array[] = [];
  let row = 0;
  for (const { rows, weights } of parts) {
    outputs.push(await backend.mlp(x.subarray(row * width, (row + rows) * width), rows, weights));
    row += rows;
  }
  const out = new Float32Array(outputs.reduce((sum, y) => sum + y.length, 0));
  let at = 0;
  for (const y of outputs) {
    out.set(y, at);
    at += y.length;
  }
  return out;
}

/** The product's parts as the backend's product, then its columns copied out part by part. */
export async function partsByProduct(backend: LinearBackend, x: Float32Array, m: number, w: LinearWeights, widths: number[]): Promise<Float32Array[]> {
  const product = { rows: m, cols: w.out, data: await backend.matmul(x, w.weight, m, w.in, w.out, w.transposed, w.bias) };
  let start = 0;
  return widths.map((width) => columns(product, (start += width) - width, width).data as Float32Array);
}
