// A checkpoint's tensors, read lazily: safetensors (one file or shards listed by
// model.safetensors.index.json) are indexed from their headers and each tensor is read from its
// byte range when a layer needs it, decoded to float32 and dropped after; pytorch_model.bin goes
// through the safe pickle reader (it cannot be read by range: its zip is read whole, once).
// Names are accepted with or without the model class's prefix (`transformer.`, `bert.`, `model.`).
import { pagedIn } from '../engine/fast/arena';
import { readTorch } from '../parse/tensors/torch';
import { BYTES_PER_ELEMENT, checkShape, decodeElements, ElementBudget, elementCount, type TensorDType, widenHalves } from '../parse/tensors/tensor';
import { shapeLabel } from '../parse/tensors/tensor';
import type { ConstantWeight, LinearWeights } from './backend';
import type { ResidentModel, ResidentPlan } from './resident';

/** The only way the model code touches files: sizes and byte ranges of a folder's files. */
export interface ModelFiles {
  /** Shown in messages. */
  readonly folder: string;
  /** The file's size in bytes, or undefined when the folder has no such file. */
  size(name: string): Promise<number | undefined>;
  /** `length` bytes from `offset`; into `into` (at least `length` bytes) when it is given. */
  read(name: string, offset: number, length: number, into?: Uint8Array): Promise<Uint8Array>;
}

export class ModelFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelFileError';
  }
}

/** A file's whole text, or undefined when it is absent. */
export async function readText(files: ModelFiles, name: string): Promise<string | undefined> {
  const size = await files.size(name);
  if (size === undefined) return undefined;
  return new TextDecoder().decode(await files.read(name, 0, size));
}

interface Entry {
  file: string;
  dtype: TensorDType;
  shape: number[];
  /** Absolute byte offset in the file (safetensors), or the decoded values (pytorch_model.bin). */
  offset: number;
  values?: Float32Array | Float64Array;
}

const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;
/** Class prefixes, longest first: Gemma 3's multimodal checkpoints keep the language model under language_model. */
const PREFIXES = ['model.language_model.', 'language_model.model.', 'language_model.', 'gpt_neox.', 'roberta.', 'distilbert.', 'transformer.', 'bert.', 'model.'];
const SAFETENSORS_DTYPES: Record<string, TensorDType> = { F16: 'float16', BF16: 'bfloat16', F32: 'float32', F64: 'float64' };

export class Weights {
  /** Where the tensors are kept between runs, when the model is resident (resident.ts). */
  private resident: ResidentModel | undefined;
  /** Reads of whole tensors under way for the resident model, by stored name (a prefetch and its use share one). */
  private readonly reading = new Map<string, Promise<Uint8Array>>();

  private constructor(
    private readonly files: ModelFiles,
    /** By name without the class prefix. */
    private readonly entries: Map<string, Entry & { stored: string }>,
    /** The weight files and their sizes: a checkpoint rewritten in place is another model. */
    readonly key: string,
  ) {}

  /** Indexes the folder's weights (headers only, for safetensors). */
  static async open(files: ModelFiles): Promise<Weights> {
    const entries = new Map<string, Entry & { stored: string }>();
    const add = (stored: string, entry: Entry): void => {
      const prefix = PREFIXES.find((p) => stored.startsWith(p));
      entries.set(prefix ? stored.slice(prefix.length) : stored, { ...entry, stored });
    };
    const index = await readText(files, 'model.safetensors.index.json');
    if (index !== undefined) {
      for (const shard of shardsOf(index)) for (const [name, entry] of await safetensorsHeader(files, shard)) add(name, entry);
    } else if ((await files.size('model.safetensors')) !== undefined) {
      for (const [name, entry] of await safetensorsHeader(files, 'model.safetensors')) add(name, entry);
    } else {
      const size = await files.size('pytorch_model.bin');
      if (size === undefined) throw new ModelFileError(`${files.folder} has no weights: expected model.safetensors, model.safetensors.index.json with its shards, or pytorch_model.bin`);
      const bytes = await files.read('pytorch_model.bin', 0, size);
      const tensors = readTorch(bytes, 'pytorch_model.bin', new ElementBudget({ maxElements: Number.MAX_SAFE_INTEGER }), Number.MAX_SAFE_INTEGER);
      for (const t of tensors) add(t.key, { file: 'pytorch_model.bin', dtype: t.dtype, shape: t.shape, offset: 0, values: t.data });
    }
    const sizes = await Promise.all([...new Set([...entries.values()].map((e) => e.file))].sort().map(async (file) => `${file}:${await files.size(file)}`));
    return new Weights(files, entries, `${files.folder}|${sizes.join('|')}`);
  }

