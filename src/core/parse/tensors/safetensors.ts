import { BYTES_PER_ELEMENT, checkShape, decodeElements, type ElementBudget, elementCount, type Tensor, type TensorDType, TensorReadError } from './tensor';

// Hugging Face safetensors: an 8-byte little-endian header length N, N bytes of JSON
// `{"name": {"dtype": "F32", "shape": [4, 4], "data_offsets": [begin, end]}, …,
// "__metadata__": {"k": "v"}}` (padded with spaces), then the data buffer, little-endian, C order;
// offsets are relative to the buffer's start.

const DTYPES: Record<string, TensorDType> = {
  F16: 'float16',
  BF16: 'bfloat16',
  F32: 'float32',
  F64: 'float64',
  I8: 'int8',
  I16: 'int16',
  I32: 'int32',
  I64: 'int64',
  U8: 'uint8',
  U16: 'uint16',
  U32: 'uint32',
  U64: 'uint64',
  BOOL: 'bool',
};

/** The format's own limit on the header (safetensors refuses headers above 100 MB). */
const MAX_HEADER_BYTES = 100_000_000;

export function readSafetensors(bytes: Uint8Array, where: string, budget: ElementBudget): { tensors: Tensor[]; metadata?: Record<string, string> } {
  if (bytes.length < 8) throw new TensorReadError(`${where} is shorter than the 8 bytes of a safetensors header length.`, 'tensor-truncated');
  const declared = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
  if (declared > BigInt(MAX_HEADER_BYTES)) throw new TensorReadError(`${where} declares a ${declared}-byte header; safetensors headers are at most 100 MB.`, 'tensor-header');
  const headerLength = Number(declared);
  if (8 + headerLength > bytes.length) throw new TensorReadError(`${where} declares a ${headerLength}-byte header but holds only ${bytes.length - 8} bytes after the length.`, 'tensor-truncated');
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + headerLength)));
  } catch (error) {
    throw new TensorReadError(`${where} has a header that is not JSON (${error instanceof Error ? error.message : String(error)}).`, 'tensor-header');
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw new TensorReadError(`${where} has a header that is not a JSON object.`, 'tensor-header');
  const bufferStart = 8 + headerLength;
  const bufferLength = bytes.length - bufferStart;
  const tensors: Tensor[] = [];
  let metadata: Record<string, string> | undefined;
  for (const [key, entry] of Object.entries(header)) {
    if (key === '__metadata__') {
      metadata = readMetadata(entry, where);
      continue;
    }
    const at = `${where}[${JSON.stringify(key)}]`;
    if (typeof entry !== 'object' || entry === null) throw new TensorReadError(`${at} is not a tensor entry.`, 'tensor-header');
    const { dtype: code, shape: rawShape, data_offsets: offsets } = entry as Record<string, unknown>;
    const dtype = typeof code === 'string' ? DTYPES[code] : undefined;
    if (!dtype) throw new TensorReadError(`${at} has dtype \`${String(code)}\`; read are F16, BF16, F32, F64, integers and BOOL.`, 'tensor-dtype');
    if (!Array.isArray(rawShape)) throw new TensorReadError(`${at} has no shape list.`, 'tensor-header');
    const shape = checkShape(rawShape, at);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
      throw new TensorReadError(`${at} has no [begin, end] data_offsets.`, 'tensor-header');
    }
    const [begin, end] = offsets as [number, number];
    const count = elementCount(shape);
    const needed = count * BYTES_PER_ELEMENT[dtype];
    if (end - begin !== needed) throw new TensorReadError(`${at} is ${shape.join('×') || 'a scalar'} ${dtype} (${needed} bytes) but its data_offsets span ${end - begin} bytes.`, 'tensor-header');
    if (end > bufferLength) throw new TensorReadError(`${at} ends at byte ${end} of the data, which holds only ${bufferLength} bytes.`, 'tensor-truncated');
    budget.take(count, at);
    tensors.push({ key, dtype, shape, data: decodeElements(bytes, bufferStart + begin, count, dtype, true, budget.limits.viewsOnFile) });
  }
  return { tensors, ...(metadata ? { metadata } : {}) };
}

function readMetadata(entry: unknown, where: string): Record<string, string> {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry) || !Object.values(entry).every((value) => typeof value === 'string')) {
    throw new TensorReadError(`${where} has __metadata__ that is not a map of strings to strings.`, 'tensor-header');
  }
  return entry as Record<string, string>;
}
