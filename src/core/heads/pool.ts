// What the heads views draw, computed in the worker from full maps: each map pooled to a
// thumbnail (max or mean over blocks of weights), and the k strongest keys of each query for the
// head view's lines. Blocks are ceil(q / rows) × ceil(k / cols) weights from the top-left; the
// last row and column of blocks may be partial, and a mean is over the weights a block holds.
import type { AttentionStack, PoolMode } from './stack';

/** The model view's thumbnail side when it opens: a model run pools every head at it during its forward. */
export const DEFAULT_THUMBNAIL_SIDE = 48;

/** Every listed map pooled to rows × cols cells (blocks of rowBlock × colBlock weights, the last
 * ones partial); `data` holds the maps one after another, layer-major, each row-major. */
export interface PooledGrid {
  mode: PoolMode;
  layers: number[];
  heads: number[];
  rows: number;
  cols: number;
  rowBlock: number;
  colBlock: number;
  data: Float32Array;
}

/** The k strongest keys of each query, per head: `keys[(h·queryCount + q)·k + r]` is the r-th
 * strongest key of query q in heads[h], `weights` its weight (rows sorted strongest first). */
export interface HeadLines {
  layer: number;
  heads: number[];
  k: number;
  keys: Int32Array;
  weights: Float32Array;
}

type Weights = ArrayLike<number>;

/** The block size and pooled side for `count` weights shown in at most `side` cells. */
export function blocking(count: number, side: number): { block: number; cells: number } {
  const block = Math.max(1, Math.ceil(count / side));
  return { block, cells: Math.ceil(count / block) };
}

/**
 * One [rows × cols] map pooled into `out.max` and/or `out.mean` (rowCells × colCells, row-major).
 * One pass over the weights for both, a band of rowBlock rows at a time: each block's max and sum
 * are kept in locals while its columns are read, and go into the band's float64 accumulators once
 * per row, so the inner loop is a compare and an add (a store per weight into a float32 cell cost
 * 2–4× the CPU; a pass per mode, ~1.6× the time of one pass for both). `lowerTriangular`: the
 * caller vouches that every weight past a row's diagonal is 0 (a causal model's heads), so those
 * are not read: they add 0 to a sum and, weights being ≥ 0, raise no max above 0.
 */
export function poolMap(weights: Weights, rows: number, cols: number, rowBlock: number, colBlock: number, out: { max?: Float32Array; mean?: Float32Array }, lowerTriangular = false): void {
  const rowCells = Math.ceil(rows / rowBlock);
  const colCells = Math.ceil(cols / colBlock);
  const tops = new Float64Array(colCells);
  const sums = new Float64Array(colCells);
  for (let cellRow = 0; cellRow < rowCells; cellRow++) {
    const firstRow = cellRow * rowBlock;
    const endRow = Math.min(rows, firstRow + rowBlock);
    tops.fill(-Infinity);
    sums.fill(0);
    // The band's first row reads the fewest columns: every block from its first unread column on holds a 0.
    if (lowerTriangular && firstRow + 1 < cols) tops.fill(0, Math.floor((firstRow + 1) / colBlock));
    for (let row = firstRow; row < endRow; row++) {
      const at = row * cols;
      const rowEnd = lowerTriangular ? Math.min(cols, row + 1) : cols;
      for (let cell = 0, col = 0; col < rowEnd; cell++) {
        const endCol = Math.min(rowEnd, col + colBlock);
        let top = tops[cell];
        let sum = 0;
        for (; col < endCol; col++) {
          const value = weights[at + col];
          if (value > top) top = value;
          sum += value;
        }
        tops[cell] = top;
        sums[cell] += sum;
      }
    }
    const base = cellRow * colCells;
    for (let cell = 0; cell < colCells; cell++) {
      if (out.max) out.max[base + cell] = tops[cell];
      if (out.mean) out.mean[base + cell] = sums[cell] / ((endRow - firstRow) * (Math.min(cols, (cell + 1) * colBlock) - cell * colBlock));
    }
  }
}

/**
 * Max and mean thumbnails of a layer's heads (each [queries × keys]) at the model view's opening
 * size, pooled as each head's weights are computed and kept in place of the weights: a few kB per
 * head where the weights are n² floats.
 */
export class LayerPools {
  readonly rowBlock: number;
  readonly colBlock: number;
  private readonly cells: number;
  private readonly max: Float32Array;
  private readonly mean: Float32Array;

