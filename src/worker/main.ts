// The worker thread: reading documents (documents.ts) and every attention computation run here,
// never on the extension host's thread, and so does the max pooling of large matrices for the
// panel (each result goes out with its
// panel views: 60–240 ms per 4096² matrix in JavaScript, that the host's event loop no longer
// spends), including the regions the panel zooms into. A fast result's matrices are pooled by the
// WebAssembly kernel on this thread, in place in the run's memory (fast/pooling.ts).
// Requests are handled one at a time, in arrival order; each can be cancelled through its shared
// flag while it runs (between shares of the fast kernels, between row blocks of the reference
// engine) or while it waits in the queue.
//
// Fast results are views on their run's shared WebAssembly memory and reach the host shared, not
// copied (transfer.ts). So a memory, once posted, is never written again (but for its pooling
// scratch, which no result views): the host may read it for as long as it keeps the result. What saves the next run its page faults instead is a spare
// memory of the last run's size, faulted in while the worker idles (SpareMemory), which the next
// run takes as `recycle`. Copying results out to reuse the posted memory was measured slower: the
// copy's fresh pages fault just the same, on one thread.
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { CancelledError } from '../core/engine';
import { type FastControl, maxPoolFast, memoryBytesOf, SpareMemory } from '../core/engine/fast';
import { runAttentionOnBackend } from '../core/engine/native/select';
import type { AttentionResult, AttentionSpec } from '../core/types';
import { readTensorFile } from '../core/parse/tensors';
import { summarize } from '../core/parse/tensors/summary';
import { viewOf } from '../views/matrixView';
import { resultViewOf } from '../views/model';
import { answerVariants, onDemandViewsOf } from '../views/variantsOnDemand';
import type { WorkerProblemOutcome, WorkerReadRequest, WorkerRequest, WorkerResponse, WorkerRunRequest, WorkerTensorFileRequest, WorkerVariantsRequest } from '../protocol';
import { DocumentCopies, readCells, readText } from './documents';
import { ModelRuns } from './models';
import { withGenerateChecks } from './modelDirectives';
import { answerHeads, closeHeads, holdStack, openHeads } from './heads';
import { TensorReferenceFiles } from './tensorReferences';
import { transferablesOf } from './transfer';

/** The compute function — the native backend where it wins (native/select.ts), else the
 * WebAssembly fast path, which hands what it does not cover to the reference `runAttention`.
 * Swapping engines (sync or async) is this one line. */
const compute: (spec: AttentionSpec, control: FastControl) => AttentionResult | Promise<AttentionResult> =
  runAttentionOnBackend;

/** Larger runs get no spare: the worker would hold that much memory idle. */
const MAX_SPARE_BYTES = 256 * 2 ** 20;
/** Pages faulted in per turn of the event loop, so a request arriving meanwhile waits little. */
const TOUCH_SLICE_BYTES = 4 * 2 ** 20;

const port = parentPort;
if (!port) throw new Error('src/worker/main.ts must run inside a worker thread');

let spare: SpareMemory | undefined;
let queue: Promise<void> = Promise.resolve();
const documents = new DocumentCopies();
const models = new ModelRuns();
const tensorReferences = new TensorReferenceFiles();
port.on('message', (request: WorkerRequest) => {
  switch (request.type) {
    case 'region': {
      const view = viewOf(request.matrix, request.region, maxPoolFast);
      const response: WorkerResponse = { type: 'region', id: request.id, view };
      port.postMessage(response, transferablesOf(view));
      return;
    }
    case 'variants':
      // At once, like a region: the page waits for it, and it is one head's n², not a run.
      return port.postMessage(answerVariantsRequest(request));
    case 'text':
      return documents.receive(request);
    case 'edit':
      return documents.edit(request);
    case 'forget':
      return documents.forget(request.document);
    case 'read':
      // Read at once, not after the queued runs: the fast kernels compute on other threads.
      return void answerRead(request);
    case 'readCells': {
      const reading = readCells(request.cells);
      const response: WorkerResponse = { type: 'read', id: request.id, reading };
      port.postMessage(response, transferablesOf(reading));
      return;
    }
    case 'run':
      queue = queue.then(() => handle(request));
      return;
    case 'tensorFile':
      return readTensors(request);
    case 'model':
      // Queued with the runs: both compute on the fast path's threads.
      // A generation's prompt, its attention and its steps go out as they come, their arrays transferred.
      queue = queue.then(async () => port.postMessage(await models.run(request, (response) => port.postMessage(response, transferablesOf(response)))));
      return;
    case 'modelHead':
      queue = queue.then(async () => port.postMessage(await models.head(request)));
      return;
    case 'modelRelease':
      // After the runs under way: their sessions are let go once they end.
      queue = queue.then(async () => port.postMessage(models.release(request)));
      return;
    case 'modelPrepare':
      // With the runs: a run asked for meanwhile finds the tokenizer built rather than building it too.
      queue = queue.then(async () => port.postMessage(await models.prepare(request)));
      return;
    case 'headsOpen':
    case 'headsAdopt':
      return port.postMessage(openHeads(request));
    case 'headsModel': {
      // After the runs queued before it: the run it names may still be computing.
      queue = queue.then(() => {
        const opened = models.heads(request.run);
        port.postMessage(typeof opened === 'string' ? { type: 'headsFailed', id: request.id, error: opened } : holdStack(request.id, opened.stack, opened.title, opened.notes));
      });
      return;
    }
    case 'headsQuery': {
      // Never rejects: a prediction's failure must not stall the queue of runs behind it.
      const answer = async () => {
        const response: WorkerResponse = await answerHeads(request).catch((error: unknown) => ({ type: 'headsFailed', id: request.id, error: messageOf(error) }));
        port.postMessage(response, transferablesOf(response));
      };
      // A prediction waits for the runs queued before it (the LM head's product computes on the
      // fast path's threads); the other queries are answered at once.
      if (request.query.kind === 'predict') queue = queue.then(answer);
      else void answer();
      return;
    }
    case 'headsClose':
      return closeHeads(request.stack);
  }
});

