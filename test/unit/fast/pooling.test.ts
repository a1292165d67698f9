// The panel's max pooling by the pool_max kernel (fast/pooling.ts) against views/matrixView.ts's
// JavaScript pooling, cell for cell, on real fast results: whole matrices and zoomed regions,
// blocks 1, 2 and 3 wide (the kernel's three column paths), ragged last blocks, and NaN and ±∞
// cells, which must win or lose exactly as in JavaScript.
import * as assert from 'node:assert/strict';
import { MessageChannel } from 'node:worker_threads';
import { maxPoolFast, runAttentionFast } from '../../../src/core/engine/fast';
import type { AttentionSpec, DType, Matrix } from '../../../src/core/types';
import { viewOf } from '../../../src/views/matrixView';

function columns(rows: number, cols: number, seed: number): Matrix {
  return { rows, cols, data: Float64Array.from({ length: rows * cols }, (_, i) => Math.sin(i * 0.61 + seed)) };
}

async function resultOf(n: number, dtype: DType) {
  const spec: AttentionSpec = { options: { heads: 1, score: 'scaled_dot', dtype }, Q: columns(n, 8, 1), K: columns(n, 8, 2), V: columns(n, 8, 3) };
  return runAttentionFast(spec, { referenceBelowFlops: 0 });
}

const REGIONS = [
  undefined, // the whole matrix
  { rowStart: 3, rowEnd: 1001, colStart: 5, colEnd: 1099 },
  { rowStart: 0, rowEnd: 700, colStart: 10, colEnd: 300 }, // 1 column per cell
  { rowStart: 17, rowEnd: 18, colStart: 0, colEnd: 1100 }, // one row
  { rowStart: 0, rowEnd: 1100, colStart: 1050, colEnd: 1051 }, // one column
];

describe('the panel\'s max pooling in WebAssembly (pool_max)', function () {
  this.timeout(60_000);

  for (const dtype of ['float32', 'float64'] as const) {
    it(`${dtype}: equals the JavaScript pooling cell for cell, NaN and ±∞ included`, async () => {
      const n = 1100;
      const { scores, weights } = (await resultOf(n, dtype)).heads[0];
      // Plant values the blocks must keep: NaN beats anything, +∞ beats numbers, −∞ loses.
      for (const [row, col, value] of [[0, 0, NaN], [700, 3, Infinity], [701, 4, NaN], [5, 1098, -Infinity], [1099, 1099, NaN], [17, 600, Infinity]] as const) {
        scores.data[row * n + col] = value;
      }
      for (const matrix of [scores, weights]) {
        for (const region of REGIONS) {
          const javascript = viewOf(matrix, region);
          let pooledByKernel = false;
          const kernel = viewOf(matrix, region, (...args) => {
            const data = maxPoolFast(...args);
            pooledByKernel = data !== undefined;
            return data;
          });
          assert.ok(pooledByKernel, `the kernel pooled ${JSON.stringify(region)}`);
          assert.deepEqual({ ...kernel, data: [] }, { ...javascript, data: [] });
          assert.ok(javascript.rowBlock > 1 || javascript.colBlock > 1, 'a pooled view');
          assert.ok(kernel.data instanceof Float64Array);
          const differ = Array.from(kernel.data).findIndex((value, i) => !Object.is(value, javascript.data[i]));
          assert.equal(differ, -1, `cell ${differ}: kernel ${kernel.data[differ]}, JavaScript ${javascript.data[differ]} (${JSON.stringify(region)})`);
        }
      }
      assert.ok(Number.isNaN(viewOf(scores, undefined, maxPoolFast).data[0]), 'the NaN block');
    });
  }

  it('pools a matrix that crossed threads and came back (a zoom request) on its run\'s memory too', async () => {
    const { weights } = (await resultOf(1100, 'float32')).heads[0];
    const channel = new MessageChannel();
    const received = new Promise<Matrix>((resolve) => channel.port2.once('message', resolve));
    channel.port1.postMessage(weights);
    const crossed = await received;
    channel.port1.close();
    assert.notEqual(crossed.data.buffer, weights.data.buffer, 'a new buffer object over the same memory');
    const region = { rowStart: 40, rowEnd: 1090, colStart: 3, colEnd: 1000 };
    const pooled = maxPoolFast(crossed, region.rowStart, region.rowEnd, region.colStart, region.colEnd, 3, 2);
    assert.ok(pooled, 'recognised and pooled by the kernel');
    assert.deepEqual(Array.from(pooled), Array.from(viewOf(weights, region).data));
  });

  it('answers undefined for a matrix that is not on a fast run\'s memory, and viewOf pools it in JavaScript', () => {
    const plain = columns(1100, 1100, 4);
    assert.equal(maxPoolFast(plain, 0, 1100, 0, 1100, 3, 3), undefined);
    assert.deepEqual(viewOf(plain, undefined, maxPoolFast), viewOf(plain));
  });
});
