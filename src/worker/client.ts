// The extension host's side of the worker: one worker thread, started on first use (the first
// document read), reused, terminated on dispose. A newer run for the same document cancels the
// older one through a shared flag (the worker stays warm: no restart, no re-compiling the
// engine). If the worker dies — crash, out of memory, killed — every pending run and read fails
// with a clear error and the next one starts a fresh worker; the extension host never goes down
// with it.
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { TensorFile } from '../core/parse/tensors';
import type { TensorSummary } from '../core/parse/tensors/summary';
import type { NotebookCell } from '../core/parse/notebook';
import type { AttentionSpec, Matrix } from '../core/types';
import type {
  GenerateRequest,
  ModelRunInput,
  ModelRunSummary,
  HeadsAnswer,
  HeadsQuery,
  MatrixView,
  StackInfo,
  WorkerHeadsAdoptRequest,
  Region,
  VariantsAnswer,
  VariantsQuery,
  WorkerVariantsRequest,
  TextChange,
  WorkerProblemOutcome,
  WorkerReadCellsRequest,
  WorkerReadRequest,
  WorkerReading,
  WorkerResponse,
  WorkerModelHeadRequest,
  WorkerModelPrepareRequest,
  WorkerModelReleaseRequest,
  ResidentModelInfo,
  WorkerModelRequest,
  WorkerRequest,
  WorkerRunRequest,
  AttentionKind,
  LanguageOffer,
} from '../protocol';

type ModelResponse = Extract<WorkerResponse, { type: 'model' | 'modelHead' | 'modelPrepared' | 'modelReleased' }>;
/** What a generation posts before its end: its prompt, then each step. */
export type GenerationProgress = Extract<WorkerResponse, { type: 'modelGenerating' | 'modelPrompt' | 'modelStep' }>;

export class RunCancelledError extends Error {
  constructor() {
    super('The run was cancelled.');
    this.name = 'RunCancelledError';
  }
}

export interface WorkerRun {
  outcomes: Promise<WorkerProblemOutcome[]>;
  /** Asks the run to stop (it stops at its next check) — what a newer run of the document does. */
  cancel(): void;
  /** Stops the run for sure — what the user's Cancel does: if the worker has not let go of it
   * after `graceMs` (the kernels look at the flag between shares of a call, so only a hung run
   * takes that long), the worker is restarted and every other pending run is sent to the new one. */
  stop(graceMs: number): void;
}

interface Pending {
  documentKey: string;
  request: WorkerRunRequest;
  cancelFlag: Int32Array;
  resolve(outcomes: WorkerProblemOutcome[]): void;
  reject(error: Error): void;
}

/** A stack the worker now holds, and what the page may know of it. */
export interface OpenedHeads {
  stack: number;
  info: StackInfo;
}

export interface TensorFileRead {
  file: TensorFile;
  summaries: TensorSummary[];
}

export class AttentionWorker {
  private worker: Worker | undefined;
  private lastError: Error | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly regions = new Map<number, { resolve(view: MatrixView): void; reject(error: Error): void }>();
  private readonly variantRequests = new Map<number, { resolve(answer: VariantsAnswer): void; reject(error: Error): void }>();
  private readonly reads = new Map<number, { request: WorkerReadRequest | WorkerReadCellsRequest; resolve(reading: WorkerReading | null): void; reject(error: Error): void }>();
  private readonly latestByDocument = new Map<string, number>();
  private readonly tensorReads = new Map<number, { resolve(read: TensorFileRead): void; reject(error: Error): void }>();
  private readonly modelRequests = new Map<number, { resolve(response: ModelResponse): void; reject(error: Error): void; progress?(message: GenerationProgress): void }>();
  /** The flag of the model run in progress: a newer model run raises it. */
  private modelCancelFlag: Int32Array | undefined;
  /** The stop flag of the generation in progress: Stop raises it. */
  private generationStopFlag: Int32Array | undefined;
  private readonly headsRequests = new Map<number, { resolve(response: OpenedHeads | HeadsAnswer): void; reject(error: Error): void }>();
  /** How many worker threads have been started (a restart after a crash counts). */
  starts = 0;

