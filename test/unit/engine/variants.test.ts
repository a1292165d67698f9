// The variants (engine/variants.ts) beyond the fixtures: gradients through RoPE, temperature,
// softcap and ALiBi equal central finite differences on random problems; a decode step equals
// the last row of the full run; the paper's ALiBi slopes; what a mask saves.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { runAttention } from '../../../src/core/engine';
import { maskSavings } from '../../../src/core/engine/cost';
import { alibiSlopes, rotate } from '../../../src/core/engine/variants';
import { matrixOf } from './arbitraries';
import { assertFiniteDifferences } from './finiteDifferences';
import type { AttentionOptions, AttentionSpec, Matrix } from '../../../src/core/types';

type Variants = Pick<AttentionOptions, 'rope' | 'ropeLayout' | 'temperature' | 'softcap' | 'alibi' | 'window' | 'sinks' | 'prefix' | 'causal'>;

const variants: fc.Arbitrary<Variants> = fc
  .record(
    {
      rope: fc.constantFrom(10000, 100, 2),
      ropeLayout: fc.constantFrom<'half' | 'interleaved'>('half', 'interleaved'),
      temperature: fc.double({ min: 0.3, max: 3, noNaN: true }),
      softcap: fc.double({ min: 0.5, max: 5, noNaN: true }),
      alibi: fc.constant(true),
      window: fc.integer({ min: 1, max: 4 }),
      sinks: fc.integer({ min: 1, max: 2 }),
      prefix: fc.integer({ min: 1, max: 3 }),
      causal: fc.constantFrom<'top-left' | 'bottom-right'>('top-left', 'bottom-right'),
    },
    { requiredKeys: [] },
  )
  .map((v) => (v.sinks !== undefined && v.window === undefined ? { ...v, sinks: undefined } : v));

interface Shape {
  queries: number;
  keys: number;
  dModel: number;
  halfWidth: number; // per-head width / 2 (RoPE needs it even)
  groups: number;
  perGroup: number;
  source: 'self' | 'context' | 'precomputed';
}

const shapes: fc.Arbitrary<Shape> = fc
  .record({
    queries: fc.integer({ min: 1, max: 5 }),
    keys: fc.integer({ min: 1, max: 5 }),
    dModel: fc.integer({ min: 1, max: 4 }),
    halfWidth: fc.integer({ min: 1, max: 2 }),
    groups: fc.integer({ min: 1, max: 2 }),
    perGroup: fc.integer({ min: 1, max: 2 }),
    source: fc.constantFrom<Shape['source']>('self', 'context', 'precomputed'),
  })
  .map((s) => ({ ...s, keys: s.source === 'self' ? s.queries : Math.max(s.keys, s.queries) }));

function problemOf(s: Shape, v: Variants, gradients: boolean): fc.Arbitrary<AttentionSpec> {
  const heads = s.groups * s.perGroup;
  const width = 2 * s.halfWidth;
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  if (s.source === 'precomputed') {
    parts.Q = matrixOf(s.queries, heads * width);
    parts.K = matrixOf(s.keys, s.groups * width);
    parts.V = matrixOf(s.keys, s.groups * width);
  } else {
    parts.X = matrixOf(s.queries, s.dModel);
    if (s.source === 'context') parts.context = matrixOf(s.keys, s.dModel);
    parts.WQ = matrixOf(s.dModel, heads * width, 1).map((m) => [m]);
    parts.WK = matrixOf(s.dModel, s.groups * width, 1).map((m) => [m]);
    parts.WV = matrixOf(s.dModel, s.groups * width, 1).map((m) => [m]);
    parts.WO = matrixOf(heads * width, s.dModel, 1);
  }
  return fc.record(parts).map((matrices) => ({
    ...(matrices as Partial<AttentionSpec>),
    options: Object.fromEntries(
      Object.entries({ heads, kvHeads: s.groups, score: 'scaled_dot', dtype: 'float64', gradients, ...v }).filter(([, value]) => value !== undefined),
    ) as unknown as AttentionOptions,
  }));
}

const problems = (gradients: boolean): fc.Arbitrary<AttentionSpec> =>
  fc.tuple(shapes, variants).chain(([s, v]) => problemOf(s, v, gradients));

/** Σ output (dO = ones). */
function loss(spec: AttentionSpec): number {
  const { output } = runAttention({ ...spec, options: { ...spec.options, gradients: false } });
  let sum = 0;
  for (const x of output.data) sum += x;
  return sum;
}

