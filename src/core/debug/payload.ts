// What a paused program's `evaluate` answers, read back into matrices: the description of each
// candidate value (kind, shape, element size) and the bulk payload of one array — base64 bytes
// with dtype and shape, or a nested list read by the file reader's literal reader (same numbers,
// same messages for ragged rows and non-numbers).
import { readLiteral } from '../parse/literal';
import { halfToNumber } from '../parse/tensors/tensor';
import type { Matrix } from '../types';
import type { ReadSlice } from './expressions';

/** What the describe expression says of one value. */
export interface ValueDescription {
  kind: 'tensor' | 'ndarray' | 'typed' | 'list' | 'other';
  shape: number[];
  /** Bytes per element as the program holds them (lists: unknown, counted as 8). */
  itemsize?: number;
  /** torch only: `cpu`, `cuda`, `mps`, `meta`… */
  device?: string;
  /** kind `other`: the value's type name. */
  type?: string;
}

export interface ArrayRead {
  /** heads × rows × cols arrays (given weights): the heads' matrices stacked, (heads·rows)×cols. */
  matrix: Matrix;
  /** Every entry was a boolean (a mask). */
  boolean: boolean;
  /** Set for a heads×rows×cols array (more than one head): how many matrices `matrix` stacks. */
  heads?: number;
}

/**
 * The text of an `evaluate` result. Adapters quote strings in different ways: js-debug writes a
 * string in the clipboard context as a JSON string literal; debugpy writes it raw when asked for
 * `rawString`, else as a Python literal (our payloads hold no quote or backslash of their own
 * outside JSON escapes, so dropping the quotes and one level of escapes restores them).
 */
export function unquoteResult(result: string): string {
  const text = result.trim();
  if (text.startsWith('"') && text.endsWith('"')) return JSON.parse(text) as string;
  if (text.length >= 2 && text.startsWith("'") && text.endsWith("'")) return text.slice(1, -1).replace(/\\(.)/g, '$1');
  return text;
}

/** The descriptions the describe expression returned, one per name, or what came instead (a Python exception, say). */
export function parseDescriptions(result: string, count: number): ValueDescription[] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(unquoteResult(result));
  } catch {
    return `the debugger answered ${result.slice(0, 160)}`;
  }
  if (!Array.isArray(parsed) || parsed.length !== count || !parsed.every(isDescription)) {
    return `the debugger answered ${result.slice(0, 160)}`;
  }
  return parsed;
}

function isDescription(value: unknown): value is ValueDescription {
  if (typeof value !== 'object' || value === null) return false;
  const { kind, shape } = value as Record<string, unknown>;
  return (
    typeof kind === 'string' &&
    ['tensor', 'ndarray', 'typed', 'list', 'other'].includes(kind) &&
    (kind === 'other' || (Array.isArray(shape) && shape.every((n) => Number.isInteger(n) && n >= 0)))
  );
}

/** The rows×cols of an array of this shape: leading axes of length 1 (a batch of one) dropped. */
export function matrixShape(shape: readonly number[]): { rows: number; cols: number } | undefined {
  let axes = [...shape];
  while (axes.length > 2 && axes[0] === 1) axes = axes.slice(1);
  if (axes.length === 1) return { rows: 1, cols: axes[0] };
  if (axes.length === 2) return { rows: axes[0], cols: axes[1] };
  return undefined;
}

/** heads × rows × cols of a 3-D array (leading axes of length 1 dropped: PyTorch's batch of one). */
export function stackedShape(shape: readonly number[]): { heads: number; rows: number; cols: number } | undefined {
  let axes = [...shape];
  while (axes.length > 3 && axes[0] === 1) axes = axes.slice(1);
  return axes.length === 3 ? { heads: axes[0], rows: axes[1], cols: axes[2] } : undefined;
}

export const shapeText = (shape: readonly number[]): string => (shape.length === 0 ? 'a scalar' : shape.join('×'));

/**
 * Why this value cannot become a matrix (or, with `stacked`, a matrix per head from a
 * heads×rows×cols array), read before any of its numbers move; undefined when it can.
 */
