// The panel's max pooling of a fast result's matrices, by the pool_max kernel on this thread: the
// engine worker pools every large n×n matrix of a run for the panel (views/matrixView.ts viewOf),
// and in JavaScript that took longer than the run itself (8 heads of 1024 tokens: 378 ms of views
// after a 119 ms run). A matrix on a fast run's memory is pooled in place, in the scratch its plan
// reserved; anything else answers undefined and is pooled in JavaScript.
import type { DType, Matrix } from '../../types';
import type { Block } from './arena';
import { POOLED_CELLS } from './plan';
import { kernelsOn } from './pool';

interface PoolTarget {
  memory: WebAssembly.Memory;
  dtype: DType;
  row: Block;
  cells: Block;
}

/** The pooling scratch of the latest materialised run on each memory, by the memory's buffer. */
const targets = new WeakMap<ArrayBufferLike, PoolTarget>();
/** The latest targets, to recognise their memory under another buffer object (targetOf). */
const recent: WeakRef<PoolTarget>[] = [];
const RECENT_TARGETS = 8;

/** Called after a materialised run: its matrices may now be pooled in place. */
export function registerPoolTarget(target: PoolTarget): void {
  targets.set(target.memory.buffer, target);
  recent.unshift(new WeakRef(target));
  recent.length = Math.min(recent.length, RECENT_TARGETS);
}

/**
 * The target whose memory `buffer` views. A matrix that went to another thread and came back (the
 * panel's zoom requests) is on a new SharedArrayBuffer object over the same memory, which the map
 * does not know: a tag written into a recent target's scratch through its own buffer and read back
 * through `buffer` tells which memory it is (nothing else writes the scratch).
 */
function targetOf(buffer: ArrayBufferLike): PoolTarget | undefined {
  const known = targets.get(buffer);
  if (known || !(buffer instanceof SharedArrayBuffer)) return known;
  for (const ref of recent) {
    const target = ref.deref();
    if (!target || target.memory.buffer.byteLength !== buffer.byteLength) continue;
    const tag = (Math.random() * 0x7fffffff) | 1; // another memory holds it only by a 2^-31 chance
    new Int32Array(target.memory.buffer, target.row.offset, 1)[0] = tag;
    if (new Int32Array(buffer, target.row.offset, 1)[0] === tag) return target;
  }
  return undefined;
}

/**
 * The block maxima of rows [rowStart, rowEnd) × columns [colStart, colEnd) in blocks of
 * rowBlock × colBlock, row-major, NaN where a block holds one — or undefined when `matrix` is not
 * on a fast run's memory or the pooled cells do not fit its scratch.
 */
export function maxPoolFast(matrix: Matrix, rowStart: number, rowEnd: number, colStart: number, colEnd: number, rowBlock: number, colBlock: number): Float64Array | undefined {
  const target = targetOf(matrix.data.buffer);
  if (!target || (matrix.data instanceof Float32Array) !== (target.dtype === 'float32')) return undefined;
  const rows = Math.ceil((rowEnd - rowStart) / rowBlock);
  const cols = Math.ceil((colEnd - colStart) / colBlock);
  const size = target.dtype === 'float32' ? 4 : 8;
  if (rows * cols > POOLED_CELLS || (colEnd - colStart) * size > target.row.bytes) return undefined;
  const poolMax = kernelsOn(target.memory)[target.dtype === 'float32' ? 'pool_max_f32' : 'pool_max_f64'];
  poolMax(matrix.data.byteOffset, matrix.cols, rowStart, rowEnd, colStart, colEnd, rowBlock, colBlock, target.cells.offset, target.row.offset, 0, 1);
  return new Float64Array(target.memory.buffer, target.cells.offset, rows * cols).slice();
}
