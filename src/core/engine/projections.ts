// Per-head Q, K or V: split a precomputed matrix column-wise, or project a source (X, or the
// context for cross-attention) through W — one whole W split column-wise into `count` blocks,
// or one W per head. With neither, the projection is the identity (attention(X, X, X)).
import type { DType, Matrix } from '../types';
import { accumulate, addColumns, columns, inDtype, matmul, matmulTransA, matmulTransB, zeros } from './kernels';

export interface Projection {
  heads: Matrix[];
  /** Per-head weights, or null when the heads were given or are column blocks of the source. */
  weights: Matrix[] | null;
  /** What was projected, or null for precomputed heads (no gradient flows further back). */
  source: Matrix | null;
}

export function project(
  name: string,
  count: number,
  dtype: DType,
  precomputed: Matrix | undefined,
  W: Matrix[] | undefined,
  source: Matrix | undefined,
): Projection {
  if (precomputed) return { heads: splitColumns(inDtype(precomputed, dtype), count, name), weights: null, source: null };
  if (!source) throw new RangeError(`${name} needs either ${name} itself or an input to project`);
  if (!W || W.length === 0) return { heads: splitColumns(source, count, name), weights: null, source };
  if (W.length !== 1 && W.length !== count) {
    throw new RangeError(`W_${name} has ${W.length} per-head matrices but ${count} heads need it`);
  }
  const whole = W.map((w) => inDtype(w, dtype));
  if (whole.some((w) => w.rows !== whole[0].rows || w.cols !== whole[0].cols)) {
    throw new RangeError(`the per-head W_${name} matrices differ in shape: ${whole.map((w) => `${w.rows}×${w.cols}`).join(', ')}`);
  }
  const weights = whole.length === 1 ? splitColumns(whole[0], count, `W_${name}`) : whole;
  const heads = weights.map((w) => {
    if (w.rows !== source.cols) {
      throw new RangeError(`the input has ${source.cols} columns but W_${name} has ${w.rows} rows`);
    }
    const out = zeros(source.rows, w.cols, dtype);
    matmul(out, source, w);
    return out;
  });
  return { heads, weights, source };
}

/**
 * Back through `project`: given dL/d(head i), add dL/d(source) into `dSource` and return
 * dL/dW with the per-head gradients side by side (the layout of one whole W).
 */
export function projectBackward(p: Projection, dHeads: Matrix[], dSource: Matrix | undefined, dtype: DType): Matrix | undefined {
  if (!p.source || !dSource) return undefined;
  const source = p.source;
  const width = p.heads[0].cols;
  if (!p.weights) {
    dHeads.forEach((dH, i) => addColumns(dSource, dH, i * width));
    return undefined;
  }
  const dW = zeros(source.cols, width * dHeads.length, dtype);
  const dWHead = zeros(source.cols, width, dtype);
  const dSourceHead = zeros(source.rows, source.cols, dtype);
  p.weights.forEach((w, i) => {
    matmulTransA(dWHead, source, dHeads[i]);
    addColumns(dW, dWHead, i * width);
    matmulTransB(dSourceHead, dHeads[i], w);
    accumulate(dSource, dSourceHead);
  });
  return dW;
}

export function splitColumns(m: Matrix, count: number, name: string): Matrix[] {
  if (m.cols % count !== 0) {
    throw new RangeError(`${name} has ${m.cols} columns, which ${count} heads cannot share equally`);
  }
  const width = m.cols / count;
  if (count === 1) return [m];
  return Array.from({ length: count }, (_, i) => columns(m, i * width, width));
}