  constructor(
    private readonly scriptPath: string,
    private readonly resourceLimits: ResourceLimits,
    private readonly log: (message: string) => void,
  ) {}

  run(documentKey: string, problems: { index: number; spec: AttentionSpec }[]): WorkerRun {
    const superseded = this.latestByDocument.get(documentKey);
    if (superseded !== undefined) this.cancel(superseded);
    const id = this.nextId++;
    this.latestByDocument.set(documentKey, id);
    const cancelFlag = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
    const request: WorkerRunRequest = { type: 'run', id, cancelFlag, problems };
    const outcomes = new Promise<WorkerProblemOutcome[]>((resolve, reject) => {
      this.pending.set(id, { documentKey, request, cancelFlag, resolve, reject });
    });
    this.ensureWorker().postMessage(request);
    return {
      outcomes,
      cancel: () => this.cancel(id),
      stop: (graceMs) => {
        this.cancel(id);
        setTimeout(() => {
          if (this.pending.has(id)) this.restart();
        }, graceMs);
      },
    };
  }

  /**
   * The panel's view of `region` of a result's matrix (exact values, or pooled when the region is
   * still too large), pooled in the worker. For fast results, whose matrices are on shared memory:
   * posting one copies nothing, where pooling it here would hold the host for up to ~130 ms.
   */
  regionOf(matrix: Matrix, region: Region): Promise<MatrixView> {
    const id = this.nextId++;
    const view = new Promise<MatrixView>((resolve, reject) => this.regions.set(id, { resolve, reject }));
    this.ensureWorker().postMessage({ type: 'region', id, matrix, region });
    return view;
  }

  /** One head's Variants views, or one query tile's walk, of the run of `spec` (views/variantsOnDemand.ts);
   * rejects with the worker's words when the problem has no such head or tile. `output`: the
   * head's output as the run computed it, for a walk (on shared memory for fast results). */
  variantsOf(spec: AttentionSpec, query: VariantsQuery, output?: Matrix): Promise<VariantsAnswer> {
    const id = this.nextId++;
    const answer = new Promise<VariantsAnswer>((resolve, reject) => this.variantRequests.set(id, { resolve, reject }));
    const request: WorkerVariantsRequest = { type: 'variants', id, spec, query, ...(output ? { output } : {}) };
    this.ensureWorker().postMessage(request);
    return answer;
  }

  /** A tensor file read and decoded in the worker, with each tensor's summary. */
  readTensorFile(path: string, maxElements: number): Promise<TensorFileRead> {
    const id = this.nextId++;
    const read = new Promise<TensorFileRead>((resolve, reject) => this.tensorReads.set(id, { resolve, reject }));
    this.ensureWorker().postMessage({ type: 'tensorFile', id, path, maxElements });
    return read;
  }

  /** Runs a model folder in the worker, cancelling the model run in progress (a new text or model
   * supersedes it); resolves to the run's summary, or rejects with RunCancelledError. */
  async runModel(folder: string, input: ModelRunInput, memoryLimitBytes: number, generation?: { options: Omit<GenerateRequest, 'stopFlag'>; progress(message: GenerationProgress): void }): Promise<ModelRunSummary> {
    if (this.modelCancelFlag) Atomics.store(this.modelCancelFlag, 0, 1);
    const cancelFlag = sharedFlag();
    this.modelCancelFlag = cancelFlag;
    const stopFlag = generation ? sharedFlag() : undefined;
    this.generationStopFlag = stopFlag;
    const generate = generation && stopFlag ? { generate: { ...generation.options, stopFlag } } : {};
    const response = await this.modelRequest({ type: 'model', id: this.nextId++, folder, input, memoryLimitBytes, cancelFlag, ...generate }, generation?.progress).finally(() => {
      if (this.generationStopFlag === stopFlag) this.generationStopFlag = undefined;
    });
    if (this.modelCancelFlag === cancelFlag) this.modelCancelFlag = undefined;
    if (response.type !== 'model') throw new Error('the worker answered a model run with something else');
    return response.summary;
  }

