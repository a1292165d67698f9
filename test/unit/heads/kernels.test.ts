// The head analyses' WebAssembly kernels (src/core/heads/kernels.ts) against numpy
// (scripts/gen_head_references.py, test/fixtures/heads/kernels.json): −a·ln a over a sweep of a
// in both dtypes, the rollout's products of lower-triangular and dense factors in both output
// layouts, and the Jensen–Shannon divergence of pairs of heads row by row. analysis.test.ts checks
// the scores, rollout and divergences they make against numpy's definitions.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kernelsModule } from '../../../src/core/engine/fast/pool';

interface KernelReferences {
  entropy: Record<'float64' | 'float32', { a: number[]; expected: number[] }>;
  products: { name: string; n: number; a: number[][]; b: number[][]; product: number[][] }[];
  /** Pairs of heads A, B [3][37][43] and, per head, each row's divergence and their mean. */
  divergence: Record<'float64' | 'float32', { a: number[][][]; b: number[][][]; rows: number[][]; means: number[] }>;
}

const references = JSON.parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'heads', 'kernels.json'), 'utf8')) as KernelReferences;

/** A memory of `bytes` (from 1 KiB: the kernels treat low memory as unused) and the kernels on it. */
function kernelsWith(bytes: number) {
  const memory = new WebAssembly.Memory({ initial: Math.ceil((bytes + 1024) / 65536), maximum: 256, shared: true });
  const exports = new WebAssembly.Instance(kernelsModule(), { env: { memory } }).exports as Record<string, (...args: number[]) => void>;
  let end = 1024;
  const reserve = (count: number, size: number) => {
    const offset = end;
    end += Math.ceil((count * size) / 64) * 64;
    return offset;
  };
  return { buffer: memory.buffer, exports, reserve };
}

/** The largest |actual − expected| / max(|expected|, 1e-300) over the sweep. */
function worstRelative(actual: ArrayLike<number>, expected: number[]): number {
  let worst = 0;
  expected.forEach((e, k) => {
    worst = Math.max(worst, e === 0 ? Math.abs(actual[k]) : Math.abs(actual[k] - e) / Math.abs(e));
  });
  return worst;
}