  /**
   * What the model would hold resident (resident.ts): every float tensor's stored bytes; or, with
   * `constants` (the products' weights, by name, that the backend keeps pre-packed in float32),
   * those in float32 and the rest stored. pytorch_model.bin's tensors are held anyway.
   */
  residentPlan(constants: ReadonlySet<string>): ResidentPlan {
    let storedBytes = 0;
    let constantBytes = 0;
    for (const [name, entry] of this.entries) {
      if (entry.values) continue;
      const stored = elementCount(entry.shape) * BYTES_PER_ELEMENT[entry.dtype];
      storedBytes += stored;
      constantBytes += constants.has(name) ? elementCount(entry.shape) * 4 : stored;
    }
    return { storedBytes, constantBytes };
  }

  /** Keeps the tensors in `model` from now on (undefined: read as the run goes, nothing kept). */
  residentIn(model: ResidentModel | undefined): void {
    this.resident = model;
    this.reading.clear();
  }

  get residentModel(): ResidentModel | undefined {
    return this.resident?.released ? undefined : this.resident;
  }

  /**
   * A linear layer's weight ([rows × cols] as stored) for a product. On a model resident with
   * constants, the weight carries `constant`: a backend that keeps it (ONNX Runtime, pre-packed)
   * reads it once per model and never again, and `weight` is widened only if another backend asks
   * for it. Otherwise as `get`.
   */
  async linear(name: string, shape: readonly number[], buffer: ReadBuffer, layer: Omit<LinearWeights, 'weight'>, part?: { first: number; count: number }, arrange?: Arrange): Promise<LinearWeights> {
    const model = this.residentModel;
    const entry = this.entries.get(name);
    if (!model || model.mode !== 'constants' || !entry || entry.values || entry.dtype === 'float64') {
      const weight = part ? await this.rows(name, shape, part.first, part.count, buffer) : await this.get(name, shape, buffer);
      return { ...layer, weight: arrange ? arrange(weight) : weight };
    }
    this.expectShape(entry, shape);
    // A part is rows first…first + count − 1 (an LM head's chunk), a constant of its own.
    const rowBytes = elementCount(entry.shape.slice(1)) * BYTES_PER_ELEMENT[entry.dtype];
    const { first, count } = part ?? { first: 0, count: entry.shape[0] };
    const [start, length] = [first * rowBytes, count * rowBytes];
    const key = part ? `${model.id}:${name}:${first}+${count}` : `${model.id}:${name}`;
    // Tied embeddings are kept whole for their lookups: the LM head's product takes those bytes.
    const kept = () => model.tensors.get(entry.stored)?.subarray(start, start + length);
    const read = async () => kept() ?? this.files.read(entry.file, entry.offset + start, length);
    const constant: ConstantWeight = { key, dtype: entry.dtype, shape: [count, ...entry.shape.slice(1)], model, read, ...(arrange ? { arrange } : {}) };
    // Not held yet: read into the reused memory, as a run that keeps nothing does (fresh memory cost
    // GPT-2-small's first run ~0.7 s of page faults); a session made later reads it again.
    if (!model.holds(key)) constant.stored = kept() ?? (await this.files.read(entry.file, entry.offset + start, length, buffer.take(length)));
    const stored = constant.stored;
    const arranged = (values: Float32Array) => (arrange ? arrange(values) : values);
    let widened: Float32Array | undefined;
    // Widened only when a backend reads `weight`: a first run's products fed it (their sessions are
    // made when idle), or the WebAssembly kernels after a native failure. float32 bytes are viewed:
    // this read is the constant's own, and no backend writes to its weights.
    const decode = (): Float32Array => (widened ??= arranged(this.decode(stored as Uint8Array, entry, buffer, undefined, !model.holds(key))));
    constant.load = async () => {
      // Only this once (a drill-down's columns): the backend keeps the weight, so its bytes are not kept here too.
      if (!stored) widened ??= arranged(await this.rows(name, shape, first, count, buffer, true));
    };
    return {
      ...layer,
      constant,
      get weight(): Float32Array {
        if (widened) return widened;
        if (!stored) throw new Error(`${name} is held by the native backend only: load() it first`);
        return decode();
      },
    };
  }

