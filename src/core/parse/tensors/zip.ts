import { unzipSync } from 'fflate';
import { TensorReadError } from './tensor';

// Zip archives (.npz, PyTorch checkpoints) through fflate. Members are inflated only when their
// declared size fits what is left of the byte budget, so a zip bomb or a lying directory costs an
// error, not memory.

export function isZip(bytes: Uint8Array): boolean {
  return bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;
}

/** The members `wanted` picks, inflated, by name. */
export function unzipMembers(bytes: Uint8Array, where: string, maxBytes: number, wanted: (name: string) => boolean): Map<string, Uint8Array> {
  let budget = maxBytes;
  let members: Record<string, Uint8Array>;
  try {
    members = unzipSync(bytes, {
      filter: (file) => {
        if (!wanted(file.name)) return false;
        budget -= file.originalSize;
        if (budget < 0) throw new TensorReadError(`${where}: member ${file.name} would inflate beyond ${maxBytes.toLocaleString('en-US')} bytes in all; not read.`, 'tensor-too-large');
        return true;
      },
    });
  } catch (error) {
    if (error instanceof TensorReadError) throw error;
    throw new TensorReadError(`${where} is not a readable zip archive (${error instanceof Error ? error.message : String(error)}).`, 'tensor-truncated');
  }
  return new Map(Object.entries(members));
}
