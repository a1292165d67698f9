// A model folder on the local disk, as core/model reads it: sizes and byte ranges, nothing else.
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { totalmem } from 'node:os';
import { ModelFileError, type ModelFiles } from '../core/model/weights';

/** What a model run may take by default: three quarters of the machine's memory. */
export function defaultMemoryLimit(): number {
  return Math.floor(totalmem() * 0.75);
}

export function folderFiles(folder: string): ModelFiles {
  return {
    folder,
    async size(name) {
      try {
        const info = await stat(join(folder, name));
        return info.isFile() ? info.size : undefined;
      } catch {
        return undefined;
      }
    },
    async read(name, offset, length, into) {
      const file = await open(join(folder, name), 'r');
      try {
        const bytes = into ? into.subarray(0, length) : new Uint8Array(length);
        const { bytesRead } = await file.read(bytes, 0, length, offset);
        if (bytesRead !== length) throw new ModelFileError(`${name} is truncated: it ends before byte ${offset + length}`);
        return bytes;
      } finally {
        await file.close();
      }
    },
  };
}
