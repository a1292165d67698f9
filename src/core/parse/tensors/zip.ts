import { unzipSync } from 'fflate';
import { TensorReadError } from './tensor';

// Zip archives (.npz, PyTorch checkpoints) through fflate. Members are inflated only when their
// declared size fits what is left of the byte budget, so a zip bomb or a lying directory costs an
// error, not memory.

export function isZip(bytes: Uint8Array): boolean {
  return bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;
}

/** Bytes of the smallest central-directory entry (its fixed part, an empty name). */
const MIN_DIRECTORY_ENTRY = 46;

/**
 * The end-of-directory record's entry count and directory offset (the zip64 record's when there
 * is one), found as fflate finds them, checked against the bytes present: fflate walks as many
 * entries as the record claims, and one corrupted byte of a count made it walk 4 billion.
 */
function checkDirectory(bytes: Uint8Array, where: string): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u32 = (at: number) => (at >= 0 && at + 4 <= bytes.length ? view.getUint32(at, true) : -1);
  let end = bytes.length - 22;
  while (end >= 0 && u32(end) !== 0x06054b50 && bytes.length - end <= 65558) end--;
  if (end < 0 || u32(end) !== 0x06054b50) return; // fflate says so itself
  let count = view.getUint16(end + 8, true);
  let offset = u32(end + 16);
  if (u32(end - 20) === 0x07064b50) {
    const zip64 = u32(end - 12);
    if (u32(zip64) === 0x06064b50) {
      count = u32(zip64 + 32);
      offset = u32(zip64 + 48);
    }
  }
  if (count > 0 && (offset < 0 || offset >= bytes.length || count > (bytes.length - offset) / MIN_DIRECTORY_ENTRY)) {
    throw new TensorReadError(`${where} is not a readable zip archive (its directory claims ${count.toLocaleString('en-US')} entries at byte ${offset}, in a file of ${bytes.length.toLocaleString('en-US')} bytes).`, 'tensor-truncated');
  }
}

/** The members `wanted` picks, inflated, by name. */
export function unzipMembers(bytes: Uint8Array, where: string, maxBytes: number, wanted: (name: string) => boolean): Map<string, Uint8Array> {
  checkDirectory(bytes, where);
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
