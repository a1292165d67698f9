import { isNpy, readNpy } from './npy';
import { readNpz } from './npz';
import { readSafetensors } from './safetensors';
import { DEFAULT_LIMITS, ElementBudget, type TensorFile, type TensorLimits, TensorReadError } from './tensor';
import { readTorch } from './torch';
import { isZip } from './zip';

export { DEFAULT_LIMITS, TensorReadError, type Tensor, type TensorDType, type TensorFile, type TensorFormat, type TensorLimits } from './tensor';

/** File names the tensor readers open. */
export const TENSOR_FILE = /\.(npy|npz|safetensors|pt|pth|bin|ckpt)$/i;

/** Reads a tensor file, picking the reader from the name and checking it against the bytes. */
export function readTensorFile(fileName: string, file: Uint8Array, limits: TensorLimits = DEFAULT_LIMITS): TensorFile {
  // The file's bytes as they were read (a Node Buffer, say), without copying them: as a plain
  // Uint8Array, whose slice() copies — a Buffer's slice() is a view, and the readers' slices must
  // be copies of their own, aligned for their typed arrays.
  const bytes = new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
  const budget = new ElementBudget(limits);
  const where = fileName.slice(fileName.lastIndexOf('/') + 1);
  const extension = /\.([^./]+)$/.exec(fileName)?.[1].toLowerCase();
  if (extension === 'npy' || (extension !== 'safetensors' && isNpy(bytes))) {
    return { format: 'npy', tensors: [readNpy(bytes, 'array', budget, where)] };
  }
  if (extension === 'safetensors') return { format: 'safetensors', ...readSafetensors(bytes, where, budget) };
  if (!isZip(bytes)) {
    if (bytes[0] === 0x80) throw new TensorReadError(`${where} is a PyTorch file in the legacy (pre-1.6, non-zip) format, which is not read; save it again with torch.save's default.`, 'tensor-format');
    throw new TensorReadError(`${where} is neither .npy, .npz, safetensors nor a PyTorch zip checkpoint.`, 'tensor-format');
  }
  if (extension === 'npz') return { format: 'npz', tensors: readNpz(bytes, where, budget, limits.maxElements) };
  return { format: 'torch', tensors: readTorch(bytes, where, budget, limits.maxElements) };
}
