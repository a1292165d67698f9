// The output-only path at a length the materialising engines cannot hold (n = 16384: four n×n
// float32 matrices per head would be 4 GiB): memory stays O(n·d), and sampled output rows equal
// the attention formula evaluated directly in float64.
import * as assert from 'node:assert/strict';
import { attentionOutputFast } from '../../../src/core/engine/fast';
import { planRun } from '../../../src/core/engine/fast/plan';
import type { AttentionSpec, Matrix } from '../../../src/core/types';

const n = 16384;
const d = 16;

function random(rows: number, cols: number, seed: number): Matrix {
  let s = seed;
  const data = new Float64Array(rows * cols);
  for (let p = 0; p < data.length; p++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    data[p] = s / 2147483648 - 0.5;
  }
  return { rows, cols, data };
}

/** Row i of softmax(q Kᵀ/√d + causal) V, straight from the definition, in float64. */
function directRow(Q: Matrix, K: Matrix, V: Matrix, i: number): number[] {
  const scores: number[] = [];
  for (let j = 0; j <= i; j++) {
    let s = 0;
    for (let c = 0; c < d; c++) s += Q.data[i * d + c] * K.data[j * d + c];
    scores.push(s / Math.sqrt(d));
  }
  const max = Math.max(...scores);
  const e = scores.map((s) => Math.exp(s - max));
  const sum = e.reduce((a, b) => a + b, 0);
  const out = new Array<number>(d).fill(0);
  e.forEach((w, j) => {
    for (let c = 0; c < d; c++) out[c] += (w / sum) * V.data[j * d + c];
  });
  return out;
}

describe('output-only attention at n = 16384', () => {
  const spec: AttentionSpec = {
    options: { heads: 1, dtype: 'float32', score: 'scaled_dot', causal: 'top-left' },
    Q: random(n, d, 1),
    K: random(n, d, 2),
    V: random(n, d, 3),
  };

  it('plans O(n·d) memory, not n×n', () => {
    const plan = planRun(spec, false, 2);
    assert.ok(plan);
    assert.ok(plan.arena.totalBytes < 16 * n * d * 4, `${plan.arena.totalBytes} bytes`);
  });

  it('computes rows that match the formula (float32 tolerance)', async function () {
    this.timeout(120000);
    const { output } = await attentionOutputFast(spec);
    assert.equal(`${output.rows}×${output.cols}`, `${n}×${d}`);
    for (const i of [0, 1, 4095, 9999, n - 1]) {
      const want = directRow(spec.Q as Matrix, spec.K as Matrix, spec.V as Matrix, i);
      want.forEach((w, c) => {
        const got = output.data[i * d + c];
        assert.ok(Math.abs(got - w) <= 1e-5 * (Math.abs(w) + 0.5), `row ${i} col ${c}: ${got}, expected ${w}`);
      });
    }
  });
});
