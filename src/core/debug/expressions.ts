// The expressions a paused program is asked to evaluate, one per array, through the debug
// adapter's `evaluate` request. Each is a single pure expression: it reads the variable, builds a
// new string and assigns nothing — no name in the program changes, no array is touched, nothing
// is printed. Numeric arrays come back as base64 of a contiguous little-endian copy with dtype
// and shape; nested lists come back as JSON and are read by the file reader's literal reader.

export type DebugLanguage = 'python' | 'javascript';

const PYTHON_TYPES = new Set(['python', 'debugpy', 'pydevd']);
const JAVASCRIPT_TYPES = new Set(['node', 'pwa-node', 'node-terminal', 'chrome', 'pwa-chrome', 'msedge', 'pwa-msedge', 'extensionHost', 'pwa-extensionHost']);

/** The language of a debug session, from its type, else from the paused frame's source file. */
export function languageOf(sessionType: string, sourcePath: string | undefined): DebugLanguage | undefined {
  if (PYTHON_TYPES.has(sessionType)) return 'python';
  if (JAVASCRIPT_TYPES.has(sessionType)) return 'javascript';
  if (sourcePath && /\.pyw?$/i.test(sourcePath)) return 'python';
  if (sourcePath && /\.[cm]?[jt]sx?$/i.test(sourcePath)) return 'javascript';
  return undefined;
}

/** Variable names as the adapters give them; anything else is refused before it reaches a program. */
const SAFE_NAME = /^[\p{L}_$][\p{L}\p{N}_$]*(?:\.[\p{L}_$][\p{L}\p{N}_$]*|\[\d{1,9}\])*$/u;

export function isEvaluableName(name: string): boolean {
  return SAFE_NAME.test(name);
}

// Python: the module of the value's type tells numpy arrays and torch tensors apart without
// importing either (`sys.modules` holds them when the program uses them).
const PY_ROOT = "type(v).__module__.partition('.')[0]";

const PY_DESCRIBE =
  `lambda v: {'kind': 'tensor', 'shape': list(v.shape), 'itemsize': v.element_size(), 'device': v.device.type} ` +
  `if ${PY_ROOT} == 'torch' and hasattr(v, 'element_size') ` +
  `else {'kind': 'ndarray', 'shape': list(v.shape), 'itemsize': v.dtype.itemsize} ` +
  `if ${PY_ROOT} == 'numpy' and hasattr(v, 'dtype') and hasattr(v, 'shape') ` +
  `else {'kind': 'list', 'shape': [len(v)] + ([len(v[0])] if len(v) > 0 and isinstance(v[0], (list, tuple)) else [])} ` +
  `if isinstance(v, (list, tuple)) ` +
  `else {'kind': 'other', 'type': type(v).__qualname__}`;

// detach() and float() return new tensors (the program's tensor keeps its grad and dtype);
// astype(…, copy=False) copies only a big-endian array; tobytes() is a C-order copy.
const PY_READ =
  `lambda v: (lambda a: {'dtype': a.dtype.str, 'shape': list(a.shape), 'data': __import__('base64').b64encode(a.tobytes()).decode('ascii')} ` +
  `if a.dtype.kind in 'biuf' else {'kind': 'other', 'type': 'array of ' + str(a.dtype)})(` +
  `(lambda a: a.astype(a.dtype.newbyteorder('<'), copy=False))(` +
  `(lambda t: (t.float() if t.dtype is __import__('sys').modules['torch'].bfloat16 else t).numpy())(v.detach()) ` +
  `if ${PY_ROOT} == 'torch' else v)) ` +
  `if ${PY_ROOT} in ('torch', 'numpy') and hasattr(v, 'dtype') and hasattr(v, 'shape') ` +
  `else {'nested': v} if isinstance(v, (list, tuple)) ` +
  `else {'kind': 'other', 'type': type(v).__qualname__}`;

// JavaScript: where Node's Buffer exists, a typed array, rows of typed arrays of one type and
// length, or (rows of) plain numbers — these as float32 when every one of them is exactly a
// float32 (half the bytes; NaN stays NaN, ±Infinity and -0 keep their sign), else as float64 —
// travel as base64 of their bytes. Anything
// else — booleans (masks), ragged rows, non-numbers, no Buffer (a browser) — travels as JSON, with
// ±Infinity and NaN as strings (JSON cannot write them), read by the literal reader with its
// messages. (A 1024×1024 matrix as JSON took js-debug 8–24 s to pass on; as base64, see bench/.)
const JS_DESCRIBE =
  `(v) => ArrayBuffer.isView(v) && !(v instanceof DataView) ? { kind: 'typed', shape: [v.length], itemsize: v.BYTES_PER_ELEMENT } ` +
  `: Array.isArray(v) ? { kind: 'list', shape: v.length > 0 && (Array.isArray(v[0]) || ArrayBuffer.isView(v[0])) ? [v.length, v[0].length] : [v.length], ...(v.length > 0 && ArrayBuffer.isView(v[0]) ? { itemsize: v[0].BYTES_PER_ELEMENT } : {}) } ` +
  `: { kind: 'other', type: v === null ? 'null' : typeof v === 'object' ? (v.constructor?.name ?? 'object') : typeof v }`;