  /**
   * A weight fed to the backend at every run rather than held by it (a mixture's experts: one
   * pre-packed session per expert cost ~70 ms of CPU each to make, 9 s for OLMoE's 2 × 64). On a
   * model resident with constants it is widened to float32 once and kept so (the plan counts it
   * in float32, as a constant); otherwise as `get`, into `buffer`.
   */
  async widened(name: string, shape: readonly number[], buffer: ReadBuffer): Promise<Float32Array> {
    const model = this.residentModel;
    const entry = this.entries.get(name);
    if (!model || model.mode !== 'constants' || !entry || entry.values) return this.get(name, shape, buffer);
    const kept = model.widened.get(entry.stored);
    if (kept) return kept;
    this.expectShape(entry, shape);
    const elements = elementCount(entry.shape);
    // Read into the reused memory (its stored bytes are not kept), unless a prefetch has it under way.
    const length = elements * BYTES_PER_ELEMENT[entry.dtype];
    const bytes = this.reading.has(entry.stored) ? await this.whole(entry, model, false) : await this.files.read(entry.file, entry.offset, length, buffer.take(length));
    const halves = (entry.dtype === 'bfloat16' || entry.dtype === 'float16') && LITTLE_ENDIAN && bytes.byteOffset % 2 === 0;
    // Into memory of its own: the bytes are on the reused read memory (float32 ones are copied, not viewed).
    const values = halves ? widenHalves(new Uint16Array(bytes.buffer, bytes.byteOffset, elements), entry.dtype as 'bfloat16' | 'float16', new Float32Array(elements)) : this.decode(bytes, entry, undefined, elements);
    if (!model.released) model.widened.set(entry.stored, values);
    return values;
  }

