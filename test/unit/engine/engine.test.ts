// The engine's contract beyond the numbers: cancellation, clear errors on shapes a spec should
// never carry, warnings, which checks apply, the cost model and the positional encoding.
import * as assert from 'node:assert/strict';
import { attentionCost, CancelledError, judge, permutationProbe, runAttention, sinusoidalPositionalEncoding } from '../../../src/core/engine';
import type { AttentionSpec, Matrix } from '../../../src/core/types';
import { assertMatrixClose, type JsonMatrix, loadFixture, matrix, specOf } from './fixtures';

const MiB = 2 ** 20;

function ramp(rows: number, cols: number): Matrix {
  return matrix(Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => Math.sin(i * cols + j))));
}

describe('runAttention', () => {
  it('stops with CancelledError between row blocks of a head', () => {
    let calls = 0;
    const spec: AttentionSpec = { options: { heads: 1, score: 'scaled_dot', dtype: 'float64' }, X: ramp(200, 4) };
    assert.throws(() => runAttention(spec, { isCancelled: () => ++calls > 2 }), CancelledError);
    assert.ok(calls > spec.options.heads, 'asked again inside the head');
    assert.equal(runAttention(spec, { isCancelled: () => false }).output.rows, 200);
  });

  it('names the matrices when shapes do not fit', () => {
    const options = { heads: 2, score: 'scaled_dot', dtype: 'float64' } as const;
    assert.throws(() => runAttention({ options, X: ramp(3, 4), WQ: [ramp(4, 3)] }), /W_Q has 3 columns, which 2 heads cannot share/);
    assert.throws(
      () => runAttention({ options: { ...options, heads: 1 }, X: ramp(3, 4), mask: { kind: 'boolean', value: ramp(2, 2) } }),
      /mask is 2×2 but 3×3 is needed/,
    );
    assert.throws(() => runAttention({ options: { ...options, heads: 3, kvHeads: 2 }, X: ramp(3, 6) }), /heads=3 must be a positive multiple of kv_heads=2/);
    assert.throws(() => runAttention({ options: { ...options, score: 'general' }, X: ramp(3, 4) }), /score=general needs W_a/);
  });

  it('warns once per fully masked query and head, naming the token', () => {
    const spec: AttentionSpec = {
      options: { heads: 2, score: 'scaled_dot', dtype: 'float64' },
      X: ramp(3, 4),
      mask: { kind: 'boolean', value: matrix([[1, 1, 0], [0, 0, 0], [1, 1, 1]]) },
      tokens: ['I', 'love', 'cats'],
    };
    const result = runAttention(spec);
    assert.deepEqual(result.warnings, [
      'query 2 "love" (head 1) is fully masked: its output row is 0',
      'query 2 "love" (head 2) is fully masked: its output row is 0',
    ]);
    for (const head of result.heads) assert.deepEqual([...head.output.data.subarray(2, 4)], [0, 0]);
  });

  it('checks permutation equivariance only where it holds', () => {
    const options = { heads: 1, score: 'scaled_dot', dtype: 'float64' } as const;
    const plain = runAttention({ options, X: ramp(4, 4) }).checks;
    assert.equal(plain.permutationEquivariant, true);
    assert.ok((plain.permutationMaxError ?? 1) < 1e-14);
    assert.equal(plain.permutationRowsChecked, 4);
    for (const extra of [{ options: { ...options, causal: 'top-left' as const } }, { PE: ramp(4, 4) }, { options: { ...options, sinusoidalPE: true } }]) {
      assert.equal(runAttention({ options, X: ramp(4, 4), ...extra }).checks.permutationEquivariant, undefined);
    }
  });

  it('checks permutation equivariance of a long sequence on 64 rows spread over it, and catches a wrong one', () => {
    const spec: AttentionSpec = { options: { heads: 2, score: 'scaled_dot', dtype: 'float64' }, X: ramp(300, 6), WO: ramp(6, 6) };
    const probe = permutationProbe(spec);
    assert.ok(probe);
    assert.equal(probe.rows.length, 64);
    assert.deepEqual([probe.rows[0], probe.rows[63]], [299, 0], 'the last and the first row are compared');
    assert.deepEqual([probe.spec.X?.rows, probe.spec.context?.rows], [64, 300], 'queries from 64 rows, keys from all');
    const result = runAttention(spec);
    assert.equal(result.checks.permutationEquivariant, true);
    assert.equal(result.checks.permutationRowsChecked, 64);
    // The probe's output row k must equal the run's output row rows[k]: off by 1e-6 in one, it fails.
    const probeOutput = runAttention(probe.spec).output;
    const shape = { queries: 300, keys: 300, dModel: 6, dK: 3, dV: 3, heads: 2, dtype: 'float64' as const };
    const measured = { rowSumsMaxError: 0, weightsInBounds: true, output: result.output };
    assert.equal(judge(spec, shape, { ...measured, permuted: { rows: probe.rows, output: probeOutput } }).permutationEquivariant, true);
    const wrong = { ...probeOutput, data: Float64Array.from(probeOutput.data) };
    wrong.data[17 * wrong.cols + 2] += 1e-6;
    assert.equal(judge(spec, shape, { ...measured, permuted: { rows: probe.rows, output: wrong } }).permutationEquivariant, false);
  });

  it('keeps float32 runs in Float32Array storage, every intermediate', () => {
    const result = runAttention(specOf(loadFixture('float32-multi-head')));
    for (const head of result.heads) {
      for (const m of [head.Q, head.scores, head.scaled, head.masked, head.weights, head.output, head.gradients!.dS]) {
        assert.ok(m.data instanceof Float32Array);
      }
    }
  });
});

