// The kernels' relaxed-SIMD build (fused multiply-adds: one rounding instead of two, so other
// last bits) runs where the engine validates it — VS Code desktop's Electron by default, Node 20
// only with --experimental-wasm-relaxed-simd. The fast path's own tests run again on it in a child
// Node started with that flag, at the same tolerances; this process runs the plain build.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kernelsFlavour } from '../../../src/core/engine/fast/pool';

const ROOT = join(__dirname, '..', '..', '..');
/** The tests of the fast path's numbers: fixtures, properties against the reference, output only,
 * softmax tails; the panel's views posted as rules (fused float32 sums, no float64 rule); and the
 * head analyses' kernels (log, rollout products) with the scores and rollout against numpy. */
const NUMERIC_TESTS = [
  ...['fixtures', 'properties', 'output-only', 'softmax-tails'].map((name) => join(__dirname, `${name}.test.ts`)),
  join(ROOT, 'test', 'unit', 'panel', 'derived.test.ts'),
  ...['kernels', 'analysis'].map((name) => join(ROOT, 'test', 'unit', 'heads', `${name}.test.ts`)),
];

describe('the relaxed-SIMD build of the kernels', function () {
  this.timeout(600_000);

  it('is taken exactly where the engine validates it', () => {
    const relaxed = readFileSync(join(ROOT, 'src', 'core', 'engine', 'fast', 'attention-relaxed.wasm'));
    assert.equal(kernelsFlavour(), WebAssembly.validate(relaxed) ? 'relaxed' : 'simd128');
  });

  it("passes the fast path's numeric tests at the same tolerances", () => {
    const mocha = join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
    const args = ['--no-config', '--require', 'tsx/cjs', '--require', join(__dirname, 'relaxedOnly.cjs'), '--extension', 'ts', '--timeout', '60000', '--reporter', 'dot'];
    const child = spawnSync(process.execPath, ['--experimental-wasm-relaxed-simd', mocha, ...args, ...NUMERIC_TESTS], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(child.status, 0, `${child.stdout.slice(-4000)}\n${child.stderr.slice(-2000)}`);
    assert.match(child.stdout, /\d+ passing/);
  });
});
