// A model folder made ready before its first run. When a note names a folder (an
// `attention: model="…"` directive) or a model's config.json is open, the worker builds the
// folder's tokenizer, loads ONNX Runtime and starts the compute threads once the editor has been
// idle for a second; the palette command does it as soon as its folder is picked, while the text
// is typed. GPT-2's tokenizer alone takes 0.35–0.6 s of CPU to build, which the click's run would
// otherwise spend before its forward. Once per folder per worker (the worker keeps what it built).
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AttentionWorker } from '../worker/client';
import type { DocumentAnalyzer } from './analysis';
import { modelRunArguments } from './commands';

/** Quiet time before a named folder is prepared: the worker is busy ~0.5 s building it, and an edit meanwhile would wait. */
const IDLE_MS = 1000;

export class ModelPreparer implements vscode.Disposable {
  /** The folders asked of each worker (by its start count), so a restarted worker is asked again. */
  private readonly asked = new Map<string, Promise<void>>();
  private readonly waiting = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly worker: Pick<AttentionWorker, 'prepareModel' | 'starts'>,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** Prepares `folder` once nothing has asked for it for IDLE_MS (each ask restarts the wait). */
  soon(folder: string): void {
    if (this.asked.has(this.key(folder))) return;
    clearTimeout(this.waiting.get(folder));
    this.waiting.set(
      folder,
      setTimeout(() => {
        this.waiting.delete(folder);
        void this.now(folder);
      }, IDLE_MS),
    );
  }

  /** Prepares `folder` now (unless it was); resolves once the worker has. */
  now(folder: string): Promise<void> {
    clearTimeout(this.waiting.get(folder));
    this.waiting.delete(folder);
    let asked = this.asked.get(this.key(folder));
    if (!asked) {
      asked = this.worker.prepareModel(folder).then(
        ({ ms, error }) =>
          error
            ? this.log.info(`could not prepare ${folder} ahead of a run (${error})`)
            : this.log.info(`prepared ${folder} for its first run (tokenizer, ONNX Runtime, compute threads) in ${ms.toFixed(0)} ms`),
        (error: unknown) => this.log.info(`could not prepare ${folder} ahead of a run (${String(error)})`),
      );
      // Keyed after the ask, which starts the worker when none runs yet.
      this.asked.set(this.key(folder), asked);
    }
    return asked;
  }

  /** The folders asked of the current worker (tests). */
  folders(): string[] {
    const prefix = `${this.worker.starts}:`;
    return [...this.asked.keys()].filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length));
  }

  dispose(): void {
    for (const timer of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
  }

  private key(folder: string): string {
    return `${this.worker.starts}:${folder}`;
  }
}

export function registerModelPreparer(context: vscode.ExtensionContext, analyzer: DocumentAnalyzer, worker: AttentionWorker, log: vscode.LogOutputChannel): ModelPreparer {
  const preparer = new ModelPreparer(worker, log);
  const configOpened = (document: vscode.TextDocument) => {
    if (path.basename(document.uri.fsPath) === 'config.json' && /"model_type"\s*:/.test(document.getText())) preparer.soon(path.dirname(document.uri.fsPath));
  };
  context.subscriptions.push(
    preparer,
    analyzer.onDidAnalyze(({ document, analysis }) => {
      for (const problem of analysis.parse.problems) if (problem.model) preparer.soon(modelRunArguments(document, problem.model)[0]);
    }),
    vscode.workspace.onDidOpenTextDocument(configOpened),
  );
  vscode.workspace.textDocuments.forEach(configOpened);
  return preparer;
}