  /** Stops the model run in progress, if any. */
  cancelModel(): void {
    if (this.modelCancelFlag) Atomics.store(this.modelCancelFlag, 0, 1);
  }

  /** Ends the generation in progress after its current step, keeping what it made. */
  stopGeneration(): void {
    if (this.generationStopFlag) Atomics.store(this.generationStopFlag, 0, 1);
  }

  /** The step-by-step spec of one head of a model run the worker keeps: of the kind asked for (an
   * encoder–decoder run's), or of a generated run's step, its decode step. */
  async modelHead(run: number, layer: number, head: number, attention?: AttentionKind, step?: number): Promise<AttentionSpec> {
    const response = await this.modelRequest({ type: 'modelHead', id: this.nextId++, run, layer, head, ...(attention ? { attention } : {}), ...(step === undefined ? {} : { step }) });
    if (response.type !== 'modelHead') throw new Error('the worker answered a model head with something else');
    return response.spec;
  }

  /** Gets a model folder ready for its first run (model/run.ts prepareModel); resolves to how long it took, or why it could not, and its tokenizer's language codes. */
  async prepareModel(folder: string): Promise<{ ms: number; error?: string; languages?: LanguageOffer }> {
    const response = await this.modelRequest({ type: 'modelPrepare', id: this.nextId++, folder });
    if (response.type !== 'modelPrepared') throw new Error('the worker answered a model preparation with something else');
    return response;
  }

  /** Lets every model the worker keeps resident go; resolves to what stays (nothing). */
  async releaseModels(): Promise<ResidentModelInfo[]> {
    const response = await this.modelRequest({ type: 'modelRelease', id: this.nextId++ });
    if (response.type !== 'modelReleased') throw new Error('the worker answered a release with something else');
    return response.resident;
  }

  private readonly residentListeners = new Set<(resident: ResidentModelInfo[]) => void>();

  /** Calls `listener` with the worker's resident models whenever a run or a release says them; returns its removal. */
  onResidentModels(listener: (resident: ResidentModelInfo[]) => void): { dispose(): void } {
    this.residentListeners.add(listener);
    return { dispose: () => this.residentListeners.delete(listener) };
  }

  private residentChanged(resident: ResidentModelInfo[]): void {
    for (const listener of this.residentListeners) listener(resident);
  }

  private modelRequest(request: WorkerModelRequest | WorkerModelPrepareRequest | WorkerModelHeadRequest | WorkerModelReleaseRequest, progress?: (message: GenerationProgress) => void): Promise<ModelResponse> {
    const answer = new Promise<ModelResponse>((resolve, reject) => this.modelRequests.set(request.id, { resolve, reject, ...(progress ? { progress } : {}) }));
    this.ensureWorker().postMessage(request);
    return answer;
  }

  /** Saved attentions read into a stack the worker holds until `closeHeads`. */
  openHeads(path: string, maxElements: number, ids?: number[]): Promise<OpenedHeads> {
    return this.headsRequest((id) => ({ type: 'headsOpen', id, path, maxElements, ...(ids ? { ids } : {}) })) as Promise<OpenedHeads>;
  }

  /** A problem's heads as a one-layer stack held in the worker. */
  adoptHeads(problem: Omit<WorkerHeadsAdoptRequest, 'type' | 'id'>): Promise<OpenedHeads> {
    return this.headsRequest((id) => ({ type: 'headsAdopt', id, ...problem })) as Promise<OpenedHeads>;
  }

  /** A model run the worker keeps, as a stack for the heads views. */
  modelHeads(run: number): Promise<OpenedHeads> {
    return this.headsRequest((id) => ({ type: 'headsModel', id, run })) as Promise<OpenedHeads>;
  }

  /** What a heads view draws of an open stack, computed in the worker; `other`: the stack compared with. */
  queryHeads(stack: number, query: HeadsQuery, other?: number): Promise<HeadsAnswer> {
    return this.headsRequest((id) => ({ type: 'headsQuery', id, stack, query, ...(other === undefined ? {} : { other }) })) as Promise<HeadsAnswer>;
  }