  /** Every tensor's name (as the layouts ask for it). */
  get names(): Set<string> {
    return new Set(this.entries.keys());
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** Bytes held in memory from the start: pytorch_model.bin's tensors (safetensors are read by range). */
  get residentBytes(): number {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.values ? entry.values.byteLength : 0;
    return total;
  }

  /** The tensor's values as float32, checked against the shape the model expects (read into `buffer` when given). */
  async get(name: string, shape: readonly number[], buffer?: ReadBuffer): Promise<Float32Array> {
    return this.rows(name, shape, 0, shape[0] ?? 1, buffer);
  }

  /**
   * Rows [first, first + count) of a tensor (its first axis), as float32; the rest is not read.
   * With `buffer`, the bytes go into its memory and the values may be a view on it, valid until
   * the buffer's next read: call it inside `buffer.exclusive`.
   */
  async rows(name: string, shape: readonly number[], first: number, count: number, buffer?: ReadBuffer, fromFile = false): Promise<Float32Array> {
    const entry = this.entries.get(name);
    if (!entry) throw new ModelFileError(`the checkpoint has no tensor ${name} (with or without a class prefix such as ${PREFIXES.slice(-3).map((p) => p + name).join(', ')})`);
    this.expectShape(entry, shape);
    const rowLength = elementCount(entry.shape.slice(1));
    // pytorch_model.bin's values stay with the index: hand out a copy.
    if (entry.values) return Float32Array.from(entry.values.subarray(first * rowLength, (first + count) * rowLength));
    const size = BYTES_PER_ELEMENT[entry.dtype];
    const elements = count * rowLength;
    const length = elements * size;
    const model = fromFile ? undefined : this.residentModel;
    // A resident model's tensor is read whole once (one large sequential read) and kept as stored.
    const bytes = model
      ? (await this.whole(entry, model, true)).subarray(first * rowLength * size, first * rowLength * size + length)
      : await this.files.read(entry.file, entry.offset + first * rowLength * size, length, buffer?.take(length));
    return this.decode(bytes, { dtype: entry.dtype }, buffer, elements, !model);
  }

  /** Float32 values of stored bytes: a view when they are float32 and `mayView`, halves widened into the buffer's reused memory when given. */
  private decode(bytes: Uint8Array, { dtype }: { dtype: TensorDType }, buffer: ReadBuffer | undefined, elements = bytes.length / BYTES_PER_ELEMENT[dtype], mayView = false): Float32Array {
    // float32 on a little-endian host: the bytes read are the values (no second copy). Kept bytes
    // are copied: a caller may change the values it gets (the embeddings are scaled in place).
    if (dtype === 'float32' && LITTLE_ENDIAN && bytes.byteOffset % 4 === 0) {
      const view = new Float32Array(bytes.buffer, bytes.byteOffset, elements);
      if (mayView) return view;
      if (buffer) {
        const out = buffer.values(elements);
        out.set(view);
        return out;
      }
      return view.slice();
    }
    // Halves widened into the buffer's reused values: fresh arrays cost a page fault per 4 KiB, and
    // a bf16 checkpoint's every product read two (a copy of the bytes, then the float32s).
    if (buffer && (dtype === 'bfloat16' || dtype === 'float16') && LITTLE_ENDIAN && bytes.byteOffset % 2 === 0) {
      return widenHalves(new Uint16Array(bytes.buffer, bytes.byteOffset, elements), dtype, buffer.values(elements));
    }
    const values = decodeElements(bytes, 0, elements, dtype, true);
    return values instanceof Float32Array ? values : Float32Array.from(values);
  }

  private expectShape(entry: Entry & { stored: string }, shape: readonly number[]): void {
    if (entry.shape.length !== shape.length || entry.shape.some((size, i) => size !== shape[i])) {
      throw new ModelFileError(`tensor ${entry.stored} is ${shapeLabel(entry.shape)} but the config asks for ${shapeLabel([...shape])}`);
    }
  }

  /**
   * A tensor's stored bytes, whole, for resident `model`: its kept copy, else one read of the whole
   * range into fresh memory, kept when `keep` (a constant handed to the backend is not: the backend
   * keeps what it made of it).
   */
  private whole(entry: Entry & { stored: string }, model: ResidentModel, keep: boolean): Promise<Uint8Array> {
    const kept = model.tensors.get(entry.stored);
    if (kept) return Promise.resolve(kept);
    let reading = this.reading.get(entry.stored);
    if (!reading) {
      reading = this.files.read(entry.file, entry.offset, elementCount(entry.shape) * BYTES_PER_ELEMENT[entry.dtype]);
      this.reading.set(entry.stored, reading);
    }
    const read = reading;
    // A constant's read is taken by its one use; a kept tensor's is shared by every use until it is kept.
    if (!keep) this.reading.delete(entry.stored);
    return read.then(
      (bytes) => {
        if (keep && !model.released) model.tensors.set(entry.stored, bytes);
        if (this.reading.get(entry.stored) === read) this.reading.delete(entry.stored);
        return bytes;
      },
      (error: unknown) => {
        // A failed read is not kept: the next use reads again (and says why).
        if (this.reading.get(entry.stored) === read) this.reading.delete(entry.stored);
        throw error;
      },
    );
  }

  /** Starts reading the whole tensors `names` of a resident model (the next layer's, while this one computes); nothing otherwise. */
  prefetch(names: readonly string[]): void {
    const model = this.residentModel;
    // A model resident as constants reads what the backend does not hold yet into the reused memory.
    if (!model || model.mode === 'constants') return;
    for (const name of names) {
      const entry = this.entries.get(name);
      if (!entry || entry.values || this.reading.has(entry.stored) || model.tensors.has(entry.stored) || model.widened.has(entry.stored) || model.holds(`${model.id}:${name}`)) continue;
      const reading = this.files.read(entry.file, entry.offset, elementCount(entry.shape) * BYTES_PER_ELEMENT[entry.dtype]);
      reading.catch(() => this.reading.get(entry.stored) === reading && this.reading.delete(entry.stored));
      this.reading.set(entry.stored, reading);
    }
  }

  /** What reading tensor `name` into a ReadBuffer takes of it: its bytes, and as many decoded values when it is 16-bit (widened). */
  readRoom(name: string): { bytes: number; values: number } {
    const entry = this.entries.get(name);
    if (!entry || entry.values) return { bytes: 0, values: 0 }; // pytorch_model.bin's are handed out as copies
    const elements = elementCount(entry.shape);
    return { bytes: alignedTo64(elements * BYTES_PER_ELEMENT[entry.dtype]), values: entry.dtype === 'bfloat16' || entry.dtype === 'float16' ? alignedTo64(elements) : 0 };
  }

  /** The first of `names` the checkpoint has (tied or renamed tensors), or undefined. */
  first(...names: string[]): string | undefined {
    return names.find((name) => this.entries.has(name));
  }
}

/** A weight's rows put in the order its product wants, as stored bytes or as values (GPT-NeoX's per-head fused QKV regrouped part by part). */
export type Arrange = <T extends Float32Array | Uint8Array>(rows: T) => T;

/**
 * One memory that weights are read into and consumed from before the next read (a forward's
 * products, the LM head's chunks), used by one caller at a time; the reads of one use (a layer's
 * MLP: two or three weights) lie one after another in it. Fresh memory costs a page fault and a
 * zero fill per 4 KiB: reading GPT-2-small's 500 MB into fresh arrays took 5–15× the CPU of
 * reading it into one reused array (measured here, docs/models.md).
 */
export class ReadBuffer {
  private bytes = new Uint8Array(0);
  private decoded = new Float32Array(0);
  /** Bytes and decoded values handed out since the current use began. */
  private bytesTaken = 0;
  private valuesTaken = 0;
  private queue: Promise<unknown> = Promise.resolve();

