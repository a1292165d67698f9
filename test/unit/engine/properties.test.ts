// Properties that hold for every input, checked on random problems (fast-check): weight rows
// sum to 1, permuting the tokens permutes the output, gradients equal central finite
// differences of the loss, and the softmax never makes NaN from finite numbers.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { runAttention } from '../../../src/core/engine';
import { rowSoftmax, zeros } from '../../../src/core/engine/kernels';
import type { AttentionSpec, CausalAlignment, Matrix, ScoreFunction } from '../../../src/core/types';
import { matrixOf } from './arbitraries';
import { assertFiniteDifferences } from './finiteDifferences';
import { sumOf } from './fixtures';

const SCORES: ScoreFunction[] = ['scaled_dot', 'dot', 'general', 'additive', 'gaussian'];
type Source = 'self' | 'context' | 'precomputed';
type Masking = 'none' | 'boolean' | 'additive' | 'causal' | 'padding';

interface Shape {
  queries: number;
  keys: number;
  dModel: number;
  dContext: number;
  dHead: number;
  dAdditive: number;
  heads: number;
  kvHeads: number;
  score: ScoreFunction;
  source: Source;
  masking: Masking;
  causal: CausalAlignment;
  withWO: boolean;
  withDO: boolean;
}

const shapes = fc
  .record({
    queries: fc.integer({ min: 1, max: 5 }),
    keys: fc.integer({ min: 1, max: 5 }),
    dModel: fc.integer({ min: 1, max: 4 }),
    dContext: fc.integer({ min: 1, max: 4 }),
    dHead: fc.integer({ min: 1, max: 3 }),
    dAdditive: fc.integer({ min: 1, max: 3 }),
    groups: fc.integer({ min: 1, max: 2 }),
    perGroup: fc.integer({ min: 1, max: 2 }),
    score: fc.constantFrom(...SCORES),
    source: fc.constantFrom<Source>('self', 'context', 'precomputed'),
    masking: fc.constantFrom<Masking>('none', 'boolean', 'additive', 'causal', 'padding'),
    causal: fc.constantFrom<CausalAlignment>('top-left', 'bottom-right'),
    withWO: fc.boolean(),
    withDO: fc.boolean(),
  })
  .map(({ groups, perGroup, ...rest }): Shape => ({
    ...rest,
    keys: rest.source === 'self' ? rest.queries : rest.keys,
    heads: groups * perGroup,
    kvHeads: groups,
  }));

/** A random, valid spec of the given shape (row-vector convention, whole W split by heads). */
function problemOf(s: Shape, gradients: boolean): fc.Arbitrary<AttentionSpec> {
  const qWidth = s.heads * s.dHead;
  const kvWidth = s.kvHeads * s.dHead;
  const kvInput = s.source === 'context' ? s.dContext : s.dModel;
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  if (s.source === 'precomputed') {
    parts.Q = matrixOf(s.queries, qWidth);
    parts.K = matrixOf(s.keys, kvWidth);
    parts.V = matrixOf(s.keys, kvWidth);
  } else {
    parts.X = matrixOf(s.queries, s.dModel);
    if (s.source === 'context') parts.context = matrixOf(s.keys, s.dContext);
    parts.WQ = matrixOf(s.dModel, qWidth, 1).map((m) => [m]);
    parts.WK = matrixOf(kvInput, kvWidth, 1).map((m) => [m]);
    parts.WV = matrixOf(kvInput, kvWidth, 1).map((m) => [m]);
  }
  if (s.withWO) parts.WO = matrixOf(s.heads * s.dHead, s.dModel, 1);
  if (s.withDO) parts.dO = matrixOf(s.queries, s.withWO ? s.dModel : s.heads * s.dHead);
  if (s.score === 'general') parts.Wa = matrixOf(s.dHead, s.dHead, 1);
  if (s.score === 'additive') {
    parts.W1 = matrixOf(s.dHead, s.dAdditive, 1);
    parts.W2 = matrixOf(s.dHead, s.dAdditive, 1);
    parts.va = matrixOf(1, s.dAdditive, 1);
  }
  if (s.masking === 'boolean') {
    parts.mask = fc
      .array(fc.boolean(), { minLength: s.queries * s.keys, maxLength: s.queries * s.keys })
      .map((bits) => ({ kind: 'boolean', value: { rows: s.queries, cols: s.keys, data: Float64Array.from(bits, Number) } }));
  }
  if (s.masking === 'additive') {
    const entry = fc.oneof(fc.double({ min: -3, max: 3, noNaN: true }), fc.constant(-Infinity));
    parts.mask = fc
      .array(entry, { minLength: s.queries * s.keys, maxLength: s.queries * s.keys })
      .map((values) => ({ kind: 'additive', value: { rows: s.queries, cols: s.keys, data: Float64Array.from(values) } }));
  }
  if (s.masking === 'padding') {
    parts.padding = fc
      .array(fc.boolean(), { minLength: s.keys, maxLength: s.keys })
      .map((bits) => ({ rows: 1, cols: s.keys, data: Float64Array.from(bits, Number) }));
  }
  return fc.record(parts).map((matrices) => ({
    ...(matrices as Partial<AttentionSpec>),
    options: {
      heads: s.heads,
      kvHeads: s.kvHeads,
      score: s.score,
      dtype: 'float64',
      gradients,
      ...(s.masking === 'causal' ? { causal: s.causal } : {}),
    },
  }));
}

const problems = (gradients: boolean) => shapes.chain((s) => problemOf(s, gradients));

