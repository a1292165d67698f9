// The LinearBackend on ONNX Runtime against numpy/PyTorch products (scripts/gen_native_fixtures.py):
// both layouts of B (GPT-2's [in, out], nn.Linear's [out, in]), with and without bias, sizes that
// cut every blocking; bad sizes are a clear error.
import * as assert from 'node:assert/strict';
import { nativeLinearBackend, type NativeLinearBackend } from '../../../src/core/engine/native/linear';
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

  it('says which sizes do not match', async () => {
    await assert.rejects(backend.matmul(new Float32Array(6), new Float32Array(5), 2, 3, 2, false), /B 5 for 3×2/);
  });
});
