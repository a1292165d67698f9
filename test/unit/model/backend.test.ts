// The portable LinearBackend (WebAssembly gemm kernels) and its JavaScript fallback against a
// float64 product, over edge shapes (one row, widths off the kernels' 4-row and 8-column tiles),
// both storage layouts of B, with and without a bias.
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import type { LinearWeights } from '../../../src/core/model/backend';
import { activate } from '../../../src/core/model/ops';
import { blockedMatmul, WasmLinearBackend } from '../../../src/core/model/wasmBackend';

function product64(a: Float32Array, b: Float32Array, m: number, k: number, n: number, transposed: boolean, bias?: Float32Array): Float64Array {
  const c = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = bias ? bias[j] : 0;
      for (let p = 0; p < k; p++) s += a[i * k + p] * (transposed ? b[j * k + p] : b[p * n + j]);
      c[i * n + j] = s;
    }
  }
  return c;
}

function assertNear(got: Float32Array, want: Float64Array, k: number): void {
  assert.equal(got.length, want.length);
  // float32 accumulation over k terms of magnitude ≤ 1: a few k·ε.
  const tolerance = 4 * k * 2 ** -23 + 1e-6;
  want.forEach((v, i) => assert.ok(Math.abs(got[i] - v) <= tolerance, `entry ${i}: ${got[i]} vs ${v}`));
}

describe('LinearBackend: WebAssembly gemm', function () {
  this.timeout(120000);
  const backend = new WasmLinearBackend();
  after(() => backend.dispose());

  it('C = A·B and A·Bᵀ (+ bias) as a float64 product, for any shape', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 37 }), fc.integer({ min: 1, max: 70 }), fc.integer({ min: 1, max: 41 }), fc.boolean(), fc.boolean(), fc.integer(), async (m, k, n, transposed, withBias, seed) => {
        let state = seed >>> 0 || 1;
        const random = () => ((state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
        const a = Float32Array.from({ length: m * k }, random);
        const b = Float32Array.from({ length: k * n }, random);
        const bias = withBias ? Float32Array.from({ length: n }, random) : undefined;
        const want = product64(a, b, m, k, n, transposed, bias);
        assertNear(await backend.matmul(a, b, m, k, n, transposed, bias), want, k);
        const fallback = blockedMatmul(a, b, m, k, n, transposed);
        assertNear(fallback, product64(a, b, m, k, n, transposed), k);
      }),
      { numRuns: 60 },
    );
  });

  it('an MLP, gated (SwiGLU) and not (GPT-2), as float64 products and ops.ts\'s activation', async () => {
    const [m, hidden, ffn] = [5, 12, 20];
    let seed = 3;
    const random = (length: number) => Float32Array.from({ length }, () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1);
    const x = random(m * hidden);
    for (const gated of [false, true]) {
      const layer = (inWidth: number, out: number, transposed: boolean): LinearWeights => ({ weight: random(inWidth * out), in: inWidth, out, transposed, ...(gated ? {} : { bias: random(out) }) });
      const up = layer(hidden, ffn, gated);
      const gate = gated ? layer(hidden, ffn, true) : undefined;
      const down = layer(ffn, hidden, gated);
      const activation = gated ? 'silu' : 'gelu-tanh';
      const upped = product64(x, up.weight, m, hidden, ffn, up.transposed, up.bias);
      const act = Float64Array.from(activate(Float32Array.from(gate ? product64(x, gate.weight, m, hidden, ffn, true) : upped), activation));
      const inner = Float32Array.from(act, (v, i) => (gate ? v * upped[i] : v));
      const want = product64(inner, down.weight, m, ffn, hidden, down.transposed, down.bias);
      const got = await backend.mlp(x, m, { up, gate, down, activation });
      got.forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1e-4, `${gated ? 'gated' : 'plain'} y[${i}] ${v} vs ${want[i]}`));
    }
  });

  it('several MLPs each on its own rows, as each MLP alone', async () => {
    const [hidden, ffn, rows] = [6, 10, [3, 1, 2]];
    let seed = 7;
    const random = (length: number) => Float32Array.from({ length }, () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1);
    const layer = (inWidth: number, out: number): LinearWeights => ({ weight: random(inWidth * out), in: inWidth, out, transposed: true });
    const parts = rows.map((r) => ({ rows: r, weights: { up: layer(hidden, ffn), gate: layer(hidden, ffn), down: layer(ffn, hidden), activation: 'silu' as const } }));
    const x = random(6 * hidden);
    const got = await backend.mlps(x, parts);
    let row = 0;
    for (const { rows: r, weights } of parts) {
      const want = await backend.mlp(x.slice(row * hidden, (row + r) * hidden), r, weights);
      assert.deepEqual(got.subarray(row * hidden, (row + r) * hidden), want);
      row += r;
    }
  });

  it('a product cut into parts by columns, each part as the float64 product\'s columns', async () => {
    const [m, k, widths] = [5, 9, [6, 3, 3]];
    const n = 12;
    const a = Float32Array.from({ length: m * k }, (_, i) => Math.sin(i));
    const b = Float32Array.from({ length: k * n }, (_, i) => Math.cos(i));
    const bias = Float32Array.from({ length: n }, (_, i) => i / 7);
    const whole = product64(a, b, m, k, n, false, bias);
    const parts = await backend.matmulParts(a, m, { weight: b, in: k, out: n, transposed: false, bias }, widths);
    let start = 0;
    parts.forEach((part, p) => {
      const want = Float64Array.from({ length: m * widths[p] }, (_, i) => whole[Math.floor(i / widths[p]) * n + start + (i % widths[p])]);
      assertNear(part, want, k);
      start += widths[p];
    });
  });

  it('a product larger than the memory it last used, then a smaller one on that memory', async () => {
    const big = await backend.matmul(new Float32Array(300 * 200).fill(1), new Float32Array(200 * 100).fill(0.5), 300, 200, 100, false);
    assert.ok(big.every((v) => v === 100));
    const small = await backend.matmul(Float32Array.of(1, 2), Float32Array.of(3, 4), 1, 2, 1, true);
    assert.deepEqual([...small], [11]);
    assert.ok(big.every((v) => v === 100), 'an earlier result is the caller\'s own copy');
  });
});
