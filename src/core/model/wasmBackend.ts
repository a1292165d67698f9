// The portable LinearBackend: the fast path's WebAssembly SIMD kernels (pack, pack_rows, gemm of
// kernel.h) on the fast path's thread pool, float32. One run memory is kept and reused from one
// product to the next (fresh pages cost a fault each); products are queued, one at a time.
// A product too large for WebAssembly's 4 GiB runs on a cache-blocked JavaScript loop.
import type { Matrix } from '../types';
import { Arena, ArenaPlan, MAX_BYTES } from '../engine/fast/arena';
import { threadPool } from '../engine/fast/pool';
import { type LinearBackend, type LinearWeights, mlpByProducts, type MlpPart, mlpsOneByOne, type MlpWeights, partsByProduct } from './backend';
import type { Activation } from './config';
import { activate } from './ops';

/** Columns per packed panel (NB) and rows per packed quad (MR) of kernel.h's float32 build. */
const PANEL = 8;
const QUAD = 4;

export class WasmLinearBackend implements LinearBackend {
  readonly name = 'wasm';
  /** A matrix on the last product's memory: the next product reuses that memory when it fits. */
  private recycle?: Matrix;
  private queue: Promise<unknown> = Promise.resolve();

  matmul(a: Float32Array, b: Float32Array, m: number, k: number, n: number, bTransposed: boolean, bias?: Float32Array, activation?: Activation): Promise<Float32Array> {
    const result = this.queue.then(async () => {
      const c = await this.product(a, b, m, k, n, bTransposed, bias);
      return activation ? activate(c, activation) : c;
    });
    this.queue = result.catch(() => undefined);
    return result;
  }

  matmulParts(x: Float32Array, m: number, w: LinearWeights, widths: number[]): Promise<Float32Array[]> {
    return partsByProduct(this, x, m, w, widths);
  }

  mlp(x: Float32Array, m: number, weights: MlpWeights): Promise<Float32Array> {
    return mlpByProducts(this, x, m, weights);
  }

  mlps(x: Float32Array, parts: MlpPart[]): Promise<Float32Array> {
    return mlpsOneByOne(this, x, parts);
  }

  private async product(a: Float32Array, b: Float32Array, m: number, k: number, n: number, bTransposed: boolean, bias?: Float32Array): Promise<Float32Array> {
    const plan = new ArenaPlan();
    const A = plan.matrix(m, k, 'float32');
    const B = plan.matrix(bTransposed ? n : k, bTransposed ? k : n, 'float32');
    const packedA = plan.reserve(Math.ceil(m / QUAD) * QUAD * k * 4);
    const packedB = plan.reserve(Math.ceil(n / PANEL) * PANEL * k * 4);
    const C = plan.matrix(m, n, 'float32');
    if (plan.totalBytes > MAX_BYTES) return withBias(blockedMatmul(a, b, m, k, n, bTransposed), n, bias);
    const arena = new Arena(plan, 'float32', this.recycle);
    arena.view(A).data.set(a);
    arena.view(B).data.set(b);
    await threadPool().run(arena.memory, [
      [
        { kernel: 'pack_f32', args: [B.offset, B.cols, bTransposed ? 1 : 0, packedB.offset, k, n] },
        { kernel: 'pack_rows_f32', args: [A.offset, k, packedA.offset, m, k, k, 0] },
      ],
      [{ kernel: 'gemm_f32', args: [packedA.offset, packedB.offset, C.offset, n, m, n, k] }],
    ]);
    const product = arena.view(C);
    this.recycle = product;
    return withBias((product.data as Float32Array).slice(), n, bias);
  }

  dispose(): void {
    this.recycle = undefined;
  }
}

function withBias(c: Float32Array, n: number, bias: Float32Array | undefined): Float32Array {
  if (!bias) return c;
  for (let row = 0; row < c.length; row += n) for (let j = 0; j < n; j++) c[row + j] += bias[j];
  return c;
}

/** C = A·B (B [k × n], or [n × k] when transposed) in float32, in 64-wide blocks of k. */
export function blockedMatmul(a: Float32Array, b: Float32Array, m: number, k: number, n: number, bTransposed: boolean): Float32Array {
  const c = new Float32Array(m * n);
  const block = 64;
  for (let k0 = 0; k0 < k; k0 += block) {
    const k1 = Math.min(k, k0 + block);
    for (let i = 0; i < m; i++) {
      const row = i * n;
      for (let p = k0; p < k1; p++) {
        const x = a[i * k + p];
        if (bTransposed) for (let j = 0; j < n; j++) c[row + j] += x * b[j * k + p];
        else for (let j = 0, at = p * n; j < n; j++) c[row + j] += x * b[at + j];
      }
    }
  }
  return c;
}
