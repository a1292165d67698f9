// Large synthetic results for the pooling tests and the panel benchmark: the panel only draws,
// so any row-stochastic matrix will do; the values are deterministic.
import type { AttentionResult, Matrix } from '../../src/core/types';

/** Rows of a softmax over deterministic pseudo-random scores (a long-sequence weights matrix). */
export function syntheticWeights(n: number): Matrix {
  const data = new Float64Array(n * n);
  let seed = 12345;
  for (let r = 0; r < n; r++) {
    let sum = 0;
    for (let c = 0; c < n; c++) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const value = Math.exp((seed / 2147483648) * 8);
      data[r * n + c] = value;
      sum += value;
    }
    for (let c = 0; c < n; c++) data[r * n + c] /= sum;
  }
  return { rows: n, cols: n, data };
}

/** A one-head result whose every n×n step is `weights` (enough for the panel's drawing). */
export function syntheticResult(weights: Matrix): AttentionResult {
  const column: Matrix = { rows: weights.rows, cols: 1, data: new Float64Array(weights.rows) };
  return {
    dtype: 'float64',
    heads: [{ Q: column, K: column, V: column, scores: weights, scaled: weights, mask: null, masked: weights, weights, output: column, kvHead: 0 }],
    concat: column,
    output: column,
    checks: { rowSumsMaxError: 0, rowsSumToOne: true, weightsInBounds: true, flops: 0, attentionBytes: weights.rows * weights.cols * 8 },
    warnings: [],
    elapsedMs: 0,
  };
}