  constructor(
    heads: number,
    private readonly queryCount: number,
    private readonly keyCount: number,
    /** Every head has no weight past its diagonal (a causal model's): poolMap reads the lower triangles. */
    private readonly lowerTriangular = false,
    side = DEFAULT_THUMBNAIL_SIDE,
  ) {
    const rows = blocking(queryCount, side);
    const cols = blocking(keyCount, side);
    this.rowBlock = rows.block;
    this.colBlock = cols.block;
    this.cells = rows.cells * cols.cells;
    this.max = new Float32Array(heads * this.cells);
    this.mean = new Float32Array(heads * this.cells);
  }

  add(head: number, weights: Weights): void {
    poolMap(weights, this.queryCount, this.keyCount, this.rowBlock, this.colBlock, { max: this.thumbnail(head, 'max'), mean: this.thumbnail(head, 'mean') }, this.lowerTriangular);
  }

  /** Head `head` pooled by `mode`, when these are the blocks asked for. */
  get(head: number, mode: PoolMode, rowBlock: number, colBlock: number): Float32Array | undefined {
    return rowBlock === this.rowBlock && colBlock === this.colBlock ? this.thumbnail(head, mode) : undefined;
  }

  private thumbnail(head: number, mode: PoolMode): Float32Array {
    return (mode === 'max' ? this.max : this.mean).subarray(head * this.cells, (head + 1) * this.cells);
  }
}

/**
 * The listed layers × heads of a stack, each pooled to at most `size` × `size` cells: from the
 * stack's kept thumbnails where it has them at this size, else from the heads' weights: a layer's
 * at once (`headGroups`) where the stack computes them so and more than half of them are missing.
 */
export async function poolGrid(stack: AttentionStack, size: number, mode: PoolMode, layers: number[], heads: number[]): Promise<PooledGrid> {
  const { block: rowBlock, cells: rows } = blocking(stack.queryCount, size);
  const { block: colBlock, cells: cols } = blocking(stack.keyCount, size);
  const data = new Float32Array(layers.length * heads.length * rows * cols);
  for (const [l, layer] of layers.entries()) {
    const cellsOf = (h: number) => data.subarray((l * heads.length + h) * rows * cols, (l * heads.length + h + 1) * rows * cols);
    const pool = (h: number, weights: ArrayLike<number>) => poolMap(weights, stack.queryCount, stack.keyCount, rowBlock, colBlock, { [mode]: cellsOf(h) }, stack.lowerTriangular);
    const missing = new Map<number, number>(); // head → its place in `heads`
    heads.forEach((head, h) => {
      const kept = stack.pooled?.(layer, head, mode, rowBlock, colBlock);
      if (kept) cellsOf(h).set(kept);
      else missing.set(head, h);
    });
    if (stack.headGroups && 2 * missing.size > stack.headCount) {
      await stack.headGroups(layer, async (first, group) =>
        group.forEach((weights, k) => {
          const h = missing.get(first + k);
          if (h !== undefined) pool(h, weights);
        }),
      );
    } else for (const [head, h] of missing) pool(h, stack.weights(layer, head));
  }
  return { mode, layers, heads, rows, cols, rowBlock, colBlock, data };
}

/**
 * The k strongest keys of each row of one map, strongest first (ties: the lower key first), into
 * keys/weights from `at`. Keeps a sorted list of k per row: O(cols · k), no full sort.
 */
export function topKeys(weights: Weights, rows: number, cols: number, k: number, keys: Int32Array, values: Float32Array, at = 0): void {
  for (let row = 0; row < rows; row++) {
    const base = at + row * k;
    let held = 0;
    for (let col = 0; col < cols; col++) {
      const value = weights[row * cols + col];
      if (held === k && !(value > values[base + k - 1])) continue;
      let slot = held < k ? held++ : k - 1;
      while (slot > 0 && value > values[base + slot - 1]) {
        values[base + slot] = values[base + slot - 1];
        keys[base + slot] = keys[base + slot - 1];
        slot--;
      }
      values[base + slot] = value;
      keys[base + slot] = col;
    }
  }
}

/** The head view's lines: for each listed head of `layer`, each query's k strongest keys. */
export function headLines(stack: AttentionStack, layer: number, heads: number[], k: number): HeadLines {
  const kept = Math.min(k, stack.keyCount);
  const perHead = stack.queryCount * kept;
  const keys = new Int32Array(heads.length * perHead);
  const weights = new Float32Array(heads.length * perHead);
  heads.forEach((head, h) => topKeys(stack.weights(layer, head), stack.queryCount, stack.keyCount, kept, keys, weights, h * perHead));
  return { layer, heads, k: kept, keys, weights };
}
