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
function checkDirectory(bytes: Uint8Array, where: string): Directory | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u32 = (at: number) => (at >= 0 && at + 4 <= bytes.length ? view.getUint32(at, true) : -1);
  let end = bytes.length - 22;
  while (end >= 0 && u32(end) !== 0x06054b50 && bytes.length - end <= 65558) end--;
  if (end < 0 || u32(end) !== 0x06054b50) return undefined; // fflate says so itself
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
  return { count, offset };
}

interface Directory {
  count: number;
  offset: number;
}

/** A 32-bit size or offset that zip64's extra field holds instead. */
const ZIP64_MARK = 0xffffffff;

/**
 * The members `wanted` picks as views on the archive's bytes, when each is stored uncompressed
 * (torch.save and numpy.savez store them) and needs none of zip64's extra fields; else undefined,
 * and fflate makes copies. fflate copies even a stored member, and copying a 604 MB checkpoint cost
 * ~4 s of CPU here. Anything unexpected also gives undefined: fflate then reads, or says what is wrong.
 */
function storedViews(bytes: Uint8Array, directory: Directory, wanted: (name: string) => boolean, take: (name: string, size: number) => void): Map<string, Uint8Array> | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const names = new TextDecoder();
  const members = new Map<string, Uint8Array>();
  let at = directory.offset;
  for (let entry = 0; entry < directory.count; entry++) {
    if (at + MIN_DIRECTORY_ENTRY > bytes.length || view.getUint32(at, true) !== 0x02014b50) return undefined;
    const method = view.getUint16(at + 10, true);
    const storedSize = view.getUint32(at + 20, true);
    const size = view.getUint32(at + 24, true);
    const nameLength = view.getUint16(at + 28, true);
    const localOffset = view.getUint32(at + 42, true);
    if (at + MIN_DIRECTORY_ENTRY + nameLength > bytes.length) return undefined;
    const name = names.decode(bytes.subarray(at + MIN_DIRECTORY_ENTRY, at + MIN_DIRECTORY_ENTRY + nameLength));
    at += MIN_DIRECTORY_ENTRY + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    if (!wanted(name)) continue;
    if (method !== 0 || storedSize !== size || size === ZIP64_MARK || localOffset === ZIP64_MARK) return undefined;
    if (localOffset + LOCAL_HEADER > bytes.length || view.getUint32(localOffset, true) !== 0x04034b50) return undefined;
    const start = localOffset + LOCAL_HEADER + view.getUint16(localOffset + 26, true) + view.getUint16(localOffset + 28, true);
    if (start + size > bytes.length) return undefined;
    take(name, size);
    members.set(name, bytes.subarray(start, start + size));
  }
  return members;
}

/** Bytes of a member's local header before its name. */
const LOCAL_HEADER = 30;

/** The members `wanted` picks, inflated, by name; stored ones as views on `bytes` when `viewsOnFile`. */
export function unzipMembers(bytes: Uint8Array, where: string, maxBytes: number, wanted: (name: string) => boolean, viewsOnFile = false): Map<string, Uint8Array> {
  const directory = checkDirectory(bytes, where);
  let budget = maxBytes;
  const take = (name: string, size: number) => {
    budget -= size;
    if (budget < 0) throw new TensorReadError(`${where}: member ${name} would inflate beyond ${maxBytes.toLocaleString('en-US')} bytes in all; not read.`, 'tensor-too-large');
  };
  const views = viewsOnFile && directory ? storedViews(bytes, directory, wanted, take) : undefined;
  if (views) return views;
  budget = maxBytes;
  let members: Record<string, Uint8Array>;
  try {
    members = unzipSync(bytes, {
      filter: (file) => {
        if (!wanted(file.name)) return false;
        take(file.name, file.originalSize);
        return true;
      },
    });
  } catch (error) {
    if (error instanceof TensorReadError) throw error;
    throw new TensorReadError(`${where} is not a readable zip archive (${error instanceof Error ? error.message : String(error)}).`, 'tensor-truncated');
  }
  return new Map(Object.entries(members));
}