  /** Runs `use` after every earlier caller's `use` has ended: the memory is its own meanwhile. */
  exclusive<T>(use: () => Promise<T>): Promise<T> {
    const result = this.queue.then(() => {
      this.bytesTaken = this.valuesTaken = 0;
      return use();
    });
    this.queue = result.catch(() => undefined);
    return result;
  }

  /**
   * Room for one use of `bytes` bytes and `values` decoded values, each page written once now:
   * what a folder's preparation does, so that its first run's layers fault no fresh page in.
   */
  reserve(bytes: number, values: number): Promise<void> {
    return this.exclusive(async () => {
      if (this.bytes.length < bytes) this.bytes = pagedIn(new Uint8Array(bytes));
      if (this.decoded.length < values) this.decoded = pagedIn(new Float32Array(values));
    });
  }

  /** Lets the memory go when it holds more than `maxBytes` (after a run: a large model's layer is too much to hold idle). */
  trim(maxBytes: number): Promise<void> {
    return this.exclusive(async () => {
      if (this.bytes.byteLength + this.decoded.byteLength <= maxBytes) return;
      this.bytes = new Uint8Array(0);
      this.decoded = new Float32Array(0);
    });
  }

  /** The next `length` bytes of the memory (64-byte aligned), grown when it is shorter. */
  take(length: number): Uint8Array {
    const start = this.bytesTaken;
    this.bytesTaken = start + alignedTo64(length);
    // Views handed out earlier in this use keep the memory they are on; the next use fits in the new one.
    if (this.bytes.length < this.bytesTaken) this.bytes = new Uint8Array(this.bytesTaken);
    return this.bytes.subarray(start, start + length);
  }

