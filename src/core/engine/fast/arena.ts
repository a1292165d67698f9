// The shared memory of one fast run: every input, intermediate and result has a fixed byte
// offset, planned before anything is written, so the kernels pass pointers and never copy
// between steps. Each run gets its own WebAssembly.Memory: the results are views on it, handed
// to the caller without a copy, and the memory is freed when the last view is dropped.
import type { DType, Matrix } from '../../types';

const PAGE = 65536;
/** The operating system's page: the unit a first touch faults in. */
const OS_PAGE = 4096;
/** Every block starts on a cache line (and on a 16-byte SIMD boundary). */
const ALIGN = 64;
/** Bytes at the start of every run's memory that nothing uses (wasm-opt --low-memory-unused). */
const LOW_MEMORY_UNUSED = 1024;

/** `array` with one element of each 4 KiB page written (the 0 it holds): mapped now, not at a first touch in the middle of a run. */
export function pagedIn<T extends Uint8Array | Float32Array | Float64Array>(array: T): T {
  const perPage = OS_PAGE / array.BYTES_PER_ELEMENT;
  for (let i = 0; i < array.length; i += perPage) array[i] = 0;
  return array;
}

export interface Block {
  offset: number;
  bytes: number;
}

export class ArenaPlan {
  // The first KiB stays unused: a zero pointer means "absent" to the kernels, and attention.wasm
  // was optimised on the promise that low memory is never addressed (build-wasm.mjs).
  private end = LOW_MEMORY_UNUSED;

  reserve(bytes: number): Block {
    const block = { offset: this.end, bytes };
    this.end += Math.ceil(bytes / ALIGN) * ALIGN;
    return block;
  }

  /** Columns of the widest matrix planned so far. */
  widest = 0;

  matrix(rows: number, cols: number, dtype: DType): MatrixBlock {
    this.widest = Math.max(this.widest, cols);
    return { ...this.reserve(rows * cols * bytesOf(dtype)), rows, cols };
  }

  get totalBytes(): number {
    return this.end;
  }
}

export interface MatrixBlock extends Block {
  rows: number;
  cols: number;
}

export function bytesOf(dtype: DType): number {
  return dtype === 'float32' ? 4 : 8;
}

/** Largest memory a wasm32 module can address. */
export const MAX_BYTES = 65536 * PAGE;

const ROUNDING_CHUNK = new Float32Array(16384);

/** Every run's memory, by its buffer, so a result's matrices lead back to the memory to recycle. */
const memories = new WeakMap<ArrayBufferLike, WebAssembly.Memory>();

export class Arena {
  readonly memory: WebAssembly.Memory;
  readonly buffer: SharedArrayBuffer;

  /**
   * A fresh memory, or the memory behind `recycle` (a matrix of an earlier run whose results the
   * caller no longer reads) when it is large enough. Fresh pages cost a page fault each on first
   * touch — about 3 µs per 4 KiB here, 140 ms for the 192 MB of a 4096-token float32 run.
   */
  constructor(
    plan: ArenaPlan,
    readonly dtype: DType,
    recycle?: Matrix,
  ) {
    const old = recycle && memories.get(recycle.data.buffer);
    if (old && old.buffer.byteLength >= plan.totalBytes) {
      this.memory = old;
    } else {
      const pages = Math.ceil(plan.totalBytes / PAGE);
      this.memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    }
    this.buffer = this.memory.buffer as unknown as SharedArrayBuffer;
    memories.set(this.buffer, this.memory);
  }

  /** A Matrix viewing the block (no copy). */
  view(block: MatrixBlock): Matrix {
    const length = block.rows * block.cols;
    const data =
      this.dtype === 'float32'
        ? new Float32Array(this.buffer, block.offset, length)
        : new Float64Array(this.buffer, block.offset, length);
    return { rows: block.rows, cols: block.cols, data };
  }

  /** Writes a matrix into the block, rounding to the run's dtype. */
  write(block: MatrixBlock, m: Matrix): void {
    const to = this.view(block).data;
    if (!(to instanceof Float32Array) || m.data instanceof Float32Array) {
      to.set(m.data);
      return;
    }
    // V8 rounds float64 → float32 into a wasm memory's buffer at 0.83 ms per 512K numbers here,
    // into ordinary memory and then copies at 0.52: round through a small cache-resident buffer.
    for (let start = 0; start < m.data.length; start += ROUNDING_CHUNK.length) {
      const length = Math.min(ROUNDING_CHUNK.length, m.data.length - start);
      const rounded = length === ROUNDING_CHUNK.length ? ROUNDING_CHUNK : ROUNDING_CHUNK.subarray(0, length);
      rounded.set(m.data.subarray(start, start + length));
      to.set(rounded, start);
    }
  }

  int32(block: Block): Int32Array {
    return new Int32Array(this.buffer, block.offset, block.bytes / 4);
  }

  bytes(block: Block): Uint8Array {
    return new Uint8Array(this.buffer, block.offset, block.bytes);
  }
}

/** Bytes of the memory a fast result's matrix views (0 for a matrix of ordinary memory). */
export function memoryBytesOf(m: Matrix): number {
  return memories.has(m.data.buffer) ? m.data.buffer.byteLength : 0;
}

/**
 * A fresh memory for a later run, its pages faulted in ahead of time, a slice per `touch` call so
 * the caller can do it while idle and stop when a run arrives. The run takes it as `recycle:
 * spare.handle` and pays no page faults, while no memory a caller has been given is reused.
 */
export class SpareMemory {
  /** What a run takes as `recycle` (a view of no elements on the memory). */
  readonly handle: { output: Matrix };
  private readonly pages: Uint8Array;
  private touched = 0;

  constructor(bytes: number) {
    const pages = Math.ceil(bytes / PAGE);
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    memories.set(memory.buffer, memory);
    this.pages = new Uint8Array(memory.buffer);
    this.handle = { output: { rows: 0, cols: 0, data: new Float64Array(memory.buffer, 0, 0) } };
  }

  /** Whether `m` (a run's matrix) lives in this memory: the run took it. */
  holds(m: Matrix): boolean {
    return m.data.buffer === this.pages.buffer;
  }

  get bytes(): number {
    return this.pages.length;
  }

  /**
   * Faults in the pages of up to `bytes` more bytes (a write of 0 to each: a fresh page reads as 0,
   * but only a write maps it). Returns false once every page is in. Never call it while a run has
   * the handle: the run's numbers would be overwritten.
   */
  touch(bytes: number): boolean {
    const end = Math.min(this.pages.length, this.touched + bytes);
    for (let p = this.touched; p < end; p += OS_PAGE) this.pages[p] = 0;
    this.touched = end;
    return end < this.pages.length;
  }
}
