// Watches the tensor files texts load (`X = np.load("acts.npy")`): the worker reads them as part
// of the text's reading and names them; when one changes on disk (written, replaced, deleted),
// the texts that load it are read again, so their CodeLens, hovers and next run follow the file.
// Node's own watcher on the file's folder (the worker reads local files only, wherever they are):
// a text's tensors may lie outside the workspace, where a FileSystemWatcher saw no change in the
// integration test, and watching the folder also sees a file replaced by a rename.
import { watch, type FSWatcher } from 'node:fs';
import * as path from 'node:path';
import type * as vscode from 'vscode';

/** One write is several events: the texts are read again once they stop for this long. */
const SETTLE_MS = 50;

export class TensorReferenceWatcher implements vscode.Disposable {
  /** Per watched file: its folder's watcher and the texts (URIs) that load it. */
  private readonly files = new Map<string, { watcher: FSWatcher; texts: Set<string>; timer?: ReturnType<typeof setTimeout> }>();

  constructor(private readonly changed: (text: string) => void) {}

  /** The text `text` now loads `files` (absolute paths) and no others. */
  watch(text: string, files: string[]): void {
    for (const [file, entry] of this.files) {
      if (files.includes(file) || !entry.texts.delete(text) || entry.texts.size > 0) continue;
      this.stop(file);
    }
    for (const file of files) (this.files.get(file) ?? this.start(file))?.texts.add(text);
  }

  dispose(): void {
    for (const file of [...this.files.keys()]) this.stop(file);
  }

  private start(file: string) {
    let watcher: FSWatcher;
    try {
      watcher = watch(path.dirname(file), (_event, name) => {
        if (name !== path.basename(file)) return;
        clearTimeout(entry.timer);
        entry.timer = setTimeout(() => entry.texts.forEach((text) => this.changed(text)), SETTLE_MS);
      });
    } catch {
      return undefined; // no such folder: the reading already says the file cannot be read
    }
    watcher.on('error', () => this.stop(file));
    const entry: { watcher: FSWatcher; texts: Set<string>; timer?: ReturnType<typeof setTimeout> } = { watcher, texts: new Set<string>() };
    this.files.set(file, entry);
    return entry;
  }

  private stop(file: string): void {
    const entry = this.files.get(file);
    if (!entry) return;
    clearTimeout(entry.timer);
    entry.watcher.close();
    this.files.delete(file);
  }
}
