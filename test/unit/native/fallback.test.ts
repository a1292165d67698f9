// Where ONNX Runtime cannot load (no binaries for the platform, the universal .vsix, an old glibc),
// the WebAssembly kernels compute, silently: the result is right and names the reason (the
// worker logs it once, the status bar hints at it).
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..', '..');

/** Runs `program` (TypeScript under tsx) in a node where requiring onnxruntime-node fails. */
function withoutNative(program: string): string {
  const run = spawnSync(process.execPath, ['-r', join(__dirname, 'withoutNative.cjs'), '-r', 'tsx/cjs', '-e', program], { cwd: root, encoding: 'utf8', env: { ...process.env, ATTENTION_LENS_BACKEND: 'native' } });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

describe('native backend missing', function () {
  this.timeout(60_000);

  it('the WebAssembly kernels compute, the result says why, and the numbers are the reference\'s', () => {
    const out = withoutNative(`
      const { runAttentionOnBackend, attentionOutputOnBackend } = require('./src/core/engine/native/select.ts');
      const { runAttention } = require('./src/core/engine/index.ts');
      const m = (rows, cols, seed) => ({ rows, cols, data: Float64Array.from({ length: rows * cols }, (_, i) => Math.sin(seed * 7.1 + i * 0.37)) });
      const spec = { options: { heads: 2, score: 'scaled_dot', dtype: 'float32' }, X: m(256, 32, 1), WQ: [m(32, 32, 2)], WK: [m(32, 32, 3)], WV: [m(32, 32, 4)] };
      (async () => {
        const result = await runAttentionOnBackend(spec);
        const outputOnly = await attentionOutputOnBackend(spec);
        const reference = runAttention(spec).output.data;
        const error = (data) => Math.max(...Array.from(data, (x, i) => Math.abs(x - reference[i])));
        console.log(JSON.stringify({ backend: result.backend, error: error(result.output.data), outputOnlyError: error(outputOnly.output.data) }));
      })();`);
    const { backend, error, outputOnlyError } = JSON.parse(out);
    assert.equal(backend.name, 'wasm');
    assert.match(backend.fallback, /^the native backend \(ONNX Runtime\) is not available here: Cannot find module onnxruntime_binding\.node/);
    assert.ok(error < 1e-5 && outputOnlyError < 1e-5, `${error}, ${outputOnlyError}`);
  });

  it('a float64 problem falls back the same way', () => {
    const out = withoutNative(`
      const { runAttentionOnBackend } = require('./src/core/engine/native/select.ts');
      const m = (rows, cols, seed) => ({ rows, cols, data: Float64Array.from({ length: rows * cols }, (_, i) => Math.cos(seed + i)) });
      runAttentionOnBackend({ options: { heads: 1, score: 'dot', dtype: 'float64' }, Q: m(64, 16, 1), K: m(64, 16, 2), V: m(64, 16, 3) }, { referenceBelowFlops: 0 })
        .then((result) => console.log(JSON.stringify(result.backend)));`);
    assert.equal(JSON.parse(out).name, 'wasm');
  });
});
