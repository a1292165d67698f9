// `npm test`'s closing line adds up what each suite printed (scripts/lib/test-counts.mjs): here
// the counts are read from the real output of mocha and of node:test on small suites with a test
// of each kind, so a change of either runner's wording fails here, not silently in the total.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { countTests, skipReasons } from '../../../scripts/lib/test-counts.mjs';

const repoRoot = resolve(__dirname, '..', '..', '..');

function outputOf(command: string, args: string[]): string[] {
  const run = spawnSync(command, args, { cwd: repoRoot, encoding: 'utf8' });
  return `${run.stdout}\n${run.stderr}`.split('\n');
}

describe('npm test reads every suite\'s counts', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'attention-counts-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('from mocha: passing, failing and pending, and the reason a skip gave', () => {
    const spec = join(dir, 'kinds.test.ts');
    writeFileSync(spec, `import { skipBecause } from ${JSON.stringify(join(repoRoot, 'test', 'skip'))};
describe('kinds', () => {
  it('passes', () => {});
  it('passes too', () => {});
  it('fails', () => { throw new Error('on purpose'); });
  it('skips', function () { skipBecause(this, 'the reason it gives'); });
  it.skip('skips without a reason', () => {});
});
`);
    const lines = outputOf(process.execPath, [join(repoRoot, 'node_modules', 'mocha', 'bin', 'mocha.js'), '--no-config', '--require', 'tsx/cjs', spec]);
    assert.deepEqual(countTests(lines), { passed: 2, failed: 1, skipped: 2 }, lines.join('\n'));
    assert.deepEqual(skipReasons(lines), ['kinds skips — the reason it gives']);
  });

  it('from node:test: pass, fail, and skip and todo both as skipped', () => {
    const spec = join(dir, 'kinds.test.mjs');
    writeFileSync(spec, `import { test } from 'node:test';
test('passes', () => {});
test('fails', () => { throw new Error('on purpose'); });
test('skips', { skip: 'no reason needed' }, () => {});
test('is to do', { todo: true }, () => {});
test('is to do too', { todo: true }, () => {});
`);
    const lines = outputOf(process.execPath, ['--test', '--test-reporter=tap', spec]);
    assert.deepEqual(countTests(lines), { passed: 1, failed: 1, skipped: 3 }, lines.join('\n'));
  });

  it('from our runners: `N passed, N failed, N skipped`, and the older line without skips', () => {
    assert.deepEqual(countTests(['integration (code-server, 12.0 s): 5 passed, 1 failed, 2 skipped']), { passed: 5, failed: 1, skipped: 2 });
    assert.deepEqual(countTests(['package targets: 7 passed, 0 failed']), { passed: 7, failed: 0, skipped: 0 });
    assert.equal(countTests(['nothing to count here']), null);
  });
});
