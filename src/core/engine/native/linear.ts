// The whole-model forward's linear layers on ONNX Runtime: C = A·B (+ bias) as one MatMul [+ Add]
// graph per kind of product (B transposed or not, bias or not); the sizes are symbolic, so one
// cached session serves every layer of that kind.
import type * as Ort from 'onnxruntime-node';
import type { LinearBackend } from '../../model/backend';
import { Graph } from './graph';
import { nativeRuntime, releaseSessions, sessionFor } from './runtime';

const KEY = 'linear:';

function linearGraph(bTransposed: boolean, bias: boolean): Graph {
  const g = new Graph();
  const a = g.input('a', 'float32', ['m', 'k']);
  const b = g.input('b', 'float32', bTransposed ? ['n', 'k'] : ['k', 'n']);
  // ONNX Runtime folds the transpose into its GEMM's packing (no copy of B is made here).
  const product = g.op('MatMul', [a, bTransposed ? g.op('Transpose', [b], { perm: [1, 0] }) : b]);
  g.output('c', bias ? g.op('Add', [product, g.input('bias', 'float32', ['n'])]) : product, 'float32', ['m', 'n']);
  return g;
}

export class NativeLinearBackend implements LinearBackend {
  readonly name = 'onnxruntime';

  constructor(private readonly ort: typeof Ort) {}

  async matmul(a: Float32Array, b: Float32Array, m: number, k: number, n: number, bTransposed: boolean, bias?: Float32Array): Promise<Float32Array> {
    if (a.length !== m * k || b.length !== k * n || (bias && bias.length !== n)) {
      throw new RangeError(`matmul: A is ${a.length} numbers for ${m}×${k}, B ${b.length} for ${bTransposed ? `${n}×${k}` : `${k}×${n}`}${bias ? `, bias ${bias.length} for ${n}` : ''}`);
    }
    const session = await sessionFor(this.ort, `${KEY}${bTransposed}:${Boolean(bias)}`, () => linearGraph(bTransposed, Boolean(bias)));
    const feeds: Record<string, Ort.Tensor> = {
      a: new this.ort.Tensor('float32', a, [m, k]),
      b: new this.ort.Tensor('float32', b, bTransposed ? [n, k] : [k, n]),
    };
    if (bias) feeds.bias = new this.ort.Tensor('float32', bias, [n]);
    const { c } = await session.run(feeds);
    return c.data as Float32Array;
  }

  dispose(): void {
    void releaseSessions(KEY);
  }
}

/** The backend on ONNX Runtime, or undefined where it cannot load (the caller keeps the WebAssembly one). */
export function nativeLinearBackend(): NativeLinearBackend | undefined {
  const runtime = nativeRuntime();
  return runtime.ok ? new NativeLinearBackend(runtime.ort) : undefined;
}
