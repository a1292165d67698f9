// Cancelling a fast run: the compute threads poll the run's shared flag between shares of a kernel
// call, so a run stops part-way (its last heads are never computed) and rejects with
// CancelledError, and the pool serves the next run normally (its barrier and share counter reset).
import * as assert from 'node:assert/strict';
import { CancelledError, runAttention } from '../../../src/core/engine';
import { forwardFast, prepareRun } from '../../../src/core/engine/fast';
import { threadPool } from '../../../src/core/engine/fast/pool';
import type { AttentionSpec, Matrix } from '../../../src/core/types';

function random(rows: number, cols: number, seed: number): Matrix {
  let s = seed >>> 0;
  const data = new Float64Array(rows * cols);
  for (let p = 0; p < data.length; p++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    data[p] = s / 2 ** 32 - 0.5;
  }
  return { rows, cols, data };
}

/** 16 heads of 1024 tokens: ≥ 80 ms of kernels on two fast cores, so a flag raised after 20 ms
 * always lands before the last head starts. */
const heads = 16;
const n = 1024;
const d = 32;
const spec: AttentionSpec = {
  options: { heads, score: 'scaled_dot', dtype: 'float32' },
  Q: random(n, heads * d, 1),
  K: random(n, heads * d, 2),
  V: random(n, heads * d, 3),
};

function flag(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4));
}

describe('cancelling a fast run', function () {
  this.timeout(60_000);

  it('stops the threads part-way: the last head is never computed', async () => {
    const prepared = prepareRun(spec, true);
    assert.ok(prepared);
    const { plan, arena } = prepared;
    const cancel = flag();
    const running = threadPool().run(arena.memory, plan.phases, cancel);
    setTimeout(() => Atomics.store(cancel, 0, 1), 20);
    await assert.rejects(running, CancelledError);
    const last = plan.heads[heads - 1];
    assert.ok(arena.view(last.weights!).data.every((w) => w === 0), 'the last head\'s weights were written');
    assert.ok(arena.view(last.output).data.every((o) => o === 0), 'the last head\'s output was written');
  });

  it('a flag raised before the run rejects it, and the next run computes normally', async () => {
    const cancel = flag();
    Atomics.store(cancel, 0, 1);
    await assert.rejects(forwardFast(spec, true, { cancelFlag: cancel }), CancelledError);
    const pass = await forwardFast(spec, true, { cancelFlag: flag() });
    assert.ok(pass);
    const expected = runAttention(spec).output.data;
    let worst = 0;
    pass.output.data.forEach((value, i) => (worst = Math.max(worst, Math.abs(value - expected[i]))));
    assert.ok(worst < 1e-5, `output differs from the reference engine's by ${worst}`);
  });
});
