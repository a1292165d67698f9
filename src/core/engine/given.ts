// Attention weights given beside the problem (a paused program's `attn_weights`, a note's): put
// next to the weights this engine computed, with the largest difference per head — "does my
// model's attention match the math?" — or, when nothing else is given, shown as they are.
import type { AttentionResult, AttentionSpec, Matrix } from '../types';
import { judge, weightRowChecks } from './checks';
import { zeros } from './kernels';

/** max |a − b| over entries of equal shape; NaN when either holds a NaN where the other does not agree. */
export function maxAbsDifference(a: Matrix, b: Matrix): number {
  let max = 0;
  for (let p = 0; p < a.data.length; p++) {
    const difference = Math.abs(a.data[p] - b.data[p]);
    if (a.data[p] === b.data[p]) continue; // ±Infinity equal to itself
    if (!(difference <= max)) max = difference; // NaN stays visible
  }
  return max;
}

/** Adds each head's given weights and their difference from the computed ones (the spec checked the shapes). */
export function compareGivenWeights(spec: AttentionSpec, result: AttentionResult): AttentionResult {
  const given = spec.weights;
  if (!given || given.length !== result.heads.length) return result;
  result.heads.forEach((head, h) => {
    head.givenWeights = given[h];
    head.givenMaxDifference = maxAbsDifference(given[h], head.weights);
  });
  return result;
}

/** The result of a spec with weights only: each head shows them; nothing else is computed. */
export function givenOnlyResult(spec: AttentionSpec): AttentionResult {
  const started = performance.now();
  const given = spec.weights ?? [];
  const { rows, cols } = given[0] ?? { rows: 0, cols: 0 };
  const empty = (n: number) => zeros(n, 0, 'float64');
  const { rowSumsMaxError, weightsInBounds } = weightRowChecks(given);
  const none = empty(rows);
  const checks = judge(
    spec,
    // The weights' own precision is not known: a program's are often float32, judged as such.
    { queries: rows, keys: cols, dModel: 0, dK: 0, dV: 0, heads: given.length, dtype: 'float32', projections: false, outputProjection: false },
    { rowSumsMaxError, weightsInBounds, output: empty(rows) },
  );
  return {
    dtype: spec.options.dtype,
    givenOnly: true,
    heads: given.map((A, h) => ({
      Q: empty(rows),
      K: empty(cols),
      V: empty(cols),
      scores: A,
      scaled: A,
      mask: null,
      masked: A,
      weights: A,
      output: empty(rows),
      kvHead: h,
      givenWeights: A,
      givenMaxDifference: 0,
    })),
    concat: none,
    output: none, // the same object: no W_O either
    checks: { ...checks, flops: 0 },
    warnings: [],
    elapsedMs: performance.now() - started,
  };
}