describe('engine properties (fast-check)', () => {
  it('every weight row sums to 1, or is all 0 and reported fully masked', () => {
    fc.assert(
      fc.property(problems(false), (spec) => {
        const result = runAttention(spec);
        let reported = 0;
        for (const { weights: A } of result.heads) {
          for (let i = 0; i < A.rows; i++) {
            const sum = sumOf(A, i * A.cols, (i + 1) * A.cols);
            for (const w of A.data) assert.ok(w >= 0 && w <= 1, `weight ${w}`);
            if (sum === 0) reported++;
            else assert.ok(Math.abs(sum - 1) <= 8 * A.cols * Number.EPSILON, `row sum ${sum}`);
          }
        }
        assert.equal(result.warnings.length, reported);
        assert.ok(result.checks.rowsSumToOne && result.checks.weightsInBounds);
      }),
      { numRuns: 300 },
    );
  });

  it('permuting the tokens of unmasked self-attention permutes the output rows', () => {
    const selfAttention = shapes
      .map((s): Shape => ({ ...s, source: 'self', keys: s.queries, masking: 'none' }))
      .chain((s) =>
        fc.tuple(
          problemOf(s, false),
          fc.shuffledSubarray([...Array(s.queries).keys()], { minLength: s.queries, maxLength: s.queries }),
        ),
      );
    fc.assert(
      fc.property(selfAttention, ([spec, order]) => {
        const X = spec.X as Matrix;
        const permuted = zeros(X.rows, X.cols, 'float64');
        order.forEach((from, to) => permuted.data.set(X.data.subarray(from * X.cols, (from + 1) * X.cols), to * X.cols));
        const base = runAttention(spec);
        const moved = runAttention({ ...spec, X: permuted }).output;
        const w = moved.cols;
        const scale = Math.max(1, ...base.output.data.map(Math.abs));
        order.forEach((from, to) => {
          for (let c = 0; c < w; c++) {
            const diff = Math.abs(moved.data[to * w + c] - base.output.data[from * w + c]);
            assert.ok(diff <= 1e-12 * scale, `row ${to} col ${c} differs by ${diff}`);
          }
        });
        if (X.rows > 1) assert.equal(base.checks.permutationEquivariant, true);
      }),
      { numRuns: 200 },
    );
  });

  it('gradients equal central finite differences of Σ dO ⊙ output', () => {
    fc.assert(
      fc.property(problems(true), (spec) => {
        const result = runAttention(spec);
        const grads = result.gradients;
        assert.ok(grads);
        const loss = (s: AttentionSpec): number => {
          const { output } = runAttention({ ...s, options: { ...s.options, gradients: false } });
          let sum = 0;
          for (let p = 0; p < output.data.length; p++) sum += output.data[p] * (spec.dO ? spec.dO.data[p] : 1);
          return sum;
        };
        const targets: Array<[string, Matrix | undefined, Matrix | undefined]> = [
          ['X', spec.X, grads.dX],
          ['context', spec.context, grads.dContext],
          ['W_Q', spec.WQ?.[0], grads.dWQ],
          ['W_K', spec.WK?.[0], grads.dWK],
          ['W_V', spec.WV?.[0], grads.dWV],
          ['W_O', spec.WO, grads.dWO],
          ['Q', spec.Q, spec.Q && wholeGradient(result.heads.map((h) => h.gradients!.dQ), spec.options.heads)],
          ['K', spec.K, spec.K && wholeGradient(result.heads.map((h) => h.gradients!.dK), spec.options.kvHeads!)],
          ['V', spec.V, spec.V && wholeGradient(result.heads.map((h) => h.gradients!.dV), spec.options.kvHeads!)],
        ];
        assertFiniteDifferences(targets, () => loss(spec));
      }),
      { numRuns: 150 },
    );
  });

  it('row softmax never gives NaN for finite inputs up to ±1e300', () => {
    const rows = fc.integer({ min: 1, max: 4 }).chain((r) =>
      fc.integer({ min: 1, max: 8 }).chain((c) =>
        matrixOf(r, c, 1e300).map((m) => m),
      ),
    );
    fc.assert(
      fc.property(rows, (scores) => {
        const weights = zeros(scores.rows, scores.cols, 'float64');
        assert.deepEqual(rowSoftmax(weights, scores), []);
        for (let i = 0; i < scores.rows; i++) {
          let sum = 0;
          for (let j = 0; j < scores.cols; j++) {
            const w = weights.data[i * scores.cols + j];
            assert.ok(w >= 0 && w <= 1, `weight ${w}`);
            sum += w;
          }
          assert.ok(Math.abs(sum - 1) <= 8 * scores.cols * Number.EPSILON, `row sum ${sum}`);
        }
      }),
      { numRuns: 500 },
    );
  });
});

/**
 * Per-head gradients of a whole precomputed Q, K or V: head i owns columns of block
 * i mod blocks... for K/V, query head i used KV block ⌊i / (h / g)⌋, and heads sharing it add up.
 */
function wholeGradient(perHead: Matrix[], blocks: number): Matrix {
  const width = perHead[0].cols;
  const out = zeros(perHead[0].rows, width * blocks, 'float64');
  const share = perHead.length / blocks;
  perHead.forEach((g, i) => {
    const block = Math.floor(i / share);
    for (let r = 0; r < g.rows; r++) {
      for (let c = 0; c < width; c++) out.data[r * out.cols + block * width + c] += g.data[r * width + c];
    }
  });
  return out;
}