function answerVariantsRequest(request: WorkerVariantsRequest): WorkerResponse {
  try {
    return { type: 'variants', id: request.id, answer: answerVariants(request.spec, request.query, request.output) };
  } catch (error) {
    return { type: 'variantsFailed', id: request.id, error: messageOf(error) };
  }
}

/** A text's reading, with the tensors it loads read here too. */
async function answerRead(request: WorkerReadRequest): Promise<void> {
  const text = documents.textOf(request.document, request.version);
  const read = text === undefined ? null : readText(text, request.maxChars);
  let reading = read;
  try {
    if (read && request.tensors) reading = await withGenerateChecks(await tensorReferences.resolve(read, request.tensors.folder, request.tensors.maxElements), request.tensors.folder);
  } catch (error) {
    // A failure past the reader's own messages (an allocation, say): the text's reading stands with
    // one diagnostic, its problems that load tensors wait for them, and the worker lives on.
    const start = { line: 0, character: 0 };
    const message = `Attention Lens could not read the tensors this file loads: ${messageOf(error)}`;
    reading = read && { ...read, parse: { ...read.parse, diagnostics: [...read.parse.diagnostics, { range: { start, end: start }, severity: 'error', code: 'read-failed', message }] } };
  }
  const response: WorkerResponse = { type: 'read', id: request.id, reading };
  // Large matrices are on shared memory; small ones are copied, cheaper than transferring each.
  port!.postMessage(response);
}

/** A tensor file, read and decoded here: a 64 MB checkpoint never holds the host's thread. */
function readTensors(request: WorkerTensorFileRequest): void {
  let response: WorkerResponse;
  try {
    const file = readTensorFile(request.path, readFileSync(request.path), { maxElements: request.maxElements });
    response = { type: 'tensorFile', id: request.id, file, summaries: file.tensors.map(summarize) };
  } catch (error) {
    response = { type: 'tensorFileFailed', id: request.id, error: messageOf(error) };
  }
  port!.postMessage(response, transferablesOf(response));
}

async function handle(request: WorkerRunRequest): Promise<void> {
  const control = { isCancelled: () => Atomics.load(request.cancelFlag, 0) !== 0 };
  let spareBytes = 0;
  try {
    const outcomes: WorkerProblemOutcome[] = [];
    for (const { index, spec } of request.problems) {
      if (control.isCancelled()) throw new CancelledError();
      const taken = takeSpare();
      let result: AttentionResult | undefined;
      try {
        result = await compute(spec, { ...control, cancelFlag: request.cancelFlag, recycle: taken?.handle });
        // The reference engine checks the flag between row blocks; a run that ends just as it is
        // superseded is dropped here.
        if (control.isCancelled()) throw new CancelledError();
        logFallbackOnce(result);
        outcomes.push({ index, result, view: { ...resultViewOf(result, spec.WO, maxPoolFast), ...onDemandViewsOf(spec, result) } });
        spareBytes = Math.max(spareBytes, memoryBytesOf(result.output));
      } catch (error) {
        if (error instanceof CancelledError) throw error;
        outcomes.push({ index, error: messageOf(error) });
      } finally {
        // Not taken after all (the reference engine ran, or the spare was too small): keep it.
        if (taken && !(result && taken.holds(result.output))) keepSpare(taken);
      }
    }
    const response: WorkerResponse = { type: 'result', id: request.id, outcomes };
    port!.postMessage(response, transferablesOf(outcomes));
    if (spareBytes > (spare?.bytes ?? 0) && spareBytes <= MAX_SPARE_BYTES) keepSpare(new SpareMemory(spareBytes));
  } catch (error) {
    const response: WorkerResponse =
      error instanceof CancelledError
        ? { type: 'cancelled', id: request.id }
        : { type: 'failed', id: request.id, error: messageOf(error) };
    port!.postMessage(response);
  }
}

/** The spare memory, if any, for the run about to start: from now on it is that run's alone. */
function takeSpare(): SpareMemory | undefined {
  const taken = spare;
  spare = undefined;
  return taken;
}

/** Makes `memory` the spare and faults in its pages, a slice per turn, until done or taken. */
function keepSpare(memory: SpareMemory): void {
  spare = memory;
  const touchSome = (): void => {
    // Once a run has taken it, the memory holds that run's numbers: stop touching.
    if (spare === memory && memory.touch(TOUCH_SLICE_BYTES)) setImmediate(touchSome);
  };
  setImmediate(touchSome);
}

let fallbackLogged = false;

/** The one log line of a native backend that could not run (the extension host's log shows the
 * worker's console); the status bar's hint comes with every such result. */
function logFallbackOnce(result: AttentionResult): void {
  if (fallbackLogged || !result.backend?.fallback) return;
  fallbackLogged = true;
  console.warn(`Attention Lens: ${result.backend.fallback}; the WebAssembly kernels compute instead.`);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
