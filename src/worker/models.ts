// Whole-model runs in the worker: the run (its layers' inputs, Q and K, on demand a head's
// weights) stays here, and the host gets a summary — tokens, predictions, counts — and, when the
// user opens a head, that head's step-by-step spec. The last few runs are kept for the views.
import { basename } from 'node:path';
import { CancelledError } from '../core/engine';
import { predictionText } from '../core/model/describe';
import { inductionProbe } from '../core/heads/probe';
import { chatPromptIds } from '../core/model/chatTemplate';
import { decodeStepSpec, generateModel } from '../core/model/generate';
import { readFolderSampling } from '../core/model/generationConfig';
import { decodingOf } from '../core/model/samplingConfig';
import type { ModelInput } from '../core/model/input';
import { probeModel } from '../core/model/probeModel';
import { prepareModel, runModel, type ModelRun } from '../core/model/run';
import { release, residentModels } from '../core/model/resident';
import { ModelTokenizer } from '../core/model/tokenizer';
import type { ModelFiles } from '../core/model/weights';
import { folderFiles } from '../node/modelFiles';
import type { GenerateRequest, ModelRunSummary, ResidentModelInfo, WorkerModelHeadRequest, WorkerModelPrepareRequest, WorkerModelReleaseRequest, WorkerModelRequest, WorkerResponse } from '../protocol';
import { generationInfo } from '../views/heads';

/** Runs kept for their views and drill-downs: the latest, and the ones a panel may still show. */
const KEPT_RUNS = 4;

/** Heads of the probe's ranking named in the heads page's header. */
const PROBE_TOP = 5;

export class ModelRuns {
  private readonly runs = new Map<number, ModelRun>();
  /** What the heads page's header says of a run in place of its predictions (the probe's ranking). */
  private readonly headers = new Map<number, { title: string; notes: string[] }>();

  /** `post` sends a generation's prompt and steps as they come; the answer is the whole run. */
  async run(request: WorkerModelRequest, post: (response: WorkerResponse) => void): Promise<WorkerResponse> {
    const control = { isCancelled: () => Atomics.load(request.cancelFlag, 0) !== 0, cancelFlag: request.cancelFlag };
    try {
      if (control.isCancelled()) throw new CancelledError();
      const files = folderFiles(request.folder);
      const options = { ...control, memoryLimitBytes: request.memoryLimitBytes };
      let run: ModelRun;
      if ('probe' in request.input) {
        const { repeat, seed } = request.input.probe;
        const model = await probeModel(files, options);
        let probed: ModelRun | undefined;
        const result = await inductionProbe(async (ids) => (probed = await runModel(files, { ids }, options)), { repeat, seed, vocabularySize: model.vocabularySize, bos: model.bos });
        run = probed!;
        // Counted from 0, as the heads page labels its rows and columns (L0, H0).
        const top = result.ranking.slice(0, PROBE_TOP).map(({ layer, head, value }) => `L${layer} H${head} ${value.toFixed(3)}`);
        this.headers.set(request.id, {
          title: `${basename(request.folder)} (${run.architecture}) · induction probe, R = ${repeat}, seed ${seed}`,
          notes: [`Highest induction scores (BOS + ${repeat} random tokens twice): ${top.join('; ')}.`],
        });
      } else if (request.generate) {
        if ('image' in request.input) throw new RangeError('generation needs a text or token ids, not a picture');
        run = await generate(files, request.id, request.input, request.generate, options, post);
      } else run = await runModel(files, request.input, options);
      this.keep(request.id, run);
      return { type: 'model', id: request.id, summary: summaryOf(request.id, run) };
    } catch (error) {
      return { type: 'modelFailed', id: request.id, cancelled: error instanceof CancelledError, error: messageOf(error) };
    }
  }

  /** Lets every resident model's weights go (the kept runs still answer: they read their weights again). */
  release(request: WorkerModelReleaseRequest): WorkerResponse {
    release();
    return { type: 'modelReleased', id: request.id, resident: residentInfo() };
  }

  async prepare(request: WorkerModelPrepareRequest): Promise<WorkerResponse> {
    const started = performance.now();
    try {
      const languages = (await prepareModel(folderFiles(request.folder)))?.languages;
      const offer = languages && { codes: languages.codes.map(({ code }) => code), ...(languages.defaultSource ? { source: languages.defaultSource } : {}), ...(languages.defaultTarget ? { target: languages.defaultTarget } : {}) };
      return { type: 'modelPrepared', id: request.id, ms: performance.now() - started, ...(offer ? { languages: offer } : {}) };
    } catch (error) {
      return { type: 'modelPrepared', id: request.id, ms: performance.now() - started, error: messageOf(error) };
    }
  }