export function unreadableReason(name: string, description: ValueDescription, stacked = false): string | undefined {
  if (description.kind === 'other') return `${name} is ${article(description.type ?? 'value')}, not an array`;
  if (description.device !== undefined && description.device !== 'cpu') {
    return `${name} is a tensor on ${description.device}: copy it to the CPU first (${name}.cpu()) — the reader does not move tensors between devices`;
  }
  const shape = matrixShape(description.shape) ?? (stacked ? stackedShape(description.shape) : undefined);
  if (!shape) {
    if (stacked) return `${name} is ${shapeText(description.shape)}: attention reads a matrix, or heads × rows × columns (one matrix per head; a leading batch of 1 is dropped); pick a slice such as ${name}[0]`;
    return description.shape.length === 0
      ? `${name} is a scalar, not an array`
      : `${name} is ${shapeText(description.shape)}: attention needs a matrix (2-D); pick a slice such as ${name}[0]`;
  }
  if (shape.rows === 0 || shape.cols === 0) return `${name} is empty (${shapeText(description.shape)})`;
  return undefined;
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`;
}

/** Bytes the program holds for this value (nested lists counted as 8 per number). */
export function bytesOf(description: ValueDescription): number {
  return description.shape.reduce((product, n) => product * n, 1) * (description.itemsize ?? 8);
}

interface BinaryPayload {
  dtype: string;
  shape: number[];
  data: string;
}

const NESTED_PREFIX = /^\{\s*"nested"\s*:\s*/;

/** Reads the payload of the read expression for the value named `name` (`stacked`: a heads×rows×cols array is one too). */
export function decodeArray(result: string, name: string, stacked = false): ArrayRead | string {
  const text = unquoteResult(result);
  const nested = NESTED_PREFIX.exec(text);
  if (nested) return decodeNested(text, nested[0].length, name);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return `the debugger's answer for ${name} is not an array payload: ${text.slice(0, 120)}`;
  }
  const record = parsed as Record<string, unknown>;
  if (record?.kind === 'other') return `${name} is ${article(String(record.type ?? 'value'))}, not a numeric array`;
  if (!isBinary(parsed)) return `the debugger's answer for ${name} is not an array payload: ${text.slice(0, 120)}`;
  return decodeBinary(parsed, name, stacked);
}

function isBinary(value: unknown): value is BinaryPayload {
  const { dtype, shape, data } = (value ?? {}) as Record<string, unknown>;
  return typeof dtype === 'string' && typeof data === 'string' && Array.isArray(shape) && shape.every((n) => Number.isInteger(n) && n >= 0);
}

/** Readers of one little-endian element at a byte offset, by numpy dtype (`f4`, `i8`, `b1`…). */
const ELEMENT_READERS: Record<string, (view: DataView, at: number) => number> = {
  f8: (view, at) => view.getFloat64(at, true),
  f4: (view, at) => view.getFloat32(at, true),
  f2: (view, at) => halfToNumber(view.getUint16(at, true)),
  i8: (view, at) => Number(view.getBigInt64(at, true)),
  i4: (view, at) => view.getInt32(at, true),
  i2: (view, at) => view.getInt16(at, true),
  i1: (view, at) => view.getInt8(at),
  u8: (view, at) => Number(view.getBigUint64(at, true)),
  u4: (view, at) => view.getUint32(at, true),
  u2: (view, at) => view.getUint16(at, true),
  u1: (view, at) => view.getUint8(at),
  b1: (view, at) => (view.getUint8(at) === 0 ? 0 : 1),
};