  /** The next `count` reused float32s for values decoded from the bytes (16-bit weights widened). */
  values(count: number): Float32Array {
    const start = this.valuesTaken;
    this.valuesTaken = start + alignedTo64(count);
    if (this.decoded.length < this.valuesTaken) this.decoded = new Float32Array(this.valuesTaken);
    return this.decoded.subarray(start, start + count);
  }
}

/** Room in a ReadBuffer for `length` bytes or values, as one use takes it. */
const alignedTo64 = (n: number): number => Math.ceil(n / 64) * 64;


function shardsOf(indexText: string): string[] {
  let index: unknown;
  try {
    index = JSON.parse(indexText);
  } catch {
    throw new ModelFileError('model.safetensors.index.json is not JSON');
  }
  const map = (index as { weight_map?: unknown } | null)?.weight_map;
  if (typeof map !== 'object' || map === null || !Object.values(map).every((v) => typeof v === 'string')) {
    throw new ModelFileError('model.safetensors.index.json has no weight_map of tensor names to shard files');
  }
  return [...new Set(Object.values(map as Record<string, string>))];
}

/** A safetensors file's tensors, from its header; the file must hold every byte the header lists. */
async function safetensorsHeader(files: ModelFiles, file: string): Promise<Map<string, Entry>> {
  const size = await files.size(file);
  if (size === undefined) throw new ModelFileError(`${file} is listed in model.safetensors.index.json but missing from ${files.folder}`);
  if (size < 8) throw new ModelFileError(`${file} is truncated: ${size} bytes, shorter than a safetensors header`);
  const headerLength = Number(new DataView((await files.read(file, 0, 8)).buffer).getBigUint64(0, true));
  if (8 + headerLength > size) throw new ModelFileError(`${file} is truncated: its header alone should take ${headerLength} bytes but the file has ${size - 8} after the length`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder().decode(await files.read(file, 8, headerLength))) as Record<string, unknown>;
  } catch {
    throw new ModelFileError(`${file} has a header that is not JSON: not a safetensors file`);
  }
  const start = 8 + headerLength;
  const out = new Map<string, Entry>();
  let end = 0;
  for (const [name, value] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const { dtype: code, shape: rawShape, data_offsets: offsets } = value as { dtype?: string; shape?: unknown[]; data_offsets?: [number, number] };
    const dtype = code === undefined ? undefined : SAFETENSORS_DTYPES[code];
    if (!Array.isArray(rawShape) || !Array.isArray(offsets)) throw new ModelFileError(`${file}: tensor ${name} has no shape or data_offsets`);
    const shape = checkShape(rawShape, `${file}[${name}]`);
    if (!dtype) {
      // Integer buffers (position ids, masks) are not weights the forward reads.
      end = Math.max(end, offsets[1]);
      continue;
    }
    if (offsets[1] - offsets[0] !== elementCount(shape) * BYTES_PER_ELEMENT[dtype]) throw new ModelFileError(`${file}: tensor ${name}'s data_offsets do not match its ${dtype} ${shapeLabel(shape)}`);
    end = Math.max(end, offsets[1]);
    out.set(name, { file, dtype, shape, offset: start + offsets[0] });
  }
  if (start + end > size) throw new ModelFileError(`${file} is truncated: its header lists ${start + end} bytes but the file has ${size}`);
  return out;
}
