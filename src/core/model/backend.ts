// What a whole-model forward needs from a compute backend: the linear layers' products. The
// WebAssembly kernels (portable) and a native backend (ONNX Runtime's CPU provider, where the
// platform has binaries) both implement it; the engine picks by measurement and falls back
// silently (design.md §4, "two backends behind one fast path").
import type { Activation } from './config';

export interface LinearBackend {
  /** Shown in logs, the status bar and the bench: 'wasm', 'onnxruntime', 'reference'. */
  readonly name: string;
  /**
   * C[m × n] = A[m × k] · B, float32, row-major. B is [k × n] when `bTransposed` is false
   * (GPT-2's Conv1D, stored [in, out]) and [n × k] when true (nn.Linear's [out, in]).
   * `bias` (length n) is added to every row when given, then `activation` applied to every entry.
   */
  matmul(a: Float32Array, b: Float32Array, m: number, k: number, n: number, bTransposed: boolean, bias?: Float32Array, activation?: Activation): Promise<Float32Array>;
  /** Releases threads and native sessions. */
  dispose(): void;
}
