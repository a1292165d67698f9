// The extension's loader for the tensors a text names (`X = np.load("acts.npy")`): files are
// found relative to the document's folder and read and decoded in the worker. The last few decoded
// files are kept while their modification time and size stay the same, so typing in the text does
// not read them again.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TensorFile } from '../core/parse/tensors';
import type { TensorFileLoader } from '../core/parse/tensors/resolve';
import type { AttentionWorker } from '../worker/client';
import { readSettings } from './settings';

/** Decoded files kept for the texts that load them (the least recently used go first). */
const KEPT_FILES = 8;

export class TensorReferenceFiles {
  private readonly cache = new Map<string, { version: string; file: Promise<TensorFile> }>();

  constructor(private readonly worker: AttentionWorker) {}

  loaderFor(document: vscode.TextDocument): TensorFileLoader {
    const folder = path.dirname(document.uri.fsPath);
    const maxElements = readSettings(document.uri).maxMatrixElements;
    return async (file) => {
      const absolute = path.isAbsolute(file) ? file : path.join(folder, file);
      const { mtime, size } = await vscode.workspace.fs.stat(vscode.Uri.file(absolute));
      const version = `${mtime}:${size}`;
      const cached = this.cache.get(absolute);
      this.cache.delete(absolute); // re-inserted last: the map's order is the order of use
      if (cached?.version === version) {
        this.cache.set(absolute, cached);
        return cached.file;
      }
      const read = this.worker.readTensorFile(absolute, maxElements).then((content) => content.file);
      this.cache.set(absolute, { version, file: read });
      if (this.cache.size > KEPT_FILES) this.cache.delete(this.cache.keys().next().value as string);
      read.catch(() => this.cache.delete(absolute));
      return read;
    };
  }
}
