// Pooling and top-k of the heads views against numpy (scripts/gen_saved_attentions.py): max and
// mean over blocks of ceil(q/size) × ceil(k/size) with partial last blocks, on a 37 × 29 map; the
// k strongest keys of each query with ties to the lower key; and a whole stack's grid and lines.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { headLines, poolGrid, poolMap, topKeys } from '../../../src/core/heads/pool';
import { stackOfResult } from '../../../src/core/heads/stackOfResult';

const DIR = join(__dirname, '..', '..', 'fixtures', 'heads', 'saved');
interface PoolCase { size: number; mode: 'max' | 'mean'; rowBlock: number; colBlock: number; rows: number; cols: number; values: number[] }
interface TopK { keys: number[]; weights: number[] }
const expected = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8')) as {
  pooling: { matrix: number[]; rows: number; cols: number; cases: PoolCase[]; topK: Record<string, TopK> };
  ties: { matrix: number[]; rows: number; cols: number } & TopK;
};
const { pooling } = expected;
const map = Float64Array.from(pooling.matrix);
const close = (got: ArrayLike<number>, want: number[], tolerance: number) => {
  assert.equal(got.length, want.length);
  want.forEach((value, i) => assert.ok(Math.abs(got[i] - value) <= tolerance * Math.max(1, Math.abs(value)), `[${i}] ${got[i]} vs ${value}`));
};

describe('heads pooling', () => {
  for (const c of pooling.cases) {
    it(`${c.mode} pools 37 × 29 to at most ${c.size} per side as numpy does`, async () => {
      const stack = stackOfResult({ heads: [{ weights: { rows: pooling.rows, cols: pooling.cols, data: map } }] }, { source: { kind: 'problem', document: 'd', problem: 0 } });
      const grid = await poolGrid(stack, c.size, c.mode, [0], [0]);
      assert.deepEqual([grid.rowBlock, grid.colBlock, grid.rows, grid.cols], [c.rowBlock, c.colBlock, c.rows, c.cols]);
      // The grid is float32: its rounding, no more.
      close(grid.data, c.values, 2 ** -23);
    });
  }

  it('pools into the given cells only and overwrites what was there', () => {
    const out = new Float32Array(5).fill(7);
    poolMap([0.5, 0.5, 1, 0], 2, 2, 2, 1, { mean: out });
    assert.deepEqual([...out], [0.75, 0.25, 7, 7, 7]);
  });

  it('pools max and mean in one pass as each alone', () => {
    const weights = Float32Array.from({ length: 37 * 29 }, (_, i) => Math.abs(Math.sin(i * 1.3)));
    const both = { max: new Float32Array(12), mean: new Float32Array(12) };
    poolMap(weights, 37, 29, 10, 8, both);
    const max = new Float32Array(12);
    const mean = new Float32Array(12);
    poolMap(weights, 37, 29, 10, 8, { max });
    poolMap(weights, 37, 29, 10, 8, { mean });
    assert.deepEqual(both, { max, mean });
    assert.ok(max.every((m, i) => m >= mean[i] && m > 0));
  });
});

describe('heads pooling, lower triangles only', () => {
  it('a map with no weight past its diagonal pools the same reading only up to each diagonal, for any blocks', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 12 }), fc.integer(), (n, rowBlock, colBlock, seed) => {
        let state = seed >>> 0 || 1;
        const random = () => (state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32;
        const weights = Float32Array.from({ length: n * n }, (_, i) => (i % n <= Math.floor(i / n) ? random() : 0));
        const cells = Math.ceil(n / rowBlock) * Math.ceil(n / colBlock);
        const whole = { max: new Float32Array(cells), mean: new Float32Array(cells) };
        const lower = { max: new Float32Array(cells), mean: new Float32Array(cells) };
        poolMap(weights, n, n, rowBlock, colBlock, whole);
        poolMap(weights, n, n, rowBlock, colBlock, lower, true);
        assert.deepEqual(lower, whole);
      }),
      { numRuns: 300 },
    );
  });

  it('leaves the weights past a diagonal unread (a stack said lower triangular: a causal model\'s run)', () => {
    const weights = Float32Array.from({ length: 16 }, (_, i) => (i % 4 <= Math.floor(i / 4) ? 0.25 : 9));
    const cells = { max: new Float32Array(4), mean: new Float32Array(4) };
    poolMap(weights, 4, 4, 2, 2, cells, true);
    assert.deepEqual([...cells.max], [0.25, 0, 0.25, 0.25]);
    assert.deepEqual([...cells.mean], [0.1875, 0, 0.25, 0.1875]);
  });
});

describe('heads top-k', () => {
  for (const [k, want] of Object.entries(pooling.topK)) {
    it(`keeps each query's ${k} strongest keys as numpy's stable sort does`, () => {
      const keys = new Int32Array(pooling.rows * Number(k));
      const weights = new Float32Array(keys.length);
      topKeys(map, pooling.rows, pooling.cols, Number(k), keys, weights);
      assert.deepEqual([...keys], want.keys);
      close(weights, want.weights, 2 ** -23);
    });
  }

  it('breaks ties toward the lower key', () => {
    const { ties } = expected;
    const keys = new Int32Array(ties.rows * 3);
    const weights = new Float32Array(keys.length);
    topKeys(ties.matrix, ties.rows, ties.cols, 3, keys, weights);
    assert.deepEqual([...keys], ties.keys);
    assert.deepEqual([...weights], ties.weights);
  });

  it('gives a stack\'s lines per head, k capped at the key count', () => {
    const heads = [0, 1].map((h) => ({ weights: { rows: 2, cols: 3, data: Float64Array.from(h === 0 ? [0.1, 0.7, 0.2, 1, 0, 0] : [0.3, 0.3, 0.4, 0, 0.5, 0.5]) } }));
    const stack = stackOfResult({ heads }, { source: { kind: 'problem', document: 'd', problem: 0 }, tokens: ['a', 'b'] });
    assert.deepEqual([stack.tokens, stack.keyTokens], [['a', 'b'], ['0', '1', '2']]);
    const lines = headLines(stack, 0, [1, 0], 5);
    assert.equal(lines.k, 3);
    assert.deepEqual([...lines.keys], [2, 0, 1, 1, 2, 0, 1, 2, 0, 0, 1, 2]);
    assert.deepEqual([...lines.weights], [0.4, 0.3, 0.3, 0.5, 0.5, 0, 0.7, 0.2, 0.1, 1, 0, 0].map(Math.fround));
  });
});
