// What every tensor-file reader produces: named n-d arrays of numbers, decoded to JavaScript
// typed arrays. Readers check every size a header declares against the bytes actually present
// before allocating anything, so a lying or truncated header costs an error, never a huge
// allocation.

export type TensorDType =
  | 'float16'
  | 'bfloat16'
  | 'float32'
  | 'float64'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint8'
  | 'uint16'
  | 'uint32'
  | 'uint64'
  | 'bool';

export const BYTES_PER_ELEMENT: Record<TensorDType, number> = {
  float16: 2,
  bfloat16: 2,
  float32: 4,
  float64: 8,
  int8: 1,
  int16: 2,
  int32: 4,
  int64: 8,
  uint8: 1,
  uint16: 2,
  uint32: 4,
  uint64: 8,
  bool: 1,
};

export interface Tensor {
  /** The name in its file: `layers.0.self_attn.q_proj.weight`, an .npz member, `array` for .npy. */
  key: string;
  dtype: TensorDType;
  shape: number[];
  /** Row-major (C order) values. Float32 for types float32 holds exactly, float64 otherwise. */
  data: Float32Array | Float64Array;
}

export type TensorFormat = 'npy' | 'npz' | 'safetensors' | 'torch';

export interface TensorFile {
  format: TensorFormat;
  tensors: Tensor[];
  /** safetensors `__metadata__`, as written. */
  metadata?: Record<string, string>;
}

/** Limits of one read: a file holding more numbers than this is refused before decoding. */
export interface TensorLimits {
  maxElements: number;
  /**
   * Little-endian float32 and float64 numbers, where aligned in the file's bytes and stored
   * uncompressed, are views on those bytes instead of copies. Each copy of a 604 MB file cost ~4 s
   * of CPU here, most of it page faults. Only for readers that never write the numbers nor transfer
   * their memory to another thread: a transfer would move the whole file's buffer.
   */
  viewsOnFile?: boolean;
}

/** 2^27 numbers (a 512 MB float32 file); the extension passes `attentionLens.maxMatrixElements`. */
export const DEFAULT_LIMITS: TensorLimits = { maxElements: 2 ** 27 };

/** Why a tensor file cannot be read; the message names the file's part at fault. */
export class TensorReadError extends Error {
  constructor(
    message: string,
    readonly code: string = 'tensor-unreadable',
  ) {
    super(message);
    this.name = 'TensorReadError';
  }
}

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((product, size) => product * size, 1);
}

/** Checks a declared shape: whole non-negative dimensions whose product is a safe integer. */
export function checkShape(shape: readonly unknown[], where: string): number[] {
  if (shape.length > 8) throw new TensorReadError(`${where} has ${shape.length} dimensions; at most 8 are read.`, 'tensor-rank');
  let count = 1;
  for (const size of shape) {
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) throw new TensorReadError(`${where} declares a dimension \`${String(size)}\` that is not a size.`, 'tensor-header');
    count *= size;
    if (!Number.isSafeInteger(count)) throw new TensorReadError(`${where} declares a shape too large to hold.`, 'tensor-header');
  }
  return shape as number[];
}

/** Counts the numbers a file is about to decode against the limit. */
export class ElementBudget {
  private used = 0;
  constructor(readonly limits: TensorLimits) {}

  take(count: number, where: string): void {
    this.used += count;
    if (this.used > this.limits.maxElements) {
      throw new TensorReadError(
        `${where} brings the file to ${this.used.toLocaleString('en-US')} numbers, more than the ${this.limits.maxElements.toLocaleString('en-US')} allowed (attentionLens.maxMatrixElements).`,
        'tensor-too-large',
      );
    }
  }
}

/** Whether a dtype's values are kept as float32 (exact) rather than float64. */
function keptAsFloat32(dtype: TensorDType): boolean {
  return dtype === 'float16' || dtype === 'bfloat16' || dtype === 'float32' || dtype === 'int8' || dtype === 'uint8' || dtype === 'int16' || dtype === 'uint16' || dtype === 'bool';
}

