// A model folder on the local disk, as core/model reads it: sizes and byte ranges, nothing else.
import { type FileHandle, open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { totalmem } from 'node:os';
import { ModelFileError, type ModelFiles } from '../core/model/weights';

/** What a model run may take by default: three quarters of the machine's memory. */
export function defaultMemoryLimit(): number {
  return Math.floor(totalmem() * 0.75);
}

/** How long a file stays open after its last read. */
const IDLE_CLOSE_MS = 1000;

export function folderFiles(folder: string): ModelFiles {
  const files = new OpenFiles();
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
    read(name, offset, length, into) {
      return files.use(join(folder, name), async (file) => {
        const bytes = into ? into.subarray(0, length) : new Uint8Array(length);
        const { bytesRead } = await file.read(bytes, 0, length, offset);
        if (bytesRead !== length) throw new ModelFileError(`${name} is truncated: it ends before byte ${offset + length}`);
        return bytes;
      });
    },
  };
}

/**
 * The files a model reads, each opened once for a burst of reads and closed once no read has come
 * for IDLE_CLOSE_MS. A forward reads thousands of byte ranges (a row per token of the embedding
 * table, every layer's tensors): an open and a close per read cost 3–4× the read itself (measured
 * here: 350–530 µs against 100–125 µs per 256-byte read). Closing when idle means no checkpoint is
 * held open between runs, where Windows would refuse to replace it.
 */
interface OpenFile {
  handle: Promise<FileHandle>;
  /** Reads under way. */
  reads: number;
  idle?: ReturnType<typeof setTimeout>;
}

class OpenFiles {
  private readonly open = new Map<string, OpenFile>();

  async use<T>(path: string, read: (file: FileHandle) => Promise<T>): Promise<T> {
    let entry = this.open.get(path);
    if (!entry) {
      const opened: OpenFile = { handle: open(path, 'r'), reads: 0 };
      // A file that cannot be opened is not kept: the next read tries again.
      opened.handle.catch(() => this.open.get(path) === opened && this.open.delete(path));
      this.open.set(path, opened);
      entry = opened;
    }
    clearTimeout(entry.idle);
    entry.reads++;
    try {
      return await read(await entry.handle);
    } finally {
      entry.reads--;
      if (entry.reads === 0) this.closeWhenIdle(path, entry);
    }
  }

  private closeWhenIdle(path: string, entry: OpenFile): void {
    entry.idle = setTimeout(() => {
      if (this.open.get(path) !== entry || entry.reads > 0) return;
      this.open.delete(path);
      void entry.handle.then((file) => file.close()).catch(() => undefined);
    }, IDLE_CLOSE_MS);
    // An idle file never keeps a process (the CLI, a test) alive.
    entry.idle.unref?.();
  }
}
