// The whole-model forward's linear layers on ONNX Runtime: C = A·B (+ bias) as one MatMul [+ Add]
// graph per kind of product (B transposed or not, bias or not); the sizes are symbolic, so one
// cached session serves every layer of that kind.
import type * as Ort from 'onnxruntime-node';
import type { LinearBackend } from '../../model/backend';
import type { Activation } from '../../model/config';
import { Graph } from './graph';
import { backendChoice, nativeRuntime, releaseSessions, sessionFor } from './runtime';

const KEY = 'linear:';

function linearGraph(bTransposed: boolean, bias: boolean, activation: Activation | undefined): Graph {
  const g = new Graph();
  const a = g.input('a', 'float32', ['m', 'k']);
  const b = g.input('b', 'float32', bTransposed ? ['n', 'k'] : ['k', 'n']);
  // ONNX Runtime folds the transpose into its GEMM's packing (no copy of B is made here).
  const product = g.op('MatMul', [a, bTransposed ? g.op('Transpose', [b], { perm: [1, 0] }) : b]);
  const biased = bias ? g.op('Add', [product, g.input('bias', 'float32', ['n'])]) : product;
  g.output('c', activation ? activated(g, biased, activation) : biased, 'float32', ['m', 'n']);
  return g;
}

/**
 * The activation as ONNX's elementwise ops, which ONNX Runtime runs vectorised: in JavaScript, by
 * Math.exp, GPT-2-small's MLP activations cost 23 ns per number, ~440 ms of a 512-token forward.
 * The formulas are ops.ts's.
 */
function activated(g: Graph, x: string, activation: Activation): string {
  const scalar = (value: number): string => g.constant('float32', [value], []);
  switch (activation) {
    case 'gelu-tanh': {
      // 0.5·x·(1 + tanh u) = x·σ(2u), u = √(2/π)·(x + 0.044715·x³)
      const cubed = g.op('Mul', [g.op('Mul', [x, x]), x]);
      const inner = g.op('Add', [x, g.op('Mul', [cubed, scalar(0.044715)])]);
      return g.op('Mul', [x, g.op('Sigmoid', [g.op('Mul', [inner, scalar(2 * Math.sqrt(2 / Math.PI))])])]);
    }
    case 'gelu-erf':
      // 0.5·x·(1 + erf(x/√2))
      return g.op('Mul', [g.op('Mul', [x, scalar(0.5)]), g.op('Add', [g.op('Erf', [g.op('Mul', [x, scalar(Math.SQRT1_2)])]), scalar(1)])]);
    case 'silu':
      return g.op('Mul', [x, g.op('Sigmoid', [x])]);
  }
}

/**
 * Products under way, from asking for their session to their answer. The sessions are shared by
 * every backend (one per kind of product), so a dispose releases them only once none is under way:
 * a run that released them while another run was in a product made that product fail, and the
 * rest of that forward fall back to WebAssembly (a different rounding, and slower). A run between
 * two products just makes its next session again (2–12 ms).
 */
let productsUnderWay = 0;
let releaseWhenIdle = false;

function releaseLinearSessions(): void {
  releaseWhenIdle = false;
  void releaseSessions(KEY);
}

export class NativeLinearBackend implements LinearBackend {
  readonly name = 'onnxruntime';

  constructor(private readonly ort: typeof Ort) {}

  async matmul(a: Float32Array, b: Float32Array, m: number, k: number, n: number, bTransposed: boolean, bias?: Float32Array, activation?: Activation): Promise<Float32Array> {
    if (a.length !== m * k || b.length !== k * n || (bias && bias.length !== n)) {
      throw new RangeError(`matmul: A is ${a.length} numbers for ${m}×${k}, B ${b.length} for ${bTransposed ? `${n}×${k}` : `${k}×${n}`}${bias ? `, bias ${bias.length} for ${n}` : ''}`);
    }
    productsUnderWay++;
    try {
      const session = await sessionFor(this.ort, `${KEY}${bTransposed}:${Boolean(bias)}:${activation ?? ''}`, () => linearGraph(bTransposed, Boolean(bias), activation));
      const feeds: Record<string, Ort.Tensor> = {
        a: new this.ort.Tensor('float32', a, [m, k]),
        b: new this.ort.Tensor('float32', b, bTransposed ? [n, k] : [k, n]),
      };
      if (bias) feeds.bias = new this.ort.Tensor('float32', bias, [n]);
      const { c } = await session.run(feeds);
      return c.data as Float32Array;
    } finally {
      if (--productsUnderWay === 0 && releaseWhenIdle) releaseLinearSessions();
    }
  }

  /** Releases the sessions (they keep ONNX Runtime's memory arena), once no product is under way. */
  dispose(): void {
    if (productsUnderWay === 0) releaseLinearSessions();
    else releaseWhenIdle = true;
  }
}

/**
 * Loads ONNX Runtime and starts its environment with a 1 × 1 product: a thread's first session
 * costs ~120 ms, later ones 2–12 ms, even after every session was released. Nothing where the
 * WebAssembly backend is forced, or ONNX Runtime cannot load or fails (the run that needs it falls
 * back, and says why).
 */
export async function warmNativeLinear(): Promise<void> {
  if (backendChoice() === 'wasm') return;
  const backend = nativeLinearBackend();
  try {
    await backend?.matmul(new Float32Array(1), new Float32Array(1), 1, 1, 1, false);
  } catch {
    // the run's to report
  } finally {
    backend?.dispose();
  }
}

/** The backend on ONNX Runtime, or undefined where it cannot load (the caller keeps the WebAssembly one). */
export function nativeLinearBackend(): NativeLinearBackend | undefined {
  const runtime = nativeRuntime();
  return runtime.ok ? new NativeLinearBackend(runtime.ort) : undefined;
}