describe('the head analyses\' WebAssembly kernels against numpy', () => {
  // Each value fills one vector (copies = lanes), so the row's sum is copies × −a·ln a exactly and
  // the vector logarithm (log_f64, log_f32) alone is measured. numpy's log is correctly rounded or
  // within 1 ulp; the kernels' are within a few of their dtype's (docs/analysis.md).
  const sweeps = { float64: { copies: 2, relative: 1e-15 }, float32: { copies: 4, relative: 2e-7 } };
  for (const dtype of ['float64', 'float32'] as const) {
    const { a, expected } = references.entropy[dtype];
    const { copies, relative } = sweeps[dtype];
    const suffix = dtype === 'float64' ? 'f64' : 'f32';
    it(`head_rows_${suffix}: −a·ln a within ${relative} relative over ${a.length} values from ${dtype === 'float64' ? '1e-300' : '1e-44'} to 1`, () => {
      const { buffer, exports, reserve } = kernelsWith(a.length * (copies + 1) * 8);
      const weights = reserve(a.length * copies, 8);
      const entropy = reserve(a.length, 8);
      const rows = dtype === 'float64' ? new Float64Array(buffer, weights, a.length * copies) : new Float32Array(buffer, weights, a.length * copies);
      a.forEach((value, i) => rows.fill(value, i * copies, (i + 1) * copies));
      exports[`head_rows_${suffix}`](weights, 1, a.length * copies, a.length, copies, entropy, 0, 1, 0, 0, 0, 1);
      const perValue = new Float64Array(buffer, entropy, a.length).map((total) => total / copies);
      // float32's subnormals (below 2^-126) get a wrong exponent: the vector logarithm takes their
      // exponent field (0) as the smallest normal's, so −ln a comes out between −ln 2^-126 and the
      // true −ln a (numpy's), each within float32's precision; no further.
      const normal = a.map((value) => dtype === 'float64' || value === 0 || value >= 2 ** -126);
      const worst = worstRelative(perValue.filter((_, k) => normal[k]), expected.filter((_, k) => normal[k]));
      assert.ok(worst <= relative, `worst relative error ${worst}`);
      perValue.forEach((value, k) => {
        if (normal[k]) return;
        const logOf = value / a[k]; // the kernel's −ln a
        const [lowest, highest] = [126 * Math.LN2 * (1 - relative), (expected[k] / a[k]) * (1 + relative)];
        assert.ok(logOf >= lowest && logOf <= highest, `subnormal ${a[k]}: −ln a computed as ${logOf}, not within [${lowest}, ${highest}] (numpy: ${expected[k]})`);
      });
    });
  }

  it('head_rows over a group of heads, rows shared by two parts: 0·ln 0 = 0, negative and NaN weights add nothing, each head\'s rows, the layer sum, the causal flag', () => {
    const row = [0.5, 0, 0.25, -0.125, NaN, 0.25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    const cols = row.length;
    const { buffer, exports, reserve } = kernelsWith(cols * 80);
    // Two heads of 2 rows, 2·cols + 3 elements apart (slots need not be packed): the second head's
    // first row is zero, its second one half of the first head's.
    const stride = 2 * cols + 3;
    const weights = reserve(2 * stride, 8);
    const entropy = reserve(4, 8);
    const sum = reserve(2 * cols, 8);
    const causal = reserve(1, 4);
    const heads = new Float64Array(buffer, weights, 2 * stride);
    heads.set([...row, ...row.map(() => 0)]);
    heads.set([...row.map(() => 0), ...row.map((a) => a / 2)], stride);
    new Float64Array(buffer, sum, 2 * cols).fill(7); // stale numbers: the layer's first head overwrites them
    new Int32Array(buffer, causal, 1)[0] = 1;
    for (const part of [0, 1]) exports.head_rows_f64(weights, 2, stride, 2, cols, entropy, sum, 1, causal, 0, part, 2);
    const expected = (a: number[]) => a.reduce((h, x) => (x > 0 ? h - x * Math.log(x) : h), 0);
    const [first, zero, , second] = new Float64Array(buffer, entropy, 4);
    assert.ok(Math.abs(first - expected(row)) < 1e-15, `entropy ${first}`);
    assert.equal(zero, 0);
    assert.equal(new Float64Array(buffer, entropy, 4)[2], 0);
    assert.ok(Math.abs(second - expected(row.map((a) => a / 2))) < 1e-15, `entropy ${second}`);
    let summed = [...new Float64Array(buffer, sum, 2 * cols)];
    assert.deepEqual(summed.slice(0, 3), [0.5, 0, 0.25]);
    assert.deepEqual(summed.slice(cols, cols + 3), [0.25, 0, 0.125]);
    assert.ok(Number.isNaN(summed[4]) && Number.isNaN(summed[cols + 4]));
    assert.deepEqual(summed.slice(6, cols), row.slice(6));
    // Row 0 has weights past its diagonal.
    assert.equal(new Int32Array(buffer, causal, 1)[0], 0);
    // A later group of the same layer adds into the sum; a causal head leaves the flag set.
    new Int32Array(buffer, causal, 1)[0] = 1;
    heads.fill(0);
    heads[0] = 1;
    heads.set([0.5, 0.5], cols);
    for (const part of [0, 1]) exports.head_rows_f64(weights, 1, stride, 2, cols, entropy, sum, 0, causal, 0, part, 2);
    summed = [...new Float64Array(buffer, sum, 2 * cols)];
    assert.deepEqual(summed.slice(0, 3), [1.5, 0, 0.25]);
    assert.deepEqual(summed.slice(cols, cols + 3), [0.75, 0.5, 0.125]);
    assert.equal(new Int32Array(buffer, causal, 1)[0], 1);
  });

  for (const dtype of ['float64', 'float32'] as const) {
    const suffix = dtype === 'float64' ? 'f64' : 'f32';
    it(`head_divergence_${suffix}: each row's Jensen–Shannon divergence of 3 pairs of 37 × 43 heads within 4.5e-16 of numpy, 0 exactly where numpy's is`, () => {
      // The rows hold what the kernel must get right (scripts/gen_head_references.py): tails of
      // zeros on one side, rows masked on both, zeros on one side only, weights down to the dtype's
      // smallest, one-hot rows apart (ln 2), equal rows (0); 43 keys leave a partial vector.
      const { a, b, rows } = references.divergence[dtype];
      const [queries, keys] = [a[0].length, a[0][0].length];
      const { buffer, exports, reserve } = kernelsWith(3 * queries * keys * 8);
      const [x, y, out] = [reserve(queries * keys, 8), reserve(queries * keys, 8), reserve(queries, 8)];
      const slot = (offset: number) => (dtype === 'float64' ? new Float64Array(buffer, offset, queries * keys) : new Float32Array(buffer, offset, queries * keys));
      rows.forEach((expected, head) => {
        slot(x).set(a[head].flat());
        slot(y).set(b[head].flat());
        // Two parts, as two threads would share them.
        for (const part of [0, 1]) exports[`head_divergence_${suffix}`](x, y, queries, keys, out, part, 2);
        const actual = new Float64Array(buffer, out, queries);
        expected.forEach((e, i) => {
          if (e === 0) assert.equal(actual[i], 0, `head ${head} row ${i}`);
          // Two ulp of values near ln 2 (numpy rounds its terms a·ln(a/m) otherwise).
          else assert.ok(Math.abs(actual[i] - e) <= 4.5e-16, `head ${head} row ${i}: ${actual[i]} against ${e}`);
        });
      });
    });
  }

  // float32: the factors rounded to float32 and the products' own rounding, against numpy's float64.
  const productTolerance = { float64: 1e-14, float32: 2e-6 };
  for (const dtype of ['float64', 'float32'] as const) {
    const suffix = dtype === 'float64' ? 'f64' : 'f32';
    const width = dtype === 'float64' ? 4 : 8; // pack's panels: two vectors
    for (const { name, n, a, b, product } of references.products) {
      for (const layout of ['panels', 'rows'] as const) {
        it(`rollout_product_${suffix}: ${name} ${n} × ${n} factors into ${layout}, within ${productTolerance[dtype]} of numpy`, () => {
          const padded = Math.ceil(n / width) * width;
          const { buffer, exports, reserve } = kernelsWith(6 * padded * padded * 8);
          const [rowsA, rowsB, packedA, panelsB, out, lower] = [reserve(n * n, 8), reserve(n * n, 8), reserve(padded * n, 8), reserve(padded * n, 8), reserve(padded * padded, 8), reserve(1, 4)];
          const numbers = (offset: number, length: number) => (dtype === 'float64' ? new Float64Array(buffer, offset, length) : new Float32Array(buffer, offset, length));
          new Int32Array(buffer, lower, 1)[0] = name === 'lower' ? 1 : 0;
          numbers(rowsA, n * n).set(a.flat());
          numbers(rowsB, n * n).set(b.flat());
          exports[`pack_rows_${suffix}`](rowsA, n, packedA, n, n, n, 0, 0, 1);
          exports[`pack_${suffix}`](rowsB, n, 0, panelsB, n, n, 0, 1);
          const [ldc, panel] = layout === 'rows' ? [padded, width] : [width, n * width];
          // Two parts, as two threads would share them.
          for (const part of [0, 1]) exports[`rollout_product_${suffix}`](packedA, panelsB, out, n, lower, ldc, panel, part, 2);
          const c = numbers(out, padded * padded);
          let worst = 0;
          for (let i = 0; i < n; i++) {
            for (let j = 0; j <= (name === 'lower' ? i : n - 1); j++) {
              const at = layout === 'rows' ? i * padded + j : Math.floor(j / width) * n * width + i * width + (j % width);
              worst = Math.max(worst, Math.abs(c[at] - product[i][j]));
            }
          }
          assert.ok(worst <= productTolerance[dtype], `worst absolute error ${worst}`);
        });
      }
    }
  }
});
