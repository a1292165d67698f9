// Whole-model runs in the worker: the run (its layers' inputs, Q and K, on demand a head's
// weights) stays here, and the host gets a summary — tokens, predictions, counts — and, when the
// user opens a head, that head's step-by-step spec. The last few runs are kept for the views.
import { basename } from 'node:path';
import { CancelledError } from '../core/engine';
import { predictionText } from '../core/model/describe';
import { runModel, type ModelRun } from '../core/model/run';
import { folderFiles } from '../node/modelFiles';
import type { ModelRunSummary, WorkerModelHeadRequest, WorkerModelRequest, WorkerResponse } from '../protocol';

/** Runs kept for their views and drill-downs: the latest, and the ones a panel may still show. */
const KEPT_RUNS = 4;

export class ModelRuns {
  private readonly runs = new Map<number, ModelRun>();

  async run(request: WorkerModelRequest): Promise<WorkerResponse> {
    const control = { isCancelled: () => Atomics.load(request.cancelFlag, 0) !== 0, cancelFlag: request.cancelFlag };
    try {
      if (control.isCancelled()) throw new CancelledError();
      const run = await runModel(folderFiles(request.folder), request.input, { ...control, memoryLimitBytes: request.memoryLimitBytes });
      this.keep(request.id, run);
      return { type: 'model', id: request.id, summary: summaryOf(request.id, run) };
    } catch (error) {
      return { type: 'modelFailed', id: request.id, cancelled: error instanceof CancelledError, error: messageOf(error) };
    }
  }

  async head(request: WorkerModelHeadRequest): Promise<WorkerResponse> {
    const run = this.runs.get(request.run);
    if (!run) return { type: 'modelFailed', id: request.id, cancelled: false, error: 'that model run is no longer held: run the model again' };
    try {
      return { type: 'modelHead', id: request.id, spec: await run.drillDownSpec(request.layer, request.head) };
    } catch (error) {
      return { type: 'modelFailed', id: request.id, cancelled: false, error: messageOf(error) };
    }
  }

  /** A kept run as the heads views show it: the stack, a title, and its predictions as notes. */
  heads(run: number): { stack: ModelRun; title: string; notes: string[] } | string {
    const stack = this.runs.get(run);
    if (!stack) return 'that model run is no longer held: run the model again';
    const folder = stack.source.kind === 'model' ? basename(stack.source.folder) : stack.architecture;
    return { stack, title: `${folder} (${stack.architecture}) · ${stack.tokens.length} tokens`, notes: [...stack.predictions.map(predictionText), ...stack.warnings] };
  }

  private keep(id: number, run: ModelRun): void {
    this.runs.set(id, run);
    for (const old of this.runs.keys()) if (this.runs.size > KEPT_RUNS) this.runs.delete(old);
  }
}

function summaryOf(id: number, run: ModelRun): ModelRunSummary {
  return {
    run: id,
    architecture: run.architecture,
    folder: run.source.kind === 'model' ? run.source.folder : '',
    tokens: run.tokens,
    tokenIds: run.tokenIds,
    layerCount: run.layerCount,
    headCount: run.headCount,
    predictions: run.predictions,
    warnings: run.warnings,
    backend: run.backend,
    timings: run.timings,
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