  closeHeads(stack: number): void {
    this.worker?.postMessage({ type: 'headsClose', stack });
  }

  private headsRequest(request: (id: number) => WorkerRequest): Promise<OpenedHeads | HeadsAnswer> {
    const id = this.nextId++;
    const answer = new Promise<OpenedHeads | HeadsAnswer>((resolve, reject) => this.headsRequests.set(id, { resolve, reject }));
    this.ensureWorker().postMessage(request(id));
    return answer;
  }

  /** A slice of a document's text (see WorkerTextMessage); starts the worker if need be. */
  sendText(document: string, version: number, offset: number, slice: string): void {
    this.ensureWorker().postMessage({ type: 'text', document, version, offset, slice });
  }

  sendEdits(document: string, baseVersion: number, version: number, changes: TextChange[]): void {
    this.ensureWorker().postMessage({ type: 'edit', document, baseVersion, version, changes });
  }

  /** The worker's reading of its copy of `document` at `version`; null when it holds no such
   * copy (send the text, then ask again). */
  read(document: string, version: number, maxChars: number, tensors?: WorkerReadRequest['tensors']): Promise<WorkerReading | null> {
    return this.reading({ type: 'read', id: this.nextId++, document, version, maxChars, tensors });
  }

  /** The worker's reading of a notebook's cells. */
  async readCells(cells: NotebookCell[]): Promise<WorkerReading> {
    const reading = await this.reading({ type: 'readCells', id: this.nextId++, cells });
    if (!reading) throw new Error('the worker answered a notebook without its reading');
    return reading;
  }

  forgetDocument(document: string): void {
    this.worker?.postMessage({ type: 'forget', document });
  }

  /** Which worker thread is running (a restart makes a new one, which holds no document yet). */
  get generation(): number {
    return this.starts;
  }

  /** Ends the worker as a crash would (tests use it to prove the restart). */
  kill(): Promise<number> {
    return this.worker?.terminate() ?? Promise.resolve(0);
  }

  get running(): boolean {
    return this.worker !== undefined;
  }

  dispose(): void {
    const worker = this.worker;
    this.worker = undefined;
    this.failAll(new Error('Attention Lens is shutting down.'));
    void worker?.terminate();
  }

  private reading(request: WorkerReadRequest | WorkerReadCellsRequest): Promise<WorkerReading | null> {
    const reading = new Promise<WorkerReading | null>((resolve, reject) => this.reads.set(request.id, { request, resolve, reject }));
    this.ensureWorker().postMessage(request);
    return reading;
  }

  /** A fresh worker in place of the busy one: cancelled runs end as cancelled, the others are
   * sent again. */
  private restart(): void {
    const old = this.worker;
    this.worker = undefined; // its exit is now expected, not a crash
    void old?.terminate();
    this.log('worker restarted to stop a cancelled run');
    this.failRegions(new Error('The attention worker was restarted; zoom again.'));
    for (const [id, pending] of this.pending) {
      if (Atomics.load(pending.cancelFlag, 0) === 0) continue;
      this.forget(id, pending);
      pending.reject(new RunCancelledError());
    }
    for (const pending of this.pending.values()) this.ensureWorker().postMessage(pending.request);
    // The fresh worker holds no text: it answers these with null, and the host sends the text.
    for (const read of this.reads.values()) this.ensureWorker().postMessage(read.request);
  }