const JS_DTYPES = `{ Float64Array: 'f8', Float32Array: 'f4', Int8Array: 'i1', Int16Array: 'i2', Int32Array: 'i4', Uint8Array: 'u1', Uint8ClampedArray: 'u1', Uint16Array: 'u2', Uint32Array: 'u4' }`;

/** Plain numbers (a Float64Array) as a Float32Array when that loses nothing, else as they are. */
const JS_NARROW = `((d) => ((s) => s.every((x, i) => x === d[i] || x !== x) ? s : d)(Float32Array.from(d)))`;

/** v's numbers as typed arrays (one per row, or one in all) with its shape, when they have a dtype; else undefined. */
const JS_AS_TYPED =
  `typeof Buffer !== 'function' || !(ArrayBuffer.isView(v) || Array.isArray(v) && v.length > 0) ? undefined ` +
  `: ArrayBuffer.isView(v) ? (types[v.constructor.name] ? { rows: [v], shape: [v.length] } : undefined) ` +
  `: v.every((r) => ArrayBuffer.isView(r) && r.constructor === v[0].constructor && r.length === v[0].length) && types[v[0].constructor.name] ? { rows: v, shape: [v.length, v[0].length] } ` +
  `: v.every((x) => typeof x === 'number') ? { rows: [${JS_NARROW}(Float64Array.from(v))], shape: [v.length] } ` +
  `: v.every((r) => Array.isArray(r) && r.length === v[0].length && r.every((x) => typeof x === 'number')) ? { rows: [${JS_NARROW}(Float64Array.from(v.flat()))], shape: [v.length, v[0].length] } ` +
  `: undefined`;

const JS_READ =
  `(v, types, le) => ((typed) => JSON.stringify(typed ` +
  `? { dtype: le + types[typed.rows[0].constructor.name], shape: typed.shape, data: Buffer.concat(typed.rows.map((r) => Buffer.from(r.buffer, r.byteOffset, r.byteLength))).toString('base64') } ` +
  `: Array.isArray(v) || ArrayBuffer.isView(v) ? { nested: v } : { kind: 'other', type: v === null ? 'null' : typeof v }, ` +
  `(key, x) => ArrayBuffer.isView(x) ? Array.from(x) : typeof x === 'number' && !Number.isFinite(x) ? String(x) : x))(${JS_AS_TYPED})`;

const JS_BYTE_ORDER = `new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? '<' : '>'`;

function checked(names: readonly string[]): void {
  const bad = names.find((name) => !isEvaluableName(name));
  if (bad !== undefined) throw new Error(`"${bad}" is not a variable name this reader evaluates`);
}

/** One expression describing every named value (kind, shape, element size): read before any array, to ask before a large one. */
export function describeExpression(language: DebugLanguage, names: readonly string[]): string {
  checked(names);
  return language === 'python'
    ? `__import__('json').dumps(list(map(${PY_DESCRIBE}, (${names.map((name) => `${name},`).join(' ')}))))`
    : `JSON.stringify([${names.join(', ')}].map(${JS_DESCRIBE}))`;
}

/** A part of an array's leading axis: rows start…end − 1 of a matrix, or those elements of a vector. */
export interface ReadSlice {
  start: number;
  end: number;
  /** JavaScript: the value is a typed array (sliced by `subarray`, a view), not an Array (`slice`, a new array). */
  typed: boolean;
}

/**
 * The one expression that reads the named array in bulk, or one part of it: Python `NAME[a:b]`
 * (a view of a numpy array or tensor, a new list), JavaScript `NAME.subarray(a, b)` (a view) or
 * `NAME.slice(a, b)` (a new array) — nothing in the program changes.
 */
export function readExpression(language: DebugLanguage, name: string, slice?: ReadSlice): string {
  checked([name]);
  const part = (python: boolean) =>
    !slice ? name : python ? `${name}[${slice.start}:${slice.end}]` : `${name}.${slice.typed ? 'subarray' : 'slice'}(${slice.start}, ${slice.end})`;
  return language === 'python' ? `__import__('json').dumps((${PY_READ})(${part(true)}))` : `(${JS_READ})(${part(false)}, ${JS_DTYPES}, ${JS_BYTE_ORDER})`;
}

/** The expression that reads a list of strings (token labels) as JSON, or `null` when it is none. */
export function labelsExpression(language: DebugLanguage, name: string): string {
  checked([name]);
  return language === 'python'
    ? `__import__('json').dumps((lambda v: list(v) if isinstance(v, (list, tuple)) and all(isinstance(s, str) for s in v) else None)(${name}))`
    : `JSON.stringify(((v) => Array.isArray(v) && v.every((s) => typeof s === 'string') ? v : null)(${name}))`;
}