  async head(request: WorkerModelHeadRequest): Promise<WorkerResponse> {
    const run = this.runs.get(request.run);
    if (!run) return { type: 'modelFailed', id: request.id, cancelled: false, error: 'that model run is no longer held: run the model again' };
    try {
      const { layer, head, step } = request;
      // An encoder–decoder run's head of the kind asked for (each kind's stack drills down its own way).
      const stack = request.attention === undefined || request.attention === run.kind ? run : run.kinds?.[request.attention];
      if (!stack) return { type: 'modelFailed', id: request.id, cancelled: false, error: `this run has no ${request.attention} attention` };
      if (step === undefined) return { type: 'modelHead', id: request.id, spec: await stack.drillDownSpec(layer, head) };
      const position = run.generation?.steps[step]?.position;
      if (position === undefined) return { type: 'modelFailed', id: request.id, cancelled: false, error: `that run has no generated step ${step}` };
      // The decode step that chose token `step`: the row of the token fed, one before it.
      return { type: 'modelHead', id: request.id, spec: await decodeStepSpec(run, layer, head, position - 1) };
    } catch (error) {
      return { type: 'modelFailed', id: request.id, cancelled: false, error: messageOf(error) };
    }
  }

  /** A kept run as the heads views show it: the stack, a title, and its predictions as notes. */
  heads(run: number): { stack: ModelRun; title: string; notes: string[] } | string {
    const stack = this.runs.get(run);
    if (!stack) return 'that model run is no longer held: run the model again';
    const folder = stack.source.kind === 'model' ? basename(stack.source.folder) : stack.architecture;
    const header = this.headers.get(run) ?? { title: `${folder} (${stack.architecture}) · ${stack.tokens.length} tokens`, notes: stack.predictions.map(predictionText) };
    return { stack, title: header.title, notes: [...header.notes, ...stack.warnings] };
  }

  private keep(id: number, run: ModelRun): void {
    this.runs.set(id, run);
    for (const old of this.runs.keys()) {
      if (this.runs.size <= KEPT_RUNS) break;
      this.runs.delete(old);
      this.headers.delete(old);
    }
  }
}

/**
 * A generation in the worker: the prompt (through the chat template when asked) tokenized and
 * posted, its attention once its forward has run, then each step posted the moment it is chosen,
 * with its attention row, which the page draws at once. Stop is the request's stopFlag, read after each step: the run then covers what
 * was generated; the cancel flag (a newer run) drops it.
 */
async function generate(files: ModelFiles, id: number, input: { text: string } | { ids: number[] }, request: GenerateRequest, options: Parameters<typeof runModel>[2], post: (response: WorkerResponse) => void): Promise<ModelRun> {
  let prompt: ModelInput = input;
  if (request.chat) {
    if (!('text' in input)) throw new RangeError('a chat message is a text, not token ids');
    prompt = { ids: await chatPromptIds(files, input.text) };
  }
  const tokenizer = await ModelTokenizer.open(files);
  const ids = 'ids' in prompt ? prompt.ids : tokenizer?.encode(prompt.text).ids;
  // How the tokens will be chosen, said with the prompt (generateModel resolves it alike, and refuses what cannot sample).
  const decoding = decodingOf(request.sampling, await readFolderSampling(files));
  if (ids) post({ type: 'modelGenerating', id, prompt: ids.map((token) => tokenizer?.label(token) ?? `#${token}`), maxNewTokens: request.maxNewTokens, decoding });
  const stopping = new AbortController();
  return generateModel(files, prompt, {
    ...options,
    maxNewTokens: request.maxNewTokens,
    ...(request.sampling ? { sampling: request.sampling } : {}),
    signal: stopping.signal,
    onPrompt: (attention) => post({ type: 'modelPrompt', id, attention }),
    onStep({ attention, ...step }) {
      post({ type: 'modelStep', id, step, row: { position: step.position - 1, layers: attention.length, heads: (attention[0]?.length ?? 0) / step.position, keys: step.position, weights: concatenated(attention) }, computedAt: performance.timeOrigin + performance.now() });
      if (Atomics.load(request.stopFlag, 0) !== 0) stopping.abort();
    },
  });
}

/** Each layer's [heads × keys] row, one after another: one array to post. */
function concatenated(layers: Float32Array[]): Float32Array {
  const all = new Float32Array(layers.reduce((sum, layer) => sum + layer.length, 0));
  let at = 0;
  for (const layer of layers) {
    all.set(layer, at);
    at += layer.length;
  }
  return all;
}

function summaryOf(id: number, run: ModelRun): ModelRunSummary {
  const generation = generationInfo(run);
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
    resident: residentInfo(),
    ...(generation ? { generation } : {}),
  };
}

function residentInfo(): ResidentModelInfo[] {
  return residentModels().map(({ folder, mode, bytes }) => ({ folder, mode, bytes }));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