  private cancel(id: number): void {
    const pending = this.pending.get(id);
    if (pending) Atomics.store(pending.cancelFlag, 0, 1);
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.scriptPath, { resourceLimits: this.resourceLimits });
    this.starts++;
    this.lastError = undefined;
    worker.on('message', (response: WorkerResponse) => this.settle(response));
    worker.on('error', (error) => {
      if (this.worker === worker) this.lastError = error;
      this.log(`worker error: ${error.message}`);
    });
    worker.on('exit', (code) => {
      if (this.worker !== worker) return; // disposed on purpose
      this.worker = undefined;
      const cause = this.lastError ? `: ${this.lastError.message}` : '';
      this.log(`worker exited with code ${code}${cause}`);
      this.failAll(
        new Error(
          `The attention worker stopped unexpectedly (exit code ${code}${cause}). ` +
            'The next run starts a fresh worker.',
        ),
      );
    });
    this.worker = worker;
    this.log(`worker started (#${this.starts})`);
    return worker;
  }

  private settle(response: WorkerResponse): void {
    if (response.type === 'modelGenerating' || response.type === 'modelPrompt' || response.type === 'modelStep') {
      this.modelRequests.get(response.id)?.progress?.(response);
      return;
    }
    if (response.type === 'model' || response.type === 'modelHead' || response.type === 'modelPrepared' || response.type === 'modelReleased' || response.type === 'modelFailed') {
      if (response.type === 'model' && response.summary.resident) this.residentChanged(response.summary.resident);
      if (response.type === 'modelReleased') this.residentChanged(response.resident);
      const request = this.modelRequests.get(response.id);
      this.modelRequests.delete(response.id);
      if (response.type !== 'modelFailed') request?.resolve(response);
      else request?.reject(response.cancelled ? new RunCancelledError() : new Error(response.error));
      return;
    }
    if (response.type === 'headsOpened' || response.type === 'headsAnswer' || response.type === 'headsFailed') {
      const request = this.headsRequests.get(response.id);
      this.headsRequests.delete(response.id);
      if (response.type === 'headsOpened') request?.resolve({ stack: response.stack, info: response.info });
      else if (response.type === 'headsAnswer') request?.resolve(response.answer);
      else request?.reject(new Error(response.error));
      return;
    }
    if (response.type === 'tensorFile' || response.type === 'tensorFileFailed') {
      const read = this.tensorReads.get(response.id);
      this.tensorReads.delete(response.id);
      if (response.type === 'tensorFile') read?.resolve({ file: response.file, summaries: response.summaries });
      else read?.reject(new Error(response.error));
      return;
    }
    if (response.type === 'region') {
      this.regions.get(response.id)?.resolve(response.view);
      this.regions.delete(response.id);
      return;
    }
    if (response.type === 'variants' || response.type === 'variantsFailed') {
      const request = this.variantRequests.get(response.id);
      this.variantRequests.delete(response.id);
      if (response.type === 'variants') request?.resolve(response.answer);
      else request?.reject(new Error(response.error));
      return;
    }
    if (response.type === 'read') {
      this.reads.get(response.id)?.resolve(response.reading);
      this.reads.delete(response.id);
      return;
    }
    const pending = this.pending.get(response.id);
    if (!pending) return;
    this.forget(response.id, pending);
    if (response.type === 'result') pending.resolve(response.outcomes);
    else if (response.type === 'cancelled') pending.reject(new RunCancelledError());
    else pending.reject(new Error(response.error));
  }

  private failAll(error: Error): void {
    for (const [id, pending] of this.pending) {
      this.forget(id, pending);
      pending.reject(error);
    }
    this.failRegions(error);
    for (const read of this.reads.values()) read.reject(error);
    this.reads.clear();
  }

  private failRegions(error: Error): void {
    for (const region of this.regions.values()) region.reject(error);
    this.regions.clear();
    for (const request of this.variantRequests.values()) request.reject(error);
    this.variantRequests.clear();
    for (const read of this.tensorReads.values()) read.reject(error);
    this.tensorReads.clear();
    for (const request of this.modelRequests.values()) request.reject(error);
    this.modelRequests.clear();
    for (const request of this.headsRequests.values()) request.reject(error);
    this.headsRequests.clear();
  }

  private forget(id: number, pending: Pending): void {
    this.pending.delete(id);
    if (this.latestByDocument.get(pending.documentKey) === id) {
      this.latestByDocument.delete(pending.documentKey);
    }
  }
}

function sharedFlag(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
}
