// The two ways a model run uses the fast path. forwardFastHere runs a plan's phases on the calling
// thread: every step it materialises must be the compute threads' numbers bit for bit (a model
// run's views recompute heads this way and must show what the run computed), for both dtypes,
// causal masks, GQA and memory reused from an earlier run. `weightsOnly` computes every n×n step
// in the weights' memory: the same weights and output, bit for bit, in a quarter of the memory.
import * as assert from 'node:assert/strict';
import { forwardFast, forwardFastHere } from '../../../src/core/engine/fast';
import type { AttentionSpec, DType, Matrix } from '../../../src/core/types';

function filled(rows: number, cols: number, seed: number): Matrix {
  return { rows, cols, data: Float64Array.from({ length: rows * cols }, (_, i) => Math.sin(i * 0.37 + seed) * 2) };
}

const STEPS = ['scores', 'scaled', 'masked', 'weights', 'output'] as const;

function specOf(dtype: DType, n: number, causal: boolean, heads: number, kvHeads: number): AttentionSpec {
  const d = 16;
  return {
    Q: filled(n, heads * d, 1),
    K: filled(n, kvHeads * d, 2),
    V: filled(n, kvHeads * d, 3),
    options: { heads, kvHeads, score: 'scaled_dot', dtype, ...(causal ? { causal: 'top-left' as const } : {}) },
  };
}

describe('the fast path on the calling thread (forwardFastHere), and weights alone (weightsOnly)', function () {
  this.timeout(60_000);
  let memory: { output: Matrix } | undefined;

  for (const dtype of ['float32', 'float64'] as const) {
    for (const [n, causal, heads, kvHeads] of [[300, false, 1, 1], [257, true, 4, 2], [64, true, 2, 2]] as const) {
      it(`${dtype}, ${n} tokens, ${heads} heads on ${kvHeads} KV heads${causal ? ', causal' : ''}: the threads' numbers, step by step`, async () => {
        const spec = specOf(dtype, n, causal, heads, kvHeads);
        const threads = await forwardFast(spec, true);
        assert.ok(threads);
        const expected = threads.heads.map((head) => STEPS.map((step) => Array.from(head[step].data)));
        const here = forwardFastHere(spec, true, { recycle: memory });
        assert.ok(here);
        assert.deepEqual(here.heads.map((head) => STEPS.map((step) => Array.from(head[step].data))), expected);
        assert.ok(expected[0][3].some((w) => w > 0 && w < 1), 'weights computed');
        memory = { output: here.output }; // the next case runs on this memory
      });
    }
  }

  for (const dtype of ['float32', 'float64'] as const) {
    it(`${dtype}: weightsOnly gives the weights and output of a full run, bit for bit, with no other n×n step kept`, async () => {
      const spec = specOf(dtype, 300, true, 4, 2);
      const full = await forwardFast(spec, true);
      const alone = await forwardFast(spec, true, { weightsOnly: true });
      assert.ok(full && alone);
      for (const step of ['weights', 'output'] as const) {
        assert.deepEqual(alone.heads.map((head) => Array.from(head[step].data)), full.heads.map((head) => Array.from(head[step].data)), step);
      }
      assert.ok(alone.heads.every((head) => head.scores === undefined && head.scaled === undefined && head.masked === undefined));
      assert.equal(alone.plan.mask, undefined);
      const squareBytes = 300 * 300 * (dtype === 'float32' ? 4 : 8);
      // Scores, scaled and masked of 4 heads, and the mask: 13 n×n matrices fewer.
      assert.ok(full.plan.arena.totalBytes - alone.plan.arena.totalBytes >= 13 * squareBytes);
    });
  }
});

describe('causal weights alone stop each tile at its diagonal (the kernel skips the keys no row sees)', function () {
  this.timeout(60_000);

  /** Queries and keys of different lengths, causal from the bottom-right (the diagonal shifted by keys − queries). */
  function shifted(dtype: DType, queries: number, keys: number): AttentionSpec {
    const d = 8;
    return {
      Q: filled(queries, 2 * d, 4),
      K: filled(keys, d, 5),
      V: filled(keys, d, 6),
      options: { heads: 2, kvHeads: 1, score: 'scaled_dot', dtype, causal: 'bottom-right' },
    };
  }

  for (const dtype of ['float32', 'float64'] as const) {
    for (const [queries, keys] of [[100, 261], [37, 37], [261, 100]] as const) {
      it(`${dtype}, ${queries} queries on ${keys} keys: the full run's weights and output, bit for bit, on memory a dense run left full of weights`, async () => {
        const spec = shifted(dtype, queries, keys);
        const full = await forwardFast(spec, true);
        assert.ok(full);
        // A dense run first, its memory then recycled: every weight past a diagonal must be written 0 again.
        const dense = await forwardFast({ ...spec, options: { ...spec.options, causal: undefined } }, true, { weightsOnly: true });
        assert.ok(dense && dense.heads[0].weights.data.every((w) => w > 0));
        const alone = await forwardFast(spec, true, { weightsOnly: true, recycle: { output: dense.output } });
        assert.ok(alone);
        assert.equal(alone.output.data.buffer, dense.output.data.buffer, 'the dense run\'s memory');
        for (const step of ['weights', 'output'] as const) {
          assert.deepEqual(alone.heads.map((head) => Array.from(head[step].data)), full.heads.map((head) => Array.from(head[step].data)), step);
        }
        const weights = alone.heads[1].weights.data;
        const seen = (i: number) => Math.max(0, Math.min(keys, i + 1 + keys - queries));
        for (let i = 0; i < queries; i++) {
          for (let j = seen(i); j < keys; j++) assert.equal(weights[i * keys + j], 0, `weight (${i}, ${j}) past the diagonal`);
        }
        assert.ok(weights[(queries - 1) * keys] > 0, 'the last query sees the first key');
      });
    }
  }
});
