// What the host sends a webview of each matrix (src/views/matrixView.ts): exact up to 512×512,
// else a max-pooled overview; zoomed regions cut from the full matrix. Plain node.
import assert from 'node:assert/strict';
import type { Matrix } from '../../src/core/types';
import { MAX_CELLS_PER_SIDE, viewOf } from '../../src/views/matrixView';

function matrix(rows: number, cols: number, at: (r: number, c: number) => number): Matrix {
  const data = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) data[r * cols + c] = at(r, c);
  return { rows, cols, data };
}

describe('panel matrix views', () => {
  it('sends a matrix up to 512×512 exactly', () => {
    const m = matrix(512, 7, (r, c) => r * 7 + c - 0.5);
    const view = viewOf(m);
    assert.deepEqual([view.rows, view.cols, view.rowBlock, view.colBlock], [512, 7, 1, 1]);
    assert.deepEqual(Array.from(view.data), Array.from(m.data));
  });

  it('pools a larger matrix by the maximum of each block, keeping −∞ and NaN visible', () => {
    const m = matrix(1030, 3, (r, c) => (r === 1029 && c === 2 ? NaN : c === 0 ? -Infinity : Math.sin(r * 3 + c)));
    const view = viewOf(m);
    assert.deepEqual([view.rows, view.cols, view.rowBlock, view.colBlock], [Math.ceil(1030 / 3), 3, 3, 1]);
    assert.ok(view.rows <= MAX_CELLS_PER_SIDE);
    for (let r = 0; r < view.rows; r++) {
      const rows = [3 * r, 3 * r + 1, 3 * r + 2].filter((row) => row < 1030);
      assert.equal(view.data[r * 3], -Infinity);
      const expected = Math.max(...rows.map((row) => m.data[row * 3 + 2]));
      if (Number.isNaN(expected)) assert.ok(Number.isNaN(view.data[r * 3 + 2]));
      else assert.equal(view.data[r * 3 + 2], expected);
    }
  });

  it('cuts a zoomed region exactly, clamped to the matrix', () => {
    const m = matrix(2000, 2000, (r, c) => r * 10_000 + c);
    const view = viewOf(m, { rowStart: 1990, rowEnd: 2100, colStart: 5, colEnd: 9 });
    assert.deepEqual([view.rowStart, view.colStart, view.rows, view.cols, view.rowBlock], [1990, 5, 10, 4, 1]);
    assert.equal(view.data[9 * 4 + 3], 1999 * 10_000 + 8);
  });
});
