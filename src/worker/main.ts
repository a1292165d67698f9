// The worker thread: every attention computation runs here, never on the extension host's thread.
// Requests are handled one at a time, in arrival order; each can be cancelled through its shared
// flag while it runs (between heads / row blocks) or while it waits in the queue.
import { parentPort } from 'node:worker_threads';
import { CancelledError } from '../core/engine';
import { runAttentionFast } from '../core/engine/fast';
import type { AttentionResult, AttentionSpec } from '../core/types';
import type { WorkerProblemOutcome, WorkerRequest, WorkerResponse } from '../protocol';
import { transferablesOf } from './transfer';

type Control = { isCancelled: () => boolean };
/** The compute function — the WebAssembly fast path, which hands what it does not cover to the
 * reference `runAttention`. Swapping engines (sync or async) is this one line. */
const compute: (spec: AttentionSpec, control: Control) => AttentionResult | Promise<AttentionResult> =
  runAttentionFast;

const port = parentPort;
if (!port) throw new Error('src/worker/main.ts must run inside a worker thread');

let queue: Promise<void> = Promise.resolve();
port.on('message', (request: WorkerRequest) => {
  queue = queue.then(() => handle(request));
});

async function handle(request: WorkerRequest): Promise<void> {
  const control: Control = { isCancelled: () => Atomics.load(request.cancelFlag, 0) !== 0 };
  try {
    const outcomes: WorkerProblemOutcome[] = [];
    for (const { index, spec } of request.problems) {
      if (control.isCancelled()) throw new CancelledError();
      try {
        const result = await compute(spec, control);
        // The fast path cannot stop inside its kernels: a run superseded meanwhile is dropped here.
        if (control.isCancelled()) throw new CancelledError();
        outcomes.push({ index, result });
      } catch (error) {
        if (error instanceof CancelledError) throw error;
        outcomes.push({ index, error: messageOf(error) });
      }
    }
    const response: WorkerResponse = { type: 'result', id: request.id, outcomes };
    port!.postMessage(response, transferablesOf(outcomes));
  } catch (error) {
    const response: WorkerResponse =
      error instanceof CancelledError
        ? { type: 'cancelled', id: request.id }
        : { type: 'failed', id: request.id, error: messageOf(error) };
    port!.postMessage(response);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
