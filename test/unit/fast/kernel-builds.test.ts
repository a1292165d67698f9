// The kernels' two builds. The relaxed-SIMD one (fused multiply-adds: one rounding instead of two,
// so other last bits) runs wherever the engine can validate it: VS Code desktop's Electron as it
// is, and Node 20 (code-server, the command line, this process) once pool.ts turns V8's flag on.
// The 128-bit SIMD build stays for engines without relaxed SIMD, and for ATTENTION_LENS_KERNELS=
// simd128: the fast path's numeric tests run again on it in a child Node, at the same tolerances.
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

describe("the kernels' two builds", function () {
  this.timeout(600_000);

  it('runs the relaxed-SIMD build in this Node, which validates it once the engine turned its flag on', () => {
    assert.equal(kernelsFlavour(), 'relaxed');
    assert.ok(WebAssembly.validate(readFileSync(join(ROOT, 'src', 'core', 'engine', 'fast', 'attention-relaxed.wasm'))));
  });

  it("runs the 128-bit SIMD build when ATTENTION_LENS_KERNELS=simd128, which passes the fast path's numeric tests at the same tolerances", () => {
    const mocha = join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
    const args = ['--no-config', '--require', 'tsx/cjs', '--require', join(__dirname, 'simd128Only.cjs'), '--extension', 'ts', '--timeout', '60000', '--reporter', 'dot'];
    const child = spawnSync(process.execPath, [mocha, ...args, ...NUMERIC_TESTS], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ATTENTION_LENS_KERNELS: 'simd128' } });
    assert.equal(child.status, 0, `${child.stdout.slice(-4000)}\n${child.stderr.slice(-2000)}`);
    assert.match(child.stdout, /\d+ passing/);
  });
});
