import { BYTES_PER_ELEMENT, checkShape, decodeElements, type ElementBudget, elementCount, gatherStrided, type Tensor, type TensorDType, TensorReadError } from './tensor';

// NumPy's .npy format (numpy.lib.format): the magic `\x93NUMPY`, a version, a header length
// (2 bytes in version 1, 4 in versions 2 and 3), a header that is a Python dict literal
// `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }`, then the raw data.

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

const KINDS: Record<string, TensorDType> = {
  f2: 'float16',
  f4: 'float32',
  f8: 'float64',
  i1: 'int8',
  i2: 'int16',
  i4: 'int32',
  i8: 'int64',
  u1: 'uint8',
  u2: 'uint16',
  u4: 'uint32',
  u8: 'uint64',
  b1: 'bool',
};

export function isNpy(bytes: Uint8Array): boolean {
  return MAGIC.every((byte, i) => bytes[i] === byte);
}

interface NpyHeader {
  dtype: TensorDType;
  littleEndian: boolean;
  fortran: boolean;
  shape: number[];
  dataOffset: number;
}

function readHeader(bytes: Uint8Array, where: string): NpyHeader {
  if (!isNpy(bytes)) throw new TensorReadError(`${where} is not a .npy array (no \\x93NUMPY magic).`, 'tensor-format');
  if (bytes.length < 10) throw new TensorReadError(`${where} ends inside its header.`, 'tensor-truncated');
  const major = bytes[6];
  if (major < 1 || major > 3) throw new TensorReadError(`${where} is .npy format version ${major}; versions 1–3 are read.`, 'tensor-format');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lengthBytes = major === 1 ? 2 : 4;
  if (bytes.length < 8 + lengthBytes) throw new TensorReadError(`${where} ends inside its header.`, 'tensor-truncated');
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const headerStart = 8 + lengthBytes;
  const dataOffset = headerStart + headerLength;
  if (dataOffset > bytes.length) throw new TensorReadError(`${where} declares a ${headerLength}-byte header but the file ends before it does.`, 'tensor-truncated');
  const header = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(bytes.subarray(headerStart, dataOffset));
  return { ...parseHeaderDict(header, where), dataOffset };
}

/** The three keys of the header dict, read by pattern: it is data, never evaluated. */
function parseHeaderDict(header: string, where: string): Omit<NpyHeader, 'dataOffset'> {
  const descr = /['"]descr['"]\s*:\s*['"]([<>|=])([a-zA-Z]\d+)['"]/.exec(header);
  const fortran = /['"]fortran_order['"]\s*:\s*(True|False)/.exec(header);
  const shape = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) {
    const structured = /['"]descr['"]\s*:\s*\[/.test(header);
    throw new TensorReadError(
      structured ? `${where} holds a structured (record) array; only plain numeric arrays are read.` : `${where} has a header without a readable descr, fortran_order and shape.`,
      'tensor-header',
    );
  }
  const dtype = KINDS[descr[2]];
  if (!dtype) throw new TensorReadError(`${where} holds dtype \`${descr[1]}${descr[2]}\`; read are float16/32/64, integers and bool.`, 'tensor-dtype');
  const dims = shape[1].split(',').map((part) => part.trim()).filter((part) => part !== '');
  if (dims.some((dim) => !/^\d+L?$/.test(dim))) throw new TensorReadError(`${where} declares shape (${shape[1]}), which is not a list of sizes.`, 'tensor-header');
  return {
    dtype,
    // '|' (not applicable, one-byte types) and '=' (native; numpy writes '<' on every little-endian machine).
    littleEndian: descr[1] !== '>',
    fortran: fortran[1] === 'True',
    shape: checkShape(dims.map((dim) => Number.parseInt(dim, 10)), where),
  };
}

export function readNpy(bytes: Uint8Array, key: string, budget: ElementBudget, where = key): Tensor {
  const header = readHeader(bytes, where);
  const count = elementCount(header.shape);
  const needed = count * BYTES_PER_ELEMENT[header.dtype];
  const present = bytes.length - header.dataOffset;
  if (present < needed) {
    throw new TensorReadError(`${where} declares shape (${header.shape.join(', ')}) of ${header.dtype}: ${needed.toLocaleString('en-US')} bytes, but only ${present.toLocaleString('en-US')} follow the header.`, 'tensor-truncated');
  }
  budget.take(count, where);
  const stored = decodeElements(bytes, header.dataOffset, count, header.dtype, header.littleEndian, budget.limits.viewsOnFile);
  const data = header.fortran && header.shape.length > 1 ? gatherStrided(stored, 0, header.shape, fortranStrides(header.shape)) : stored;
  return { key, dtype: header.dtype, shape: header.shape, data };
}

/** Element strides of a column-major (Fortran order) array. */
function fortranStrides(shape: readonly number[]): number[] {
  const strides: number[] = [];
  let stride = 1;
  for (const size of shape) {
    strides.push(stride);
    stride *= size;
  }
  return strides;
}
