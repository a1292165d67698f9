// One matrix as a heatmap draws it: exact when at most 512×512, else a max-pooled overview, and
// zoomed regions cut from the full matrix on request. Pure: the worker pools a result's views with
// it, the host a zoomed region, the heads pages' answers one head.
import type { Matrix } from '../core/types';
import type { MatrixView, Region } from '../protocol';

/** Largest number of rows or columns a heatmap draws cell by cell. */
export const MAX_CELLS_PER_SIDE = 512;

/**
 * Block maxima as viewOf computes them (row-major, NaN where a block holds one), by faster means
 * where it can — the engine worker passes the WebAssembly kernel's for fast results — or
 * undefined, and viewOf pools in JavaScript.
 */
export type MaxPool = (matrix: Matrix, rowStart: number, rowEnd: number, colStart: number, colEnd: number, rowBlock: number, colBlock: number) => Float64Array | undefined;

/**
 * The region of `matrix` as at most maxSide² cells: exact values when it fits, else
 * the maximum of each block. Max pooling keeps a sharp attention peak visible in the overview,
 * where a mean would dilute it by the block size.
 */
export function viewOf(matrix: Matrix, region: Region = wholeOf(matrix), maxPool?: MaxPool, maxSide = MAX_CELLS_PER_SIDE): MatrixView {
  const rowStart = clamp(region.rowStart, 0, matrix.rows - 1);
  const colStart = clamp(region.colStart, 0, matrix.cols - 1);
  const rowEnd = clamp(region.rowEnd, rowStart + 1, matrix.rows);
  const colEnd = clamp(region.colEnd, colStart + 1, matrix.cols);
  const rowBlock = Math.ceil((rowEnd - rowStart) / maxSide);
  const colBlock = Math.ceil((colEnd - colStart) / maxSide);
  const rows = Math.ceil((rowEnd - rowStart) / rowBlock);
  const cols = Math.ceil((colEnd - colStart) / colBlock);
  const base = { sourceRows: matrix.rows, sourceCols: matrix.cols, rowStart, colStart, rowBlock, colBlock, rows, cols };
  if (matrix.rows === 0 || matrix.cols === 0) return { ...base, rows: 0, cols: 0, data: new Float64Array(0) };
  const source = matrix.data;
  if (rowBlock === 1 && colBlock === 1) {
    const data = new Float64Array(rows * cols);
    for (let r = 0; r < rows; r++) {
      const from = (rowStart + r) * matrix.cols + colStart;
      data.set(source.subarray(from, from + cols), r * cols);
    }
    return { ...base, data };
  }
  const pooled = maxPool?.(matrix, rowStart, rowEnd, colStart, colEnd, rowBlock, colBlock);
  if (pooled) return { ...base, data: pooled };
  const data = new Float64Array(rows * cols).fill(-Infinity);
  for (let sourceRow = rowStart; sourceRow < rowEnd; sourceRow++) {
    const outRow = ((sourceRow - rowStart) / rowBlock) | 0;
    const rowOffset = sourceRow * matrix.cols;
    for (let c = 0; c < cols; c++) {
      const from = rowOffset + colStart + c * colBlock;
      const to = Math.min(from + colBlock, rowOffset + colEnd);
      let max = data[outRow * cols + c];
      for (let k = from; k < to; k++) {
        const value = source[k];
        // NaN wins: a pooled cell must not hide a NaN in its block.
        if (value > max || value !== value) max = value;
        if (max !== max) break;
      }
      data[outRow * cols + c] = max;
    }
  }
  return { ...base, data };
}

function wholeOf(matrix: Matrix): Region {
  return { rowStart: 0, rowEnd: matrix.rows, colStart: 0, colEnd: matrix.cols };
}

function clamp(value: number, low: number, high: number): number {
  return Math.max(low, Math.min(high, value));
}