/** IEEE half precision → number (no Float16Array in Node 20). */
export function halfToNumber(bits: number): number {
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  const sign = bits & 0x8000 ? -1 : 1;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

let halfTable: Float32Array | undefined;
const LITTLE_ENDIAN_HOST = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/**
 * 16-bit floats widened to float32 into `out` (exact: every half and bfloat16 is a float32).
 * float16 by a table of all 65536 values (256 KB, built once): halfToNumber per element took
 * ~10 ns; bfloat16 is the top half of a float32, so a shift.
 */
export function widenHalves(bits: Uint16Array, dtype: 'float16' | 'bfloat16', out: Float32Array): Float32Array {
  if (dtype === 'bfloat16') {
    // Signed 32-bit views: a Uint32Array's entries past 2³¹ are doubles to V8, and each load and
    // store of one took its slow path (2.6 against 1.2–1.5 ns a value here; OLMoE's first run widens
    // 805 million, Qwen2.5-0.5B's 494 million).
    const wide = new Int32Array(out.buffer, out.byteOffset, bits.length);
    // Two at a time where the halves are 4-byte aligned: one 32-bit load gives both (little-endian:
    // the first in its low half).
    const pairs = bits.byteOffset % 4 === 0 && LITTLE_ENDIAN_HOST ? new Int32Array(bits.buffer, bits.byteOffset, bits.length >> 1) : new Int32Array(0);
    for (let j = 0; j < pairs.length; j++) {
      const both = pairs[j];
      wide[2 * j] = both << 16;
      wide[2 * j + 1] = both & -65536;
    }
    for (let i = 2 * pairs.length; i < bits.length; i++) wide[i] = bits[i] << 16;
  } else {
    halfTable ??= Float32Array.from({ length: 65536 }, (_, b) => halfToNumber(b));
    const table = halfTable;
    for (let i = 0; i < bits.length; i++) out[i] = table[bits[i]];
  }
  return out;
}

/**
 * Decodes `count` elements of `dtype` stored at `bytes[offset…]` in the given byte order, in
 * storage order. The caller has checked that the bytes are there.
 */
export function decodeElements(bytes: Uint8Array, offset: number, count: number, dtype: TensorDType, littleEndian: boolean, viewsOnFile = false): Float32Array | Float64Array {
  const size = BYTES_PER_ELEMENT[dtype];
  if (viewsOnFile && littleEndian && (bytes.byteOffset + offset) % size === 0) {
    if (dtype === 'float32') return new Float32Array(bytes.buffer, bytes.byteOffset + offset, count);
    if (dtype === 'float64') return new Float64Array(bytes.buffer, bytes.byteOffset + offset, count);
  }
  // One copy into a fresh, aligned buffer; big-endian data is swapped in place there.
  const raw = bytes.slice(offset, offset + count * size);
  if (!littleEndian && size > 1) {
    for (let at = 0; at < raw.length; at += size) raw.subarray(at, at + size).reverse();
  }
  const buffer = raw.buffer;
  switch (dtype) {
    case 'float32':
      return new Float32Array(buffer);
    case 'float64':
      return new Float64Array(buffer);
    case 'float16':
    case 'bfloat16':
      return widenHalves(new Uint16Array(buffer), dtype, new Float32Array(count));
    case 'bool':
      return Float32Array.from(raw, (byte) => (byte !== 0 ? 1 : 0));
    case 'int64':
      return Float64Array.from(new BigInt64Array(buffer), Number);
    case 'uint64':
      return Float64Array.from(new BigUint64Array(buffer), Number);
    default: {
      const Ints = { int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array }[dtype];
      const ints = new Ints(buffer);
      return keptAsFloat32(dtype) ? Float32Array.from(ints) : Float64Array.from(ints);
    }
  }
}

/**
 * The C-order values of a view with the given shape and element strides into `storage` from
 * `offset` (PyTorch views, NumPy Fortran order). Bounds were checked by `viewExtent`.
 */
export function gatherStrided(storage: Float32Array | Float64Array, offset: number, shape: readonly number[], strides: readonly number[]): Float32Array | Float64Array {
  const count = elementCount(shape);
  const out = storage instanceof Float32Array ? new Float32Array(count) : new Float64Array(count);
  if (count === 0) return out;
  const rank = shape.length;
  const index = new Array<number>(rank).fill(0);
  let at = offset;
  for (let i = 0; i < count; i++) {
    out[i] = storage[at];
    for (let d = rank - 1; d >= 0; d--) {
      index[d]++;
      at += strides[d];
      if (index[d] < shape[d]) break;
      at -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return out;
}

/** One past the last storage element a view touches (0 for an empty view). */
export function viewExtent(offset: number, shape: readonly number[], strides: readonly number[]): number {
  if (shape.some((size) => size === 0)) return 0;
  let last = offset;
  shape.forEach((size, d) => {
    if (strides[d] < 0) throw new TensorReadError('negative strides are not read.', 'tensor-header');
    last += (size - 1) * strides[d];
  });
  return last + 1;
}

/** Whether strides are those of a C-order array of this shape. */
export function isContiguous(shape: readonly number[], strides: readonly number[]): boolean {
  let expected = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    if (shape[d] !== 1 && strides[d] !== expected) return false;
    expected *= shape[d];
  }
  return true;
}

export function shapeLabel(shape: readonly number[]): string {
  return shape.length === 0 ? 'a scalar' : shape.join('×');
}