function decodeBinary(payload: BinaryPayload, name: string, stacked: boolean): ArrayRead | string {
  const match = /^([<|=])?([fiub])(\d)$/.exec(payload.dtype);
  const read = match && ELEMENT_READERS[`${match[2]}${match[3]}`];
  if (!match || !read) return `${name} has dtype ${payload.dtype}, which the reader does not know (it reads little-endian floats, integers and booleans)`;
  const heads = matrixShape(payload.shape) ? undefined : stacked ? stackedShape(payload.shape) : undefined;
  const shape = heads ? { rows: heads.heads * heads.rows, cols: heads.cols } : matrixShape(payload.shape);
  if (!shape) return `${name} is ${shapeText(payload.shape)}: attention needs a matrix (2-D)`;
  const itemsize = Number(match[3]);
  const count = shape.rows * shape.cols;
  const bytes = Buffer.from(payload.data, 'base64');
  if (bytes.length !== count * itemsize) {
    return `${name} arrived with ${bytes.length} bytes, but ${shapeText(payload.shape)} ${payload.dtype} needs ${count * itemsize}`;
  }
  const data = new Float64Array(count);
  if (payload.dtype.endsWith('f8') || payload.dtype.endsWith('f4')) {
    // The common cases in one copy: an aligned typed view of the bytes, widened to float64.
    const aligned = new Uint8Array(bytes).buffer;
    data.set(itemsize === 8 ? new Float64Array(aligned) : new Float32Array(aligned));
  } else {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < count; i++) data[i] = read(view, i * itemsize);
  }
  return { matrix: { rows: shape.rows, cols: shape.cols, data }, boolean: match[2] === 'b', ...(heads && heads.heads > 1 ? { heads: heads.heads } : {}) };
}

function decodeNested(text: string, at: number, name: string): ArrayRead | string {
  const literal = readLiteral(text, at, name);
  if (literal.kind !== 'matrix') return `${name} is a list, but not a list of numbers`;
  const { matrix } = literal;
  const error = matrix.allIssues().find((issue) => issue.severity === 'error');
  if (error) return error.message;
  if (matrix.broken || matrix.rows === 0 || matrix.cols === 0) return `${name} is an empty list`;
  return { matrix: { rows: matrix.rows, cols: matrix.cols, data: matrix.values() }, boolean: matrix.allBoolean };
}

/** Bytes of one part of a large read (see readSlices). */
const PART_BYTES = 512 * 1024;
const MAX_PARTS = 8;

/**
 * The parts to read a large array in, as concurrent evaluates: its leading axis (rows, or the
 * elements of a vector) split so that each part holds about PART_BYTES, at most MAX_PARTS parts.
 * In code-server each answer passes the browser twice and is compressed on the way; parts in
 * flight together overlap those hops (measured: bench/debugEditor.mjs). Undefined: read it whole
 * (small, or more than two axes).
 */
export function readSlices(description: ValueDescription): ReadSlice[] | undefined {
  const { shape } = description;
  if (shape.length === 0 || shape.length > 2 || description.kind === 'other') return undefined;
  const length = shape[0];
  const parts = Math.min(MAX_PARTS, Math.ceil(bytesOf(description) / PART_BYTES), length);
  if (parts < 2) return undefined;
  const size = Math.ceil(length / parts);
  const slices: ReadSlice[] = [];
  for (let start = 0; start < length; start += size) slices.push({ start, end: Math.min(length, start + size), typed: description.kind === 'typed' });
  return slices;
}

/** The reads of an array's parts (in order) as the one array they split; a vector's (one axis) are joined end to end. */
export function joinReads(parts: readonly ArrayRead[], name: string, vector: boolean): ArrayRead | string {
  const cols = parts[0].matrix.cols;
  if (!vector && parts.some((part) => part.matrix.cols !== cols)) return `${name} changed shape while it was read in parts: read it again`;
  const total = parts.reduce((sum, part) => sum + part.matrix.data.length, 0);
  const data = new Float64Array(total);
  let at = 0;
  for (const part of parts) {
    data.set(part.matrix.data, at);
    at += part.matrix.data.length;
  }
  const matrix = vector ? { rows: 1, cols: total, data } : { rows: total / cols, cols, data };
  return { matrix, boolean: parts.every((part) => part.boolean) };
}

/** The token labels the labels expression returned for `name`, or why they are none. */
export function decodeLabels(result: string, name: string): string[] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(unquoteResult(result));
  } catch {
    return `the debugger's answer for ${name} is not a list of strings: ${result.slice(0, 120)}`;
  }
  return Array.isArray(parsed) && parsed.every((label) => typeof label === 'string') ? parsed : `${name} is not a list of strings (token labels)`;
}
