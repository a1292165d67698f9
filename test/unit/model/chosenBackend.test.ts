// The model's default LinearBackend: ONNX Runtime where it loads, the WebAssembly kernels when
// ATTENTION_LENS_BACKEND=wasm forces them or where ONNX Runtime cannot load; numpy's products
// (test/fixtures/native/linear.json, scripts/gen_native_fixtures.py) either way.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ChosenLinearBackend } from '../../../src/core/model/chosenBackend';
import { forced, linearCases as cases } from '../native/choice';

const root = join(__dirname, '..', '..', '..');

/** Every case's product on `backend`, each within k ulps of 1 of numpy's. */
async function assertProducts(backend: ChosenLinearBackend): Promise<void> {
  for (const c of cases) {
    const product = await backend.matmul(Float32Array.from(c.a), Float32Array.from(c.b), c.m, c.k, c.n, c.bTransposed, c.bias ? Float32Array.from(c.bias) : undefined);
    const tolerance = c.k * 2 ** -23;
    product.forEach((x, i) => assert.ok(Math.abs(x - c.expected[i]) <= tolerance, `${c.m}×${c.k}×${c.n}: C[${i}] ${x} vs ${c.expected[i]}`));
  }
}

describe('the model\'s LinearBackend, chosen', function () {
  this.timeout(60_000);

  for (const [choice, name] of [[undefined, 'onnxruntime'], ['native', 'onnxruntime'], ['wasm', 'wasm']] as const) {
    it(`${choice ?? 'nothing'} forced: the products run on ${name}, as numpy computes them`, async () => {
      await forced(choice, async () => {
        const backend = new ChosenLinearBackend();
        try {
          assert.equal(backend.name, name);
          await assertProducts(backend);
          assert.equal(backend.fallback, undefined);
        } finally {
          backend.dispose();
        }
      });
    });
  }

  it('where ONNX Runtime cannot load, the WebAssembly kernels compute and the backend says why', () => {
    const program = `
      const { ChosenLinearBackend } = require('./src/core/model/chosenBackend.ts');
      const backend = new ChosenLinearBackend();
      backend.matmul(Float32Array.of(1, 2, 3, 4), Float32Array.of(5, 6, 7, 8), 2, 2, 2, false, Float32Array.of(1, -1)).then((c) => {
        console.log(JSON.stringify({ name: backend.name, fallback: backend.fallback, product: Array.from(c) }));
        backend.dispose();
      });`;
    const run = spawnSync(process.execPath, ['-r', join(root, 'test', 'unit', 'native', 'withoutNative.cjs'), '-r', 'tsx/cjs', '-e', program], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, ATTENTION_LENS_BACKEND: 'native' },
    });
    assert.equal(run.status, 0, run.stderr);
    const { name, fallback, product } = JSON.parse(run.stdout) as { name: string; fallback: string; product: number[] };
    assert.equal(name, 'wasm');
    assert.match(fallback, /^the native backend \(ONNX Runtime\) is not available here/);
    assert.deepEqual(product, [1 * 5 + 2 * 7 + 1, 1 * 6 + 2 * 8 - 1, 3 * 5 + 4 * 7 + 1, 3 * 6 + 4 * 8 - 1]);
  });
});