describe('attentionCost', () => {
  it('gives the tutorial’s 144 MB for 12 layers × 12 heads at n = 512 in float32', () => {
    const cost = attentionCost({ queries: 512, keys: 512, dModel: 768, dK: 64, dV: 64, heads: 12, layers: 12, dtype: 'float32' });
    assert.equal(cost.attentionBytes, 144 * MiB);
    assert.ok(cost.totalBytes > cost.attentionBytes);
  });

  it('counts FLOPs term by term', () => {
    // n = 2 tokens, d_model = 2, d_k = d_v = 1, one head: projections 2·2·2·1 (Q) + 2·2·2·2 (K, V)
    // = 24; scores 2·2·2·1 = 8; scale + mask + softmax 5·4 = 20; A V 8; W_O 2·2·1·2 = 8.
    const shape = { queries: 2, keys: 2, dModel: 2, dK: 1, dV: 1, heads: 1, dtype: 'float64' } as const;
    assert.equal(attentionCost(shape).flops, 24 + 8 + 20 + 8 + 8);
    assert.equal(attentionCost({ ...shape, projections: false, outputProjection: false }).flops, 8 + 20 + 8);
    assert.equal(attentionCost({ ...shape, layers: 3 }).flops, 3 * 68);
  });

  it('grows quadratically in the sequence length once n ≫ d', () => {
    const at = (n: number) => attentionCost({ queries: n, keys: n, dModel: 8, dK: 8, dV: 8, heads: 1, dtype: 'float64' });
    assert.ok(Math.abs(at(8192).attentionBytes / at(4096).attentionBytes - 4) < 1e-12);
    assert.ok(at(8192).flops / at(4096).flops > 3.9);
    const withGradients = attentionCost({ queries: 64, keys: 64, dModel: 8, dK: 8, dV: 8, heads: 1, dtype: 'float64', gradients: true });
    assert.ok(withGradients.totalBytes > at(64).totalBytes);
  });
});

describe('sinusoidalPositionalEncoding', () => {
  it('matches numpy’s sin/cos table (fixture sinusoidal-pe: input − X)', () => {
    const fixture = loadFixture('sinusoidal-pe');
    const X = specOf(fixture).X as Matrix;
    const pe = sinusoidalPositionalEncoding(X.rows, X.cols);
    const expected = (fixture.expected.input as JsonMatrix).map((row, i) => row.map((v, j) => (v as number) - X.data[i * X.cols + j]));
    assertMatrixClose(pe, expected, 1e-12, 'PE');
    assert.deepEqual([...pe.data.subarray(0, 5)], [0, 1, 0, 1, 0]);
  });
});

describe('non-finite inputs', () => {
  it('says which query got NaN weights instead of failing silently', () => {
    const X = ramp(3, 2);
    X.data[2] = NaN; // token 2
    const result = runAttention({ options: { heads: 1, score: 'scaled_dot', dtype: 'float64' }, X, tokens: ['a', 'b', 'c'] });
    assert.deepEqual(result.warnings, ['query 1 "a" (head 1) and 2 more queries got NaN weights: a score there is NaN or +∞']);
    assert.equal(result.checks.weightsInBounds, false);
    assert.equal(result.checks.rowsSumToOne, false);
  });
});
