// The far tail of the kernels' softmax: exp of a score far below its row's maximum underflows to
// exactly 0 rather than to a denormal or to garbage from the exponent bits (attention.c raises x
// to −88 / −709, where 2^n's bits wrap to zero), a masked key weighs exactly 0, and everything
// above the tail keeps float32/float64 accuracy against Math.exp.
import * as assert from 'node:assert/strict';
import { runAttentionFast } from '../../../src/core/engine/fast';
import type { AttentionSpec, DType, Matrix } from '../../../src/core/types';

/** Scores (scale 1: `dot`) of every query equal `gaps`, relative to the row's maximum 0. */
function specOf(dtype: DType, gaps: number[], causal: boolean): AttentionSpec {
  const n = gaps.length;
  const column = (values: number[]): Matrix => ({ rows: values.length, cols: 1, data: Float64Array.from(values) });
  return {
    options: { heads: 1, dtype, score: 'dot', ...(causal ? { causal: 'top-left' as const } : {}) },
    Q: column(new Array(n).fill(1)),
    K: column(gaps),
    V: column(gaps.map((_, j) => j + 1)),
  };
}

const TAILS: Record<DType, { gaps: number[]; zeroBelow: number; relative: number }> = {
  float32: { gaps: [0, -1e-6, -0.5, -3, -20, -80, -86.9, -88, -88.3, -100, -1e4, -3e38], zeroBelow: -88, relative: 2.5e-7 },
  float64: { gaps: [0, -1e-12, -0.5, -3, -20, -700, -708, -709, -709.4, -800, -1e5, -1e300], zeroBelow: -709, relative: 5e-16 },
};

describe('fast path: the tail of softmax', () => {
  for (const [dtype, { gaps, zeroBelow, relative }] of Object.entries(TAILS) as [DType, (typeof TAILS)[DType]][]) {
    it(`${dtype}: weights below exp(${zeroBelow}) are exactly 0, those above are accurate`, async () => {
      const result = await runAttentionFast(specOf(dtype, gaps, false), { referenceBelowFlops: 0 });
      const weights = result.heads[0].weights;
      assert.ok(weights.data.buffer instanceof SharedArrayBuffer, 'computed by the wasm kernels');
      const round = dtype === 'float32' ? Math.fround : (v: number) => v;
      const stored = gaps.map((g) => round(g)); // the scores as the kernels see them
      const sum = stored.reduce((total, g) => total + Math.exp(g), 0);
      for (let i = 0; i < gaps.length; i++) {
        stored.forEach((g, j) => {
          const got = weights.data[i * gaps.length + j];
          if (g <= zeroBelow) {
            assert.equal(got, 0, `row ${i}, score ${g}`);
          } else {
            const want = Math.exp(g) / sum;
            assert.ok(Math.abs(got - want) <= relative * want + Number.MIN_VALUE, `row ${i}, score ${g}: ${got} against ${want}`);
          }
        });
      }
    });

    it(`${dtype}: a key the causal mask hides weighs exactly 0`, async () => {
      const flat = gaps.map(() => 0);
      const result = await runAttentionFast(specOf(dtype, flat, true), { referenceBelowFlops: 0 });
      const { weights } = result.heads[0];
      for (let i = 0; i < flat.length; i++) {
        for (let j = 0; j < flat.length; j++) {
          const got = weights.data[i * flat.length + j];
          if (j > i) assert.equal(got, 0, `(${i}, ${j}) is masked`);
          else assert.ok(Math.abs(got - 1 / (i + 1)) <= relative, `(${i}, ${j}): ${got}`);
        }
      }
    });
  }
});