describe('variants: gradients, decode, slopes, savings', () => {
  it('gradients through RoPE, temperature, softcap, ALiBi and the variant masks equal central finite differences', () => {
    fc.assert(
      fc.property(problems(true), (spec) => {
        const result = runAttention(spec);
        const grads = result.gradients;
        assert.ok(grads);
        const targets: Array<[string, Matrix | undefined, Matrix | undefined]> = [
          ['X', spec.X, grads.dX],
          ['context', spec.context, grads.dContext],
          ['W_Q', spec.WQ?.[0], grads.dWQ],
          ['W_K', spec.WK?.[0], grads.dWK],
          ['W_V', spec.WV?.[0], grads.dWV],
          ['Q', spec.Q, spec.Q && concatenated(result.heads.map((h) => h.gradients!.dQ))],
        ];
        assertFiniteDifferences(targets, () => loss(spec), ` (${JSON.stringify(spec.options)})`);
      }),
      { numRuns: 120 },
    );
  });

  it('a decode step equals the last row of the full run, and says so', () => {
    fc.assert(
      fc.property(problems(false), (spec) => {
        const full = runAttention(spec);
        const step = runAttention({ ...spec, options: { ...spec.options, decode: true } });
        const last = full.output.rows - 1;
        assert.equal(step.output.rows, 1);
        step.output.data.forEach((x, c) => assert.ok(Math.abs(x - full.output.data[last * full.output.cols + c]) <= 1e-12 * (1 + Math.abs(x)), `column ${c}`));
        step.heads.forEach((head, h) => {
          const fullRow = full.heads[h].weights.data.slice(last * head.weights.cols);
          head.weights.data.forEach((w, j) => assert.ok(Math.abs(w - fullRow[j]) <= 1e-12, `head ${h + 1} weight ${j}`));
        });
        assert.equal(step.decode?.row, last);
        assert.ok((step.decode?.maxDifference ?? Infinity) <= 1e-12);
        assert.equal(step.decode?.fullWeights.length, spec.options.heads);
      }),
      { numRuns: 150 },
    );
  });

  it('RoPE scores depend only on relative positions: turning every position by the same shift changes no score', () => {
    fc.assert(
      fc.property(matrixOf(3, 4), matrixOf(3, 4), fc.integer({ min: 1, max: 50 }), fc.constantFrom<'half' | 'interleaved'>('half', 'interleaved'), (Q, K, shift, layout) => {
        const rope = { base: 10000, layout };
        const dot = (a: Matrix, b: Matrix, i: number, j: number): number => Array.from(a.data.slice(i * 4, i * 4 + 4)).reduce((s, x, c) => s + x * b.data[j * 4 + c], 0);
        const [q0, k0, q1, k1] = [rotate(Q, rope, 0, 'float64'), rotate(K, rope, 0, 'float64'), rotate(Q, rope, shift, 'float64'), rotate(K, rope, shift, 'float64')];
        for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) assert.ok(Math.abs(dot(q0, k0, i, j) - dot(q1, k1, i, j)) <= 1e-12 * 16);
        const back = rotate(q1, rope, shift, 'float64', -1);
        back.data.forEach((x, p) => assert.ok(Math.abs(x - Q.data[p]) <= 1e-14 * 8, 'turning back restores Q'));
      }),
      { numRuns: 100 },
    );
  });

  it('the ALiBi paper\u2019s slopes: 2^(−8h/H) for H = 8, and its rule for 6 heads', () => {
    assert.deepEqual(alibiSlopes(8), [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]);
    // 6 = 4 (2^-2, 2^-4, 2^-6, 2^-8) then every other slope of 8 heads: 2^-1, 2^-3.
    assert.deepEqual(alibiSlopes(6), [2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8, 2 ** -1, 2 ** -3]);
  });

  it('a causal window of 1 keeps the diagonal only; sinks add the first keys back, never a future one', () => {
    const X: Matrix = { rows: 5, cols: 2, data: Float64Array.from({ length: 10 }, (_, i) => Math.sin(i)) };
    const mask = (options: Partial<AttentionOptions>): boolean[][] => {
      const head = runAttention({ options: { heads: 1, score: 'scaled_dot', dtype: 'float64', ...options }, X }).heads[0];
      return Array.from({ length: 5 }, (_, i) => Array.from({ length: 5 }, (_, j) => head.mask!.data[i * 5 + j] === 0));
    };
    assert.deepEqual(mask({ causal: 'top-left', window: 1 }), [0, 1, 2, 3, 4].map((i) => [0, 1, 2, 3, 4].map((j) => i === j)));
    assert.deepEqual(mask({ causal: 'top-left', window: 1, sinks: 1 }), [0, 1, 2, 3, 4].map((i) => [0, 1, 2, 3, 4].map((j) => i === j || j === 0)));
    assert.deepEqual(mask({ window: 2 }), [0, 1, 2, 3, 4].map((i) => [0, 1, 2, 3, 4].map((j) => Math.abs(i - j) < 2)));
    assert.deepEqual(mask({ prefix: 2, causal: 'top-left' }), [0, 1, 2, 3, 4].map((i) => [0, 1, 2, 3, 4].map((j) => j < 2 || j <= i)));
  });

  it('mask savings: the blocked share, the FLOPs of those entries, and whole tiles a block-sparse kernel skips', () => {
    const n = 8;
    const causal: Matrix = { rows: n, cols: n, data: Float64Array.from({ length: n * n }, (_, p) => (p % n > Math.floor(p / n) ? -Infinity : 0)) };
    const savings = maskSavings(causal, { heads: 2, dK: 4, dV: 3 }, 2);
    assert.equal(savings.blockedShare, 28 / 64);
    assert.equal(savings.flopsSaved, 2 * 28 * (2 * 4 + 5 + 2 * 3));
    assert.equal(savings.skippedBlocksShare, 6 / 16); // the tiles strictly above the diagonal
    assert.equal(maskSavings(causal, { heads: 1, dK: 1, dV: 1 }).blockSize, 2); // n / 4 for small n
  });
});

/** Per-head dQ side by side: the gradient of the whole precomputed Q. */
function concatenated(perHead: Matrix[]): Matrix {
  const width = perHead[0].cols;
  const rows = perHead[0].rows;
  const out: Matrix = { rows, cols: width * perHead.length, data: new Float64Array(rows * width * perHead.length) };
  perHead.forEach((g, h) => {
    for (let r = 0; r < rows; r++) for (let c = 0; c < width; c++) out.data[r * out.cols + h * width + c] = g.data[r * width + c];
  });
  return out;
}
