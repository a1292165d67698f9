// The extension's loader for the tensors a text names (`X = np.load("acts.npy")`): files are
// found relative to the document's folder and read and decoded in the worker. A decoded file is
// kept while its modification time stays the same, so typing in the text does not read it again.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TensorFile } from '../core/parse/tensors';
import type { TensorFileLoader } from '../core/parse/tensors/resolve';
import type { AttentionWorker } from '../worker/client';
import { readSettings } from './settings';

export class TensorReferenceFiles {
  private readonly cache = new Map<string, { mtime: number; file: Promise<TensorFile> }>();

  constructor(private readonly worker: AttentionWorker) {}

  loaderFor(document: vscode.TextDocument): TensorFileLoader {
    const folder = path.dirname(document.uri.fsPath);
    const maxElements = readSettings(document.uri).maxMatrixElements;
    return async (file) => {
      const absolute = path.isAbsolute(file) ? file : path.join(folder, file);
      const { mtime } = await vscode.workspace.fs.stat(vscode.Uri.file(absolute));
      const cached = this.cache.get(absolute);
      if (cached && cached.mtime === mtime) return cached.file;
      const read = this.worker.readTensorFile(absolute, maxElements).then((content) => content.file);
      this.cache.set(absolute, { mtime, file: read });
      read.catch(() => this.cache.delete(absolute));
      return read;
    };
  }
}
