// The LinearBackend a model run uses by default: ONNX Runtime where it loads, the WebAssembly
// kernels otherwise, and ATTENTION_LENS_BACKEND=native|wasm forces one (as the attention runs do,
// engine/native/select.ts). Measured interleaved in one process on this project's 2-core machine
// (docs/native.md, "Linear layers"): ONNX Runtime's float32 products took 2–4× less CPU than the
// WebAssembly gemm for every product of a GPT-2-small forward (128–1024 tokens, QKV, projections,
// MLP), 4.7× less for the LM head's one-row product, and less for a fixture's tiny products too.
// So it takes every product when it is here; a product it fails on runs on the WebAssembly kernels
// and the WebAssembly kernels keep every later one (the run reports the reason once).
import { nativeLinearBackend } from '../engine/native/linear';
import { backendChoice } from '../engine/native/runtime';
import type { LinearBackend, LinearWeights, MlpPart, MlpWeights } from './backend';
import type { Activation } from './config';
import { WasmLinearBackend } from './wasmBackend';

export class ChosenLinearBackend implements LinearBackend {
  private native: LinearBackend | undefined;
  private readonly portable = new WasmLinearBackend();
  /** Why the native backend is not running the products, when it was wanted. */
  fallback: string | undefined;

  constructor() {
    if (backendChoice() === 'wasm') return;
    this.native = nativeLinearBackend();
    if (!this.native) this.fallback = 'the native backend (ONNX Runtime) is not available here';
  }

  get name(): string {
    return this.native ? this.native.name : this.portable.name;
  }

  matmul(a: Float32Array, b: Float32Array, m: number, k: number, n: number, bTransposed: boolean, bias?: Float32Array, activation?: Activation): Promise<Float32Array> {
    return this.onEither((backend) => backend.matmul(a, b, m, k, n, bTransposed, bias, activation));
  }

  matmulParts(x: Float32Array, m: number, w: LinearWeights, widths: number[]): Promise<Float32Array[]> {
    return this.onEither((backend) => backend.matmulParts(x, m, w, widths), [w]);
  }

  mlp(x: Float32Array, m: number, weights: MlpWeights): Promise<Float32Array> {
    return this.onEither((backend) => backend.mlp(x, m, weights), [weights.up, weights.gate, weights.down]);
  }

  mlps(x: Float32Array, parts: MlpPart[]): Promise<Float32Array> {
    return this.onEither((backend) => backend.mlps(x, parts));
  }

  /** `compute` on the native backend while it works; on the portable one from its first failure on. */
  private async onEither<T>(compute: (backend: LinearBackend) => Promise<T>, weights: (LinearWeights | undefined)[] = []): Promise<T> {
    if (this.native) {
      try {
        return await compute(this.native);
      } catch (error) {
        this.fallback = `the native backend (ONNX Runtime) failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
        this.native.dispose();
        this.native = undefined;
        // Its resident model's constants go with it: the rest of the run reads its weights as it goes.
        for (const w of weights) w?.constant?.model.release();
      }
    }
    // Weights the native backend held are read again for the WebAssembly kernels.
    for (const w of weights) if (w?.constant) await w.constant.load?.();
    return compute(this.portable);
  }

  dispose(): void {
    this.native?.dispose();
    this.portable.dispose();
  }
}
