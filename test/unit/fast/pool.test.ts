// The compute threads must not keep the memories of finished runs alive: an idle thread's isolate
// almost never collects, so every memory it ran on stayed resident (ten 4096-token runs on fresh
// memory: 2.0 GB). Measured in a child process that can force the main thread's collections.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

function pinned(budgetBytes: number): { grownMiB: number; threadsStarted: number; droppedMiB: number } {
  const child = spawnSync(process.execPath, ['--expose-gc', join(__dirname, 'pinnedMemory.cjs'), String(budgetBytes)], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout) as { grownMiB: number; threadsStarted: number; droppedMiB: number };
}

describe('compute threads and the memories of finished runs', function () {
  this.timeout(60_000);

  it('are replaced once they have run on more than their budget, and the dropped memories go', () => {
    const bounded = pinned(64 * 2 ** 20);
    assert.ok(bounded.threadsStarted >= 2 + 2 * 5, `threads started: ${bounded.threadsStarted}`);
    assert.ok(bounded.grownMiB < 160, `resident memory grew by ${bounded.grownMiB.toFixed(0)} MiB of ${bounded.droppedMiB} dropped`);
  });

  it('without replacement every dropped memory stays resident (what the budget prevents)', () => {
    const unbounded = pinned(2 ** 40);
    assert.equal(unbounded.threadsStarted, 2);
    assert.ok(unbounded.grownMiB > 0.75 * unbounded.droppedMiB, `resident memory grew by only ${unbounded.grownMiB.toFixed(0)} MiB`);
  });
});
