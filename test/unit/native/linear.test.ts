// The LinearBackend on ONNX Runtime against numpy/PyTorch products (scripts/gen_native_fixtures.py):
// both layouts of B (GPT-2's [in, out], nn.Linear's [out, in]), with and without bias, sizes that
// cut every blocking; the MLP activations in the graph as ops.ts computes them; bad sizes are a
// clear error.
import * as assert from 'node:assert/strict';
import { nativeLinearBackend, type NativeLinearBackend, warmNativeLinear } from '../../../src/core/engine/native/linear';
import { cachedSessions } from '../../../src/core/engine/native/runtime';
import { type LinearWeights, mlpByProducts, partsByProduct } from '../../../src/core/model/backend';
import type { Activation } from '../../../src/core/model/config';
import { activate } from '../../../src/core/model/ops';
import { linearCases as cases } from './choice';

describe('native LinearBackend', () => {
  let backend: NativeLinearBackend;
  before(() => {
    const loaded = nativeLinearBackend();
    assert.ok(loaded, 'ONNX Runtime loads on this platform');
    backend = loaded;
  });
  after(() => backend.dispose());

  for (const c of cases) {
    it(`${c.m}×${c.k} · ${c.bTransposed ? `(${c.n}×${c.k})ᵀ` : `${c.k}×${c.n}`}${c.bias ? ' + bias' : ''} as numpy computes it`, async () => {
      const bias = c.bias ? Float32Array.from(c.bias) : undefined;
      const product = await backend.matmul(Float32Array.from(c.a), Float32Array.from(c.b), c.m, c.k, c.n, c.bTransposed, bias);
      assert.equal(product.length, c.m * c.n);
      // float32 sums of k products of numbers in [−1, 1]: within k ulps of 1 of the exact value.
      const tolerance = c.k * 2 ** -23;
      product.forEach((x, i) => assert.ok(Math.abs(x - c.expected[i]) <= tolerance, `C[${i}] ${x} vs ${c.expected[i]}`));
    });
  }

  for (const activation of ['gelu-tanh', 'gelu-erf', 'silu', 'relu', 'gelu-quick'] as const) {
    it(`${activation} in the graph, after the bias: ops.ts's activation of the product, to float32 rounding`, async () => {
      const [m, k, n] = [9, 33, 70];
      const a = Float32Array.from({ length: m * k }, (_, i) => Math.sin(i * 0.7) * 2);
      const b = Float32Array.from({ length: k * n }, (_, i) => Math.cos(i * 0.3));
      const bias = Float32Array.from({ length: n }, (_, i) => (i % 7) - 3);
      const plain = await backend.matmul(a, b, m, k, n, false, bias);
      const want = activate(plain.slice(), activation);
      const got = await backend.matmul(a, b, m, k, n, false, bias, activation);
      assert.ok(plain.some((x) => x < -2) && plain.some((x) => x > 2), 'inputs on both tails');
      got.forEach((x, i) => assert.ok(Math.abs(x - want[i]) <= 4e-7 * Math.max(1, Math.abs(want[i])), `${activation}(${plain[i]}): ${x} vs ${want[i]}`));
    });
  }

  // GPT-2 ([in, out], biases, gelu_new), BERT (nn.Linear, biases, erf GELU), Llama (SwiGLU, no
  // biases), Gemma (GeGLU), OPT (ReLU), CLIP's vision tower (quick GELU): the graph's one run against its products one by one.
  const mlps: { name: string; transposed: boolean; bias: boolean; gated: boolean; activation: Activation }[] = [
    { name: 'GPT-2', transposed: false, bias: true, gated: false, activation: 'gelu-tanh' },
    { name: 'BERT', transposed: true, bias: true, gated: false, activation: 'gelu-erf' },
    { name: 'Llama', transposed: true, bias: false, gated: true, activation: 'silu' },
    { name: 'Gemma', transposed: true, bias: false, gated: true, activation: 'gelu-tanh' },
    { name: 'OPT', transposed: true, bias: true, gated: false, activation: 'relu' },
    { name: 'CLIP vision', transposed: true, bias: true, gated: false, activation: 'gelu-quick' },
  ];
  for (const kind of mlps) {
    it(`a ${kind.name} MLP in one graph, as its products one by one`, async () => {
      const [m, hidden, ffn] = [7, 24, 40];
      let seed = 5;
      const random = (length: number) => Float32Array.from({ length }, () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1);
      const layer = (inWidth: number, out: number): LinearWeights => ({ weight: random(inWidth * out), in: inWidth, out, transposed: kind.transposed, ...(kind.bias ? { bias: random(out) } : {}) });
      const weights = { up: layer(hidden, ffn), gate: kind.gated ? layer(hidden, ffn) : undefined, down: layer(ffn, hidden), activation: kind.activation };
      const x = random(m * hidden).map((v) => v * 3);
      const got = await backend.mlp(x, m, weights);
      const want = await mlpByProducts(backend, x, m, weights);
      assert.equal(got.length, m * hidden);
      // The same float32 products and activation; only the order of a sum may differ.
      got.forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1e-5 * Math.max(1, Math.abs(want[i])), `y[${i}] ${v} vs ${want[i]}`));
    });
  }

  for (const count of [1, 3, 5]) {
    it(`${count} expert MLP${count > 1 ? 's' : ''} in one graph, each on its own rows (the first a single row), as each alone`, async () => {
      const [hidden, ffn] = [24, 40];
      const rows = [1, 4, 6, 2, 3].slice(0, count);
      let seed = 11;
      const random = (length: number) => Float32Array.from({ length }, () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1);
      const layer = (inWidth: number, out: number): LinearWeights => ({ weight: random(inWidth * out), in: inWidth, out, transposed: true });
      const parts = rows.map((r) => ({ rows: r, weights: { up: layer(hidden, ffn), gate: layer(hidden, ffn), down: layer(ffn, hidden), activation: 'silu' as const } }));
      const total = rows.reduce((sum, r) => sum + r, 0);
      const x = random(total * hidden);
      const got = await backend.mlps(x, parts);
      assert.equal(got.length, total * hidden);
      let row = 0;
      for (const [p, { rows: r, weights }] of parts.entries()) {
        const want = await backend.mlp(x.subarray(row * hidden, (row + r) * hidden), r, weights);
        want.forEach((v, i) => assert.ok(Math.abs(got[row * hidden + i] - v) <= 1e-5 * Math.max(1, Math.abs(v)), `part ${p} y[${i}] ${got[row * hidden + i]} vs ${v}`));
        row += r;
      }
      await assert.rejects(backend.mlps(x.subarray(hidden), parts), /rows of 24/);
    });
  }

  for (const [transposed, bias] of [[false, true], [true, false]] as const) {
    it(`a product cut into parts by columns (GPT-2's c_attn into Q, K, V)${transposed ? ', B transposed' : ''}${bias ? ', with bias' : ''}, as the product's columns`, async () => {
      const [m, k, widths] = [6, 16, [12, 4, 4]];
      const out = widths.reduce((sum, width) => sum + width, 0);
      const x = Float32Array.from({ length: m * k }, (_, i) => Math.sin(i * 1.3));
      const w: LinearWeights = { weight: Float32Array.from({ length: k * out }, (_, i) => Math.cos(i * 0.7)), in: k, out, transposed, ...(bias ? { bias: Float32Array.from({ length: out }, (_, i) => i / 10) } : {}) };
      const got = await backend.matmulParts(x, m, w, widths);
      const want = await partsByProduct(backend, x, m, w, widths);
      assert.deepEqual(got.map((part) => part.length), widths.map((width) => m * width));
      got.forEach((part, p) => part.forEach((v, i) => assert.ok(Math.abs(v - want[p][i]) <= 1e-5, `part ${p} [${i}] ${v} vs ${want[p][i]}`)));
      await assert.rejects(backend.matmulParts(x, m, w, [12, 4]), /parts 12 \+ 4/);
    });
  }

  it('an MLP whose sizes do not match says which', async () => {
    const layer = (inWidth: number, out: number): LinearWeights => ({ weight: new Float32Array(inWidth * out), in: inWidth, out, transposed: false });
    await assert.rejects(backend.mlp(new Float32Array(8), 2, { up: layer(4, 6), down: layer(5, 4), activation: 'silu' }), /up 4×6, down 5×4/);
    await assert.rejects(backend.mlp(new Float32Array(8), 2, { up: { ...layer(4, 6), weight: new Float32Array(3) }, down: layer(6, 4), activation: 'silu' }), /up is 3 numbers for 4×6/);
  });

  it('a backend disposed while products of another are under way (two model runs at once) releases the sessions only once they end', async () => {
    const [m, k, n] = [64, 256, 256];
    const a = Float32Array.from({ length: m * k }, (_, i) => Math.sin(i));
    const b = Float32Array.from({ length: k * n }, (_, i) => Math.cos(i));
    const other = nativeLinearBackend()!;
    const want = await backend.matmul(a, b, m, k, n, true);
    const products = Array.from({ length: 8 }, () => backend.matmul(a, b, m, k, n, true));
    other.dispose();
    assert.ok(cachedSessions('linear:') > 0, 'kept while products are under way');
    for (const product of await Promise.all(products)) assert.deepEqual(product, want);
    assert.equal(cachedSessions('linear:'), 0, 'released once the last one ended');
    // A backend used after a release makes its session again.
    assert.deepEqual(await backend.matmul(a, b, m, k, n, true), want);
    assert.equal(cachedSessions('linear:'), 1);
  });

  it('warming ONNX Runtime (a folder prepared, every model run) leaves no session of its own, and a later warming releases no other backend\'s', async () => {
    await warmNativeLinear();
    assert.equal(cachedSessions('linear:false:false:'), 0, 'its 1 × 1 session released');
    await backend.matmul(Float32Array.of(1, 2), Float32Array.of(3, 4), 1, 2, 1, true);
    const kept = cachedSessions('linear:');
    assert.ok(kept > 0, 'a product\'s session cached');
    await warmNativeLinear();
    assert.equal(cachedSessions('linear:'), kept, 'the environment started once: nothing made or released again');
  });

  it('says which sizes do not match', async () => {
    await assert.rejects(backend.matmul(new Float32Array(6), new Float32Array(5), 2, 3, 2, false), /B 5 for 3×2/);
  });
});
