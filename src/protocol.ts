// Every message that crosses a thread or frame boundary: extension host ⇄ worker, and
// extension host ⇄ webview (panel, bottom view). Discriminated unions on `type`; each request
// carries an `id` that its reply repeats. Messages from a webview are untrusted: the host
// validates them (see the validators below) before acting.

// ---- extension host ⇄ worker (owned by the extension/worker work) ----

import type { NotebookCell } from './core/parse/notebook';
import type { TensorFile } from './core/parse/tensors';
import type { TensorSummary } from './core/parse/tensors/summary';
import type { ScoreGrids } from './core/heads/scores';
import type { MatrixStatistics } from './core/statistics';
import type { ModelInput, Prediction } from './core/model/input';
import type { Decoding, Generation, GenerationStep, PromptAttention, SamplingOptions, SamplingRequest } from './core/model/generate';
import type { AttentionResult, AttentionSpec, Diagnostic, Matrix, ParseResult } from './core/types';
import type { CompareWith, DifferenceMap, KindRefusals } from './core/heads/compare';
import type { HeadLines, PooledGrid } from './core/heads/pool';
import type { AttentionKind, PoolMode } from './core/heads/stack';
import { ATTENTION_KINDS } from './core/heads/kinds';

// The heads views' shapes are the core's, which computes them; the messages carry them as they are.
export type { AttentionKind, CompareWith, DifferenceMap, HeadLines, KindRefusals, PooledGrid, PoolMode, PromptAttention, SamplingOptions, SamplingRequest };

/** A generated step as the host and the pages keep it: without its attention row, which the
 * worker keeps in the run and sends only where a page draws it (AttentionRow). */
export type GenerationStepInfo = Omit<GenerationStep, 'attention'>;
export interface GenerationInfo extends Omit<Generation, 'steps'> {
  steps: GenerationStepInfo[];
}

/** One query's attention row in every layer × head: [layer][head][key] flattened, keys 0…position
 * (a causal row's later keys are zero and not sent). A generation's step t computes the row of the
 * token before token t: position = step.position − 1. */
export interface AttentionRow {
  position: number;
  layers: number;
  heads: number;
  keys: number;
  weights: Float32Array;
}
export { DEFAULT_THUMBNAIL_SIDE } from './core/heads/pool';

/** A slice of a document's text as of `version`, starting at character `offset` (0 starts the
 * text over). The host sends a document's text in slices, each cut in its own turn of the event
 * loop, once per worker; after that only its edits (WorkerEditMessage). */
export interface WorkerTextMessage {
  type: 'text';
  document: string;
  version: number;
  offset: number;
  slice: string;
}

/** One replacement in a document's text, as VS Code reports it. */
export interface TextChange {
  offset: number;
  length: number;
  text: string;
}

/** The edits that take the worker's copy of a document from `baseVersion` to `version`, in the
 * order they were made (each change's offset is in the text the changes before it left). */
export interface WorkerEditMessage {
  type: 'edit';
  document: string;
  baseVersion: number;
  version: number;
  changes: TextChange[];
}

/** Read (parse, then build each problem's spec) the worker's copy of a document at `version`.
 * Text past `maxChars` is left unread and a diagnostic at the cut names the setting that raises
 * the limit. */
export interface WorkerReadRequest {
  type: 'read';
  id: number;
  document: string;
  version: number;
  maxChars: number;
  /** Where the tensors the text loads (`X = np.load("acts.npy")`) are found — the text's folder —
   * and the host's attentionLens.maxMatrixElements: the worker reads them as part of the text.
   * Absent (benchmarks, tests of the text reader), they stay unread and their problems wait. */
  tensors?: { folder: string; maxElements: number };
}

/** Read a notebook's cells (core/parse/notebook.ts). They travel whole on each read: a notebook
 * is small, and its cells change as a whole (run outputs, moved cells). */
export interface WorkerReadCellsRequest {
  type: 'readCells';
  id: number;
  cells: NotebookCell[];
}

/** The document was closed: the worker drops its copy of the text. */
export interface WorkerForgetMessage {
  type: 'forget';
  document: string;
}

/** A document as read in the worker. Its large matrices are on shared memory (the host and the
 * worker see the same numbers, nothing is copied; small ones are copied, which costs less), so
 * the host holds the whole reading — ranges, shapes, cell offsets, specs — for CodeLens, hovers,
 * diagnostics and runs without reading anything itself. */
export interface WorkerReading {
  parse: ParseResult;
  /** One per problem, same order as `parse.problems`. */
  specs: { spec?: AttentionSpec; diagnostics: Diagnostic[] }[];
  /** Per problem, per matrix (same order as `problem.matrices`): what a hover on its name shows,
   * computed here so that the host reads five numbers instead of scanning millions. */
  statistics: MatrixStatistics[][];
  /** Milliseconds the worker spent reading. */
  readMs: number;
  /** The tensor files the text loads (absolute paths), read in the worker: the host watches them. */
  tensorFiles?: string[];
}

/** Run some problems of one document. A newer request for the same document supersedes this
 * one: the host sets `cancelFlag[0]` to 1 (Atomics), which the worker reads between heads, row
 * blocks and problems, so cancelling never needs a round trip through the worker's busy loop. */
export interface WorkerRunRequest {
  type: 'run';
  id: number;
  cancelFlag: Int32Array; // backed by a SharedArrayBuffer
  problems: { index: number; spec: AttentionSpec }[];
}

/** The exact values (or a finer pooling) of a region of a result's matrix, for a zoom in the
 * panel. Answered at once, not after the queued runs: the worker's thread is free while the fast
 * kernels compute. The matrix is a fast result's, on shared memory, so posting it copies nothing. */
export interface WorkerRegionRequest {
  type: 'region';
  id: number;
  matrix: Matrix;
  region: Region;
}

/** Rows [rowStart, rowEnd) and columns [colStart, colEnd) of a matrix. */
export interface Region {
  rowStart: number;
  rowEnd: number;
  colStart: number;
  colEnd: number;
}

/** One head's Variants views, or the FlashAttention walk of one query tile, of a large problem
 * (views/variantsOnDemand.ts): computed here from the spec when the page asks. `output`: the
 * head's output as the run computed it, which the walk must end in. */
export interface WorkerVariantsRequest {
  type: 'variants';
  id: number;
  spec: AttentionSpec;
  query: VariantsQuery;
  output?: Matrix;
}

/** Read and decode a tensor file from disk, with each tensor's summary, off the host's thread. */
export interface WorkerTensorFileRequest {
  type: 'tensorFile';
  id: number;
  path: string;
  maxElements: number;
}

/** Run a model folder on a text or ids. The worker keeps the run (under this request's id) for
 * its views and drill-downs; the host gets a summary. A newer model run raises the older one's
 * flag, which the forward pass reads between layers and the kernels between shares. */
export interface WorkerModelRequest {
  type: 'model';
  id: number;
  folder: string;
  input: ModelRunInput;
  /** A run that would need more memory is refused before it reads a layer. */
  memoryLimitBytes: number;
  cancelFlag: Int32Array; // backed by a SharedArrayBuffer
  /** Generate after the input, each step posted as it is made (`modelGenerating`, then `modelStep`s). */
  generate?: GenerateRequest;
}

/** A generation: up to `maxNewTokens` after the input, greedy or sampled. `chat`: the text goes
 * through the folder's chat template as a user message first (core/model/chatTemplate.ts). Stop:
 * the host sets `stopFlag[0]` to 1; the generation ends after the step under way and is kept,
 * where a raised cancelFlag drops it. */
export interface GenerateRequest {
  maxNewTokens: number;
  /** The sampling values given (absent: greedy); the others are the folder's generation_config.json's, else transformers' defaults. */
  sampling?: SamplingRequest;
  chat?: boolean;
  stopFlag: Int32Array; // backed by a SharedArrayBuffer
}

/** A text or ids, or the induction probe's input: BOS and `repeat` seeded random ids, twice. */
export type ModelRunInput = ModelInput | { probe: { repeat: number; seed: number } };

/** Get a model folder ready for its first run (its tokenizer built, ONNX Runtime loaded, the
 * compute threads started), ahead of the click; answered with `modelPrepared`. */
/** A tokenizer's language codes (mBART's `en_XX`…) and the ones it was saved for (tokenizer_config.json's src_lang / tgt_lang). */
export interface LanguageOffer {
  codes: string[];
  source?: string;
  target?: string;
}

export interface WorkerModelPrepareRequest {
  type: 'modelPrepare';
  id: number;
  folder: string;
}

/** The step-by-step spec of one head of a kept model run (0-based layer and head); of a generated
 * run's step `step`, the decode step that chose that token (its one query row over the keys before). */
export interface WorkerModelHeadRequest {
  type: 'modelHead';
  id: number;
  run: number;
  layer: number;
  head: number;
  /** An encoder–decoder run's kind (absent: the run's own, its cross-attention). */
  attention?: AttentionKind;
  /** A generated run's step: the decode step that chose that token. */
  step?: number;
}

/** What the host keeps of a model run: enough for messages, pickers and titles. */
/** A model whose weights the worker keeps between runs (core/model/resident.ts). */
export interface ResidentModelInfo {
  folder: string;
  /** 'constants': ONNX Runtime holds the products' weights pre-packed; 'stored': the tensors as stored. */
  mode: string;
  bytes: number;
}

/** Let every resident model go; answered with `modelReleased`. */
export interface WorkerModelReleaseRequest {
  type: 'modelRelease';
  id: number;
}

export interface ModelRunSummary {
  /** The worker's handle of the run (the id of the request that made it). */
  run: number;
  architecture: string;
  folder: string;
  tokens: string[];
  tokenIds: number[];
  layerCount: number;
  headCount: number;
  predictions: Prediction[];
  warnings: string[];
  backend: string;
  timings: { loadMs: number; forwardMs: number };
  /** The models resident in the worker after this run, most recently used first. */
  resident?: ResidentModelInfo[];
  /** A generated run's steps: `tokens` are then the prompt and what was generated. */
  generation?: GenerationInfo;
}

export type WorkerRequest =
  | WorkerModelRequest
  | WorkerModelPrepareRequest
  | WorkerModelHeadRequest
  | WorkerModelReleaseRequest
  | WorkerRunRequest
  | WorkerRegionRequest
  | WorkerVariantsRequest
  | WorkerTextMessage
  | WorkerEditMessage
  | WorkerReadRequest
  | WorkerReadCellsRequest
  | WorkerForgetMessage
  | WorkerTensorFileRequest
  | WorkerHeadsOpenRequest
  | WorkerHeadsAdoptRequest
  | WorkerHeadsModelRequest
  | WorkerHeadsQueryRequest
  | WorkerHeadsCloseMessage;

/** One outcome per requested problem, in request order. `view`: the panel's views of the result
 * (views/model.ts), built in the worker so that the host never pools large matrices itself. */
export type WorkerProblemOutcome =
  | { index: number; result: AttentionResult; view: ResultView }
  | { index: number; error: string };

export type WorkerResponse =
  | { type: 'result'; id: number; outcomes: WorkerProblemOutcome[] }
  | { type: 'region'; id: number; view: MatrixView }
  | { type: 'variants'; id: number; answer: VariantsAnswer }
  /** A query the problem cannot answer (a head or tile it does not have), said in words. */
  | { type: 'variantsFailed'; id: number; error: string }
  | { type: 'tensorFile'; id: number; file: TensorFile; summaries: TensorSummary[] }
  | { type: 'tensorFileFailed'; id: number; error: string }
  | { type: 'model'; id: number; summary: ModelRunSummary }
  /** A generation's prompt as tokenized (chat template applied), before its first step. */
  | { type: 'modelGenerating'; id: number; prompt: string[]; maxNewTokens: number; decoding: Decoding }
  /** The prompt's attention once its forward has run, before the first step (the views grow from it). */
  | { type: 'modelPrompt'; id: number; attention: PromptAttention }
  /** One generated token, posted as soon as it is chosen; `computedAt`: the worker's wall clock
   * (performance.timeOrigin + now, ms) then, for the latency bench. */
  | { type: 'modelStep'; id: number; step: GenerationStepInfo; row: AttentionRow; computedAt: number }
  | { type: 'modelHead'; id: number; spec: AttentionSpec }
  /** `ms`: how long the preparing took; a folder that cannot be prepared says why (its run will too);
   * `languages`: the language codes of an mBART tokenizer, for the palette to offer. */
  | { type: 'modelPrepared'; id: number; ms: number; error?: string; languages?: LanguageOffer }
  | { type: 'modelReleased'; id: number; resident: ResidentModelInfo[] }
  | { type: 'modelFailed'; id: number; cancelled: boolean; error: string }
  /** `reading` null: the worker does not hold that version of the text (it was restarted, or
   * missed an edit); the host sends the whole text again. */
  | { type: 'read'; id: number; reading: WorkerReading | null }
  | { type: 'cancelled'; id: number }
  | { type: 'failed'; id: number; error: string }
  | WorkerHeadsResponse;

// ---- extension host ⇄ webview (owned by the panel work) ----

/**
 * What a heatmap shows of one matrix: the whole matrix when it fits (block 1×1), else a max-pooled
 * overview (each cell = max of a rowBlock×colBlock block), or the detail of a zoomed region.
 * `data` holds rows×cols displayed cells, row-major; the source matrix is sourceRows×sourceCols.
 */
export interface MatrixView {
  sourceRows: number;
  sourceCols: number;
  rowStart: number; // first source row shown
  colStart: number;
  rowBlock: number; // source rows per displayed cell (1 = exact values)
  colBlock: number;
  rows: number;
  cols: number;
  data: Float64Array | Float32Array;
  /** How the numbers follow from other views of the same head, exactly (src/views/derived.ts):
   * a post may then carry the rule without the numbers. */
  rule?: ViewRule;
}

export type ViewRule =
  /** scaled = scores × scale, rounded to the dtype. */
  | { kind: 'scaled'; scale: number }
  /** scores = Q·Kᵀ, summed over d_k in order: in float64 rounded once at the end ('sum'); in
   * float32 rounded after every multiply and add ('steps') or after every multiply-add ('fused'). */
  | { kind: 'QK'; rounding: 'sum' | 'steps' | 'fused' };

/** A named matrix of the panel: `head` is undefined for whole-layer matrices (concat, output…). */
export type MatrixKey =
  | 'Q' | 'K' | 'V' | 'scores' | 'scaled' | 'mask' | 'masked' | 'weights' | 'output' | 'givenWeights'
  | 'dQ' | 'dK' | 'dV' | 'dA' | 'dS'
  | 'input' | 'concat' | 'WO' | 'layerOutput' | 'residual';

export interface HeadView {
  kvHead: number;
  Q: MatrixView;
  K: MatrixView;
  V: MatrixView;
  scores: MatrixView;
  scaled: MatrixView;
  mask: MatrixView | null;
  masked: MatrixView;
  weights: MatrixView;
  output: MatrixView;
  gradients?: { dQ: MatrixView; dK: MatrixView; dV: MatrixView; dA: MatrixView; dS: MatrixView };
  /** Weights given for this head (a program's `attn_weights`…) and max |given − computed|. */
  givenWeights?: MatrixView;
  givenMaxDifference?: number;
}

export interface ResultView {
  dtype: 'float64' | 'float32';
  elapsedMs: number;
  warnings: string[];
  checks: {
    rowSumsMaxError: number;
    rowsSumToOne: boolean;
    weightsInBounds: boolean;
    permutationEquivariant?: boolean;
    permutationMaxError?: number;
    permutationRowsChecked?: number;
    flops: number;
    attentionBytes: number;
  };
  /** Cost of this problem's shape and of a realistic layer, from the engine's cost model. */
  cost: CostView[];
  heads: HeadView[];
  input?: MatrixView;
  concat: MatrixView;
  WO?: MatrixView;
  layerOutput: MatrixView;
  residual?: MatrixView;
  /** The variants' views (views/variantsModel.ts), for problems that use any and are small. */
  variants?: VariantsView;
  /** FlashAttention's online softmax walked on each head: per head, one walk per tile size offered. */
  flash?: FlashView[][];
  /** A larger problem's Variants and FlashAttention views, asked for when the page shows them. */
  onDemand?: OnDemandViews;
  /** Only weights were given: the heads' `weights` are those, nothing else was computed. */
  givenOnly?: boolean;
}

/** What the variants change, shown from the user's numbers: every head's at once for a small
 * problem, one head's (`heads` holds that head alone) for a larger one (VariantsAnswer). */
export interface VariantsView {
  /** The conventions in use, named: "RoPE base 10000, pairs (x_k, x_{k+d/2}) (rotate half)"… */
  conventions: string[];
  heads: {
    /** Q·Kᵀ of the unturned Q and K; the head's `scores` are after RoPE. */
    unrotatedScores?: MatrixView;
    /** scale·S/T before the softcap; the head's `scaled` are after it. */
    uncapped?: MatrixView;
    /** ALiBi's −m·|i − j| for this head. */
    alibi?: { slope: number; bias: MatrixView };
    /** A decode step: this head's weights in the full run, whose last row the step's one row is. */
    decodeFull?: MatrixView;
  }[];
  /** The mask's structure (1 = may attend) and what a kernel skipping masked entries saves (of
   * the result's `checks.flops`). */
  mask?: { visible: MatrixView; blockedShare: number; flopsSaved: number; blockSize: number; skippedBlocksShare: number };
  /** A decode step: the row it computes (each head's step is its `weights`, its full run
   * `heads[h].decodeFull`) and max |step's output − the full run's last output row|. */
  decode?: { row: number; maxDifference: number };
}

export interface FlashView {
  tileRows: number;
  tileCols: number;
  steps: { queryStart: number; queryEnd: number; keyStart: number; keyEnd: number; rowMax: number[]; rowSum: number[]; rescale: number[]; partial: number[][] }[];
  /** One Lq×Lk matrix against what one tile keeps live, bytes. */
  fullBytes: number;
  tileBytes: number;
  /** max |walk output − engine output| of its head. */
  maxDifference: number;
}

/** What the page of a larger problem needs to ask for its Variants and FlashAttention views. */
export interface OnDemandViews {
  /** The variants in use, named (none: plain attention, which has no Variants tab). */
  conventions: string[];
  /** Sides of the square tiles the walk offers; each walk covers one query tile. */
  tileSides: number[];
  queries: number;
  keys: number;
}

/** One head's Variants views, or the walk of one query tile (numbered from 0) in tiles of tileSide². */
export type VariantsQuery =
  | { kind: 'variants'; head: number }
  | { kind: 'flash'; head: number; tileSide: number; queryTile: number };

export type VariantsAnswer =
  | {
      kind: 'variants';
      head: number;
      variants: VariantsView;
      /** The head's own steps the views stand beside, pooled alike: the scores after RoPE, the
       * scaled scores after the softcap, a decode step's weights. */
      steps: { scores?: MatrixView; scaled?: MatrixView; weights?: MatrixView };
    }
  | { kind: 'flash'; head: number; tileSide: number; queryTile: number; walk: FlashView };

export interface CostView {
  label: string; // e.g. "this problem", "12 layers × 12 heads, n = 512, d_model = 768"
  flops: number;
  attentionBytes: number;
}

/** Everything a panel shows about one problem of one document. */
export interface PanelData {
  uri: string;
  fileName: string;
  problemIndex: number;
  problems: { index: number; label: string }[];
  title: string;
  tokens?: string[];
  keyTokens?: string[];
  /** Options as read, for the formulas (scale, causal…). */
  options: { heads: number; kvHeads?: number; scale?: number; score: string; causal?: string; dtype: string; rope?: number; temperature?: number; softcap?: number; alibi?: boolean };
  /** d_k of head 1, for the formula √d_k. */
  dk?: number;
  result?: ResultView;
  /** Why there is no result: not run yet, parse error, engine error, computing. */
  message?: string;
  /** The run that will give the result has started (no Run button meanwhile). */
  computing?: boolean;
  /** Set when the text has changed since `result` was computed (a half-typed matrix, or a run
   * still going): why. The panel keeps showing the result, marked out of date. */
  stale?: string;
  /** Where the time of this update went, for bench/editor-latency.mjs: the host's clock
   * (performance.timeOrigin + now, ms since the epoch) when it posted, and the run's times. */
  timing?: PanelTiming;
}

export interface PanelTiming {
  /** When the extension host was told of the edit this result follows, if any (ms, same clock). */
  editedAt?: number;
  sentAt: number;
  /** The run's round trip through the worker, and the engine's compute time within it. */
  workerMs: number;
  computeMs: number;
}

/** Panel view state kept by the webview (getState/setState) and by the serializer. */
export interface PanelState {
  uri?: string;
  problemIndex: number;
  view: 'steps' | 'heads' | 'mask' | 'gradients' | 'checks' | 'variants' | 'flash';
  head: number;
  step: 'all' | 'projections' | 'scores' | 'scaled' | 'masked' | 'weights' | 'output';
  colorScale: 'Viridis' | 'Cividis' | 'Blues' | 'Greys' | 'RdBu' | 'Theme';
  showNumbers: boolean;
  /** Zoom of the overview, source coordinates, per heatmap id. */
  zoom: Record<string, Region>;
}

/** A matrix of the panel: `head` is ignored for the layer's matrices (input, concat, W_O…). */
export interface ViewRef {
  head: number;
  key: MatrixKey;
}

/** The views held back from an update, each once with every place it fills (heads share a mask). */
export type DeferredViews = { refs: ViewRef[]; view: MatrixView }[];

export type HostToWebview =
  /** `update` numbers the host's data posts, for the views it held back (src/views/deferral.ts). */
  | { type: 'data'; data: PanelData; focusHead?: number; update?: number }
  /** The views update `update` held back, each with every place it fills. */
  | { type: 'deferredViews'; update: number; views: DeferredViews }
  /** The result shown did not change; only whether it is out of date did (see PanelData.stale). */
  | { type: 'stale'; stale?: string }
  | { type: 'region'; requestId: number; view: MatrixView | null }
  /** The answer to requestVariants, or why there is none. */
  | { type: 'variants'; requestId: number; answer?: VariantsAnswer; error?: string };

export type WebviewToHost =
  | { type: 'ready' }
  | { type: 'state'; state: PanelState }
  | { type: 'selectProblem'; problemIndex: number }
  /** Run the problem shown (it has no result yet, e.g. after a restart). */
  | { type: 'run'; problemIndex: number }
  | { type: 'reveal'; problemIndex: number; head: number; matrix: MatrixKey; row: number; col: number }
  | { type: 'requestRegion'; requestId: number; problemIndex: number; head: number; matrix: MatrixKey;
      rowStart: number; rowEnd: number; colStart: number; colEnd: number }
  | { type: 'export'; format: 'png' | 'svg'; fileName: string; text?: string; base64?: string }
  | { type: 'exportMatrix'; format: 'csv' | 'json'; problemIndex: number; head: number; matrix: MatrixKey }
  | { type: 'exportHtml' }
  | { type: 'setDtype'; dtype: 'float64' | 'float32' }
  /** The heatmaps on screen after update `update` was drawn, or scrolled to. */
  | { type: 'onScreen'; update: number; views: ViewRef[] }
  /** The views update `update` held back, now. */
  | { type: 'requestDeferred'; update: number }
  /** A larger problem's Variants views of one head, or the walk of one query tile. */
  | { type: 'requestVariants'; requestId: number; problemIndex: number; query: VariantsQuery };

const MATRIX_KEYS: readonly MatrixKey[] = [
  'Q', 'K', 'V', 'scores', 'scaled', 'mask', 'masked', 'weights', 'output',
  'dQ', 'dK', 'dV', 'dA', 'dS', 'input', 'concat', 'WO', 'layerOutput', 'residual',
];
const VIEWS: readonly PanelState['view'][] = ['steps', 'heads', 'mask', 'gradients', 'checks', 'variants', 'flash'];
const STEPS: readonly PanelState['step'][] = ['all', 'projections', 'scores', 'scaled', 'masked', 'weights', 'output'];
const COLOR_SCALES: readonly PanelState['colorScale'][] = ['Viridis', 'Cividis', 'Blues', 'Greys', 'RdBu', 'Theme'];
/** Largest image the host accepts from a webview (characters of SVG text or PNG base64). */
const MAX_EXPORT_CHARS = 64 * 1024 * 1024;
/** The report's legend is one sentence; its image no wider or taller than this (CSS pixels). */
const MAX_LEGEND_CHARS = 2000;
const MAX_REPORT_SIDE = 32_768;

type Fields = Record<string, unknown>;
const isRecord = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isIndex = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < 1e9;
const isOneOf = <T>(values: readonly T[], value: unknown): value is T => values.includes(value as T);
const isSafeFileName = (value: unknown): value is string =>
  typeof value === 'string' && /^[\w.\- ]{1,120}$/.test(value) && !value.startsWith('.');

/** The webview's view state, or undefined when any field is malformed. */
export function parsePanelState(raw: unknown): PanelState | undefined {
  if (!isRecord(raw)) return undefined;
  const { uri, problemIndex, view, head, step, colorScale, showNumbers, zoom } = raw;
  if (uri !== undefined && typeof uri !== 'string') return undefined;
  if (!isIndex(problemIndex) || !isIndex(head) || typeof showNumbers !== 'boolean') return undefined;
  if (!isOneOf(VIEWS, view) || !isOneOf(STEPS, step) || !isOneOf(COLOR_SCALES, colorScale)) return undefined;
  if (!isRecord(zoom)) return undefined;
  const zoomOut: PanelState['zoom'] = {};
  for (const [id, region] of Object.entries(zoom)) {
    if (!isRecord(region)) return undefined;
    const { rowStart, rowEnd, colStart, colEnd } = region;
    if (![rowStart, rowEnd, colStart, colEnd].every(isIndex)) return undefined;
    zoomOut[id] = { rowStart, rowEnd, colStart, colEnd } as PanelState['zoom'][string];
  }
  return { ...(uri === undefined ? {} : { uri }), problemIndex, view, head, step, colorScale, showNumbers, zoom: zoomOut };
}

/** More heatmaps than any view shows at once (the Heads view of 64 heads, their layer…). */
const MAX_ON_SCREEN = 256;
const VIEW_KEYS: readonly MatrixKey[] = [...MATRIX_KEYS, 'givenWeights'];

function parseViewRef(raw: unknown): ViewRef | undefined {
  if (!isRecord(raw) || !isIndex(raw.head) || !isOneOf(VIEW_KEYS, raw.key)) return undefined;
  return { head: raw.head, key: raw.key };
}

function parseVariantsQuery(raw: unknown): VariantsQuery | undefined {
  if (!isRecord(raw) || !isIndex(raw.head)) return undefined;
  if (raw.kind === 'variants') return { kind: 'variants', head: raw.head };
  const { tileSide, queryTile } = raw;
  if (raw.kind !== 'flash' || !isIndex(tileSide) || tileSide < 1 || !isIndex(queryTile)) return undefined;
  return { kind: 'flash', head: raw.head, tileSide, queryTile };
}

/** A message from a webview, or undefined when it is malformed (the caller logs and ignores it). */
export function parseWebviewMessage(raw: unknown): WebviewToHost | undefined {
  if (!isRecord(raw)) return undefined;
  switch (raw.type) {
    case 'ready':
    case 'exportHtml':
      return { type: raw.type };
    case 'state': {
      const state = parsePanelState(raw.state);
      return state && { type: 'state', state };
    }
    case 'selectProblem':
    case 'run':
      return isIndex(raw.problemIndex) ? { type: raw.type, problemIndex: raw.problemIndex } : undefined;
    case 'reveal': {
      const { problemIndex, head, matrix, row, col } = raw;
      if (![problemIndex, head, row, col].every(isIndex) || !isOneOf(MATRIX_KEYS, matrix)) return undefined;
      return { type: 'reveal', problemIndex, head, matrix, row, col } as WebviewToHost;
    }
    case 'requestRegion': {
      const { requestId, problemIndex, head, matrix, rowStart, rowEnd, colStart, colEnd } = raw;
      const indices = [requestId, problemIndex, head, rowStart, rowEnd, colStart, colEnd];
      if (!indices.every(isIndex) || !isOneOf(MATRIX_KEYS, matrix)) return undefined;
      if ((rowEnd as number) <= (rowStart as number) || (colEnd as number) <= (colStart as number)) return undefined;
      return { type: 'requestRegion', requestId, problemIndex, head, matrix, rowStart, rowEnd, colStart, colEnd } as WebviewToHost;
    }
    case 'export': {
      const { format, fileName, text, base64 } = raw;
      if (!isOneOf(['png', 'svg'] as const, format) || !isSafeFileName(fileName)) return undefined;
      const payload = format === 'png' ? base64 : text;
      if (typeof payload !== 'string' || payload.length > MAX_EXPORT_CHARS) return undefined;
      if (format === 'png' && !/^[A-Za-z0-9+/]*={0,2}$/.test(payload)) return undefined;
      return format === 'png'
        ? { type: 'export', format, fileName, base64: payload }
        : { type: 'export', format, fileName, text: payload };
    }
    case 'exportMatrix': {
      const { format, problemIndex, head, matrix } = raw;
      if (!isOneOf(['csv', 'json'] as const, format) || !isIndex(problemIndex) || !isIndex(head)) return undefined;
      return isOneOf(MATRIX_KEYS, matrix) ? { type: 'exportMatrix', format, problemIndex, head, matrix } : undefined;
    }
    case 'setDtype':
      return raw.dtype === 'float64' || raw.dtype === 'float32' ? { type: 'setDtype', dtype: raw.dtype } : undefined;
    case 'onScreen': {
      const { update, views } = raw;
      if (!isIndex(update) || !Array.isArray(views) || views.length > MAX_ON_SCREEN) return undefined;
      const refs = views.map(parseViewRef);
      return refs.every((ref) => ref !== undefined) ? { type: 'onScreen', update, views: refs as ViewRef[] } : undefined;
    }
    case 'requestDeferred':
      return isIndex(raw.update) ? { type: 'requestDeferred', update: raw.update } : undefined;
    case 'requestVariants': {
      const query = parseVariantsQuery(raw.query);
      return isIndex(raw.requestId) && isIndex(raw.problemIndex) && query ? { type: 'requestVariants', requestId: raw.requestId, problemIndex: raw.problemIndex, query } : undefined;
    }
    default:
      return undefined;
  }
}


// ---- extension host ⇄ tensor file view (the read-only custom editor of .npy/.npz/.safetensors/.pt) ----

/** What the tensor file view lists, and the choices it offers for "Show attention". */
export interface TensorViewData {
  fileName: string;
  format: string;
  metadata?: Record<string, string>;
  tensors: { key: string; dtype: string; shape: number[]; summary: TensorSummary }[];
  /** Attention layers found by name, with which tensor plays which role. */
  layers: { prefix: string; roles: { role: string; source: string }[] }[];
  /** Candidates for X: tensors of this file, matrices of open text files. `id` is the host's. */
  inputs: { id: string; label: string }[];
  /** The head count the file suggests (metadata, per-head tensors), else 1. */
  heads: number;
  /** A Hugging Face config.json beside the file: its model type ("Run model" runs the folder). */
  modelType?: string;
  /** A vision model's folder: the pictures in it and beside it ("Run model" runs on one), as paths relative to the folder. */
  pictures?: string[];
  /** The file looks like saved attentions: the view offers "Show heads". */
  attentions: boolean;
}

export type HostToTensorView =
  | { type: 'tensors'; data: TensorViewData }
  /** The outcome of a read or a "Show attention": an error, or how names became roles. */
  | { type: 'status'; error?: string; notes: string[] };

export type TensorViewToHost =
  | { type: 'ready' }
  | { type: 'showHeads' }
  | { type: 'showAttention'; layer: number; input: string; heads: number }
  | { type: 'runModel'; text: string }
  /** A vision folder run on `picture` (an index into TensorViewData.pictures), or null: ask for one. */
  | { type: 'runModelOnImage'; picture: number | null };

/** A message from the tensor file view, or undefined when malformed. */
export function parseTensorViewMessage(raw: unknown): TensorViewToHost | undefined {
  if (!isRecord(raw)) return undefined;
  if (raw.type === 'runModel') return typeof raw.text === 'string' && raw.text.trim() !== '' && raw.text.length <= 1_000_000 ? { type: 'runModel', text: raw.text } : undefined;
  if (raw.type === 'runModelOnImage') return raw.picture === null || isIndex(raw.picture) ? { type: 'runModelOnImage', picture: raw.picture } : undefined;
  if (raw.type === 'ready' || raw.type === 'showHeads') return { type: raw.type };
  if (raw.type !== 'showAttention') return undefined;
  const { layer, input, heads } = raw;
  if (!isIndex(layer) || typeof input !== 'string' || input.length > 4096 || !isIndex(heads) || heads < 1) return undefined;
  return { type: 'showAttention', layer, input, heads };
}


// ---- the heads views: every layer × head of an AttentionStack (src/core/heads/stack.ts) ----
// The worker holds each open stack (a saved file's tensors, a problem's weights) under an id and
// answers with only what the page draws: pooled thumbnails, top-k lines, one head when opened.

/** What the page knows of a stack: labels and counts, never its weights. */
export interface StackInfo {
  title: string;
  source: 'model' | 'saved' | 'problem';
  tokens: string[];
  keyTokens: string[];
  layerCount: number;
  headCount: number;
  queryCount: number;
  keyCount: number;
  /** How the file was read (layout, batch picked, where the tokens came from). */
  notes: string[];
  /** A mixture-of-experts model run's routing, for the page's Experts tab (absent otherwise). */
  routing?: RoutingInfo;
  /** A vision model's run: the picture it saw and how its tokens lie on it (webview/heads/picture.ts). */
  picture?: PictureInfo;
  /** Which kind of attention the fields above describe, when the run has several (an encoder–decoder's). */
  kind?: AttentionKind;
  /** Every kind of the run, with its tokens per axis and counts: the page's selector offers them, and
   * its queries then name the kind (HeadsQuery's `attention`). Absent when the run has one kind. */
  kinds?: KindInfo[];
  /** A generated run: the prompt's length and each step's token and candidates (webview/heads/generation.ts). */
  generation?: GenerationInfo;
}

/** One kind of attention of a run: the encoder's [source × source], the decoder's [target × target], cross [target × source]. */
export type KindInfo = Pick<StackInfo, 'tokens' | 'keyTokens' | 'layerCount' | 'headCount' | 'queryCount' | 'keyCount'> & { kind: AttentionKind };


/** The experts each token went to, as the run recorded them: small (layers × tokens × top-k), so sent whole. */
export interface RoutingInfo {
  experts: number;
  topK: number;
  /** [layer][position] → [expert index, weight] pairs by decreasing weight; [] at every position of a dense layer. */
  layers: [number, number][][][];
}

/** The 8-bit RGB picture a vision model saw (after resize and crop), its patch grid, the tokens before the patches, and a classifier's top labels. */
export interface PictureInfo {
  width: number;
  height: number;
  rgb: Uint8Array;
  /** Pixels per patch side. */
  patchSize: number;
  grid: [number, number];
  prefix: number;
  labels: { label: string; probability: number }[];
}

/** Saved attentions to read from disk into a stack: a .pt/.safetensors/.npy/.npz file, with
 * token ids given on the command line (else the file's, a tokens.json or tokenizer.json beside). */
export interface WorkerHeadsOpenRequest {
  type: 'headsOpen';
  id: number;
  path: string;
  ids?: number[];
  maxElements: number;
}

/** A multi-head problem's weights as a one-layer stack (fast results' matrices are shared, not copied). */
export interface WorkerHeadsAdoptRequest {
  type: 'headsAdopt';
  id: number;
  title: string;
  tokens?: string[];
  keyTokens?: string[];
  weights: Matrix[];
  document: string;
  problem: number;
}

/** A model run the worker keeps (WorkerModelRequest's id), opened as a stack: every layer × head. */
export interface WorkerHeadsModelRequest {
  type: 'headsModel';
  id: number;
  run: number;
}

/** A question about an open stack: pooled thumbnails, top-k lines, or one head in full. `attention`:
 * of which kind, for a stack with several (StackInfo's `kinds`); absent: the stack's own. */
export type HeadsQuery = HeadsQuestion & { attention?: AttentionKind };

type HeadsQuestion =
  | { kind: 'grid'; size: number; mode: PoolMode; layers: number[]; heads: number[] }
  | { kind: 'lines'; layer: number; heads: number[]; k: number }
  | { kind: 'head'; layer: number; head: number }
  /** One query's row of each listed layer × head, keys from `keyStart` on (a picture run's model
   * view draws each thumbnail as the picture under that row: the patches, past the class token). */
  | { kind: 'rows'; query: number; keyStart: number; layers: number[]; heads: number[] }
  /** The mean of a layer's heads, in full (float64; the alignment view's "all heads"). */
  | { kind: 'layerMean'; layer: number }
  /** Head scores of every layer × head and the rollout (docs/analysis.md). */
  | { kind: 'scores' }
  /** Attention flow; refused (headsFailed) past its size limit. */
  | { kind: 'flow' }
  /** Against the run the page compares with (the host names it: WorkerHeadsQueryRequest.other):
   * the Jensen–Shannon divergence of every layer × head, and one head's B − A. */
  | { kind: 'divergence' }
  | { kind: 'difference'; layer: number; head: number }
  /** A model run's prediction at a token (the page's hover): the next tokens, or a [MASK]'s fillers. */
  | { kind: 'predict'; position: number }
  /** One query's row in every layer × head (a generation's step t: token t's row). */
  | { kind: 'row'; position: number };

export interface WorkerHeadsQueryRequest {
  type: 'headsQuery';
  id: number;
  stack: number;
  query: HeadsQuery;
  /** The stack compared with (B, `stack` being A): what divergence and difference queries need. */
  other?: number;
}

/** The view closed: the worker lets go of the stack. */
export interface WorkerHeadsCloseMessage {
  type: 'headsClose';
  stack: number;
}

export type HeadsAnswer =
  | { kind: 'grid'; grid: PooledGrid }
  | { kind: 'lines'; lines: HeadLines }
  | { kind: 'head'; layer: number; head: number; view: MatrixView }
  /** [layer][head][key − keyStart] of the query's rows, float32. */
  | { kind: 'rows'; query: number; keyStart: number; layers: number[]; heads: number[]; data: Float32Array }
  | { kind: 'layerMean'; layer: number; view: MatrixView }
  /** `rollout` [n × n] row-major (row: output position), null for cross-attention. */
  | { kind: 'scores'; scores: ScoreGrids; rollout: Float32Array | Float64Array | null }
  | { kind: 'flow'; flow: Float64Array }
  /** [layer][head], nats (src/core/heads/compare.ts). */
  | { kind: 'divergence'; divergence: number[][] }
  | { kind: 'difference'; difference: DifferenceMap }
  /** null: no prediction there (no LM head, a BERT token that is not a [MASK], a stack that is not a model run). */
  | { kind: 'predict'; position: number; prediction: Prediction | null }
  | { kind: 'row'; row: AttentionRow };

/** What the compare tab states of each run: a title and the text or path it ran on. */
export interface ComparedRun {
  title: string;
  detail: string;
}

export type WorkerHeadsResponse =
  | { type: 'headsOpened'; id: number; stack: number; info: StackInfo }
  | { type: 'headsAnswer'; id: number; answer: HeadsAnswer }
  | { type: 'headsFailed'; id: number; error: string };

// ---- extension host ⇄ heads view (webview/heads/) ----

export type HostToHeadsView =
  /** Before the stack: what the worker is opening (a model running, a file being read). */
  | { type: 'opening'; text: string }
  | { type: 'stack'; info: StackInfo }
  | { type: 'answer'; requestId: number; answer: HeadsAnswer }
  | { type: 'error'; requestId?: number; message: string }
  /** A second run is paired with this page's (A): divergence and difference queries now answer;
   * for encoder–decoder runs, of each kind but those `refused` names, with why (core/heads/compare.ts). */
  | { type: 'compared'; a: ComparedRun; b: ComparedRun; refused?: KindRefusals }
  /** The second run could not be opened or has another shape: one message, the pairing unchanged. */
  | { type: 'compareFailed'; message: string }
  /** Export Results from the palette on this page: send the standalone report (or say why not). */
  | { type: 'exportReport' }
  /** A generation has begun: its prompt, tokenized (the page shows it and a Stop button). */
  | { type: 'generating'; prompt: string[]; maxNewTokens: number; decoding: Decoding }
  /** The prompt's attention (all but its last token's rows): the model view and head view start from it and grow by each step's row. */
  | { type: 'generationPrompt'; attention: PromptAttention }
  /** One generated token as the worker chose it, with the attention row it was chosen from (the
   * latest step's only, when a page that opened late is given the steps so far); `computedAt` as
   * in the worker's modelStep. */
  | { type: 'generationStep'; step: GenerationStepInfo; row?: AttentionRow; computedAt: number };

export type HeadsViewToHost =
  | { type: 'ready' }
  | { type: 'query'; requestId: number; query: HeadsQuery }
  /** A click on a problem's or a model run's head, once the page has drawn it from a `head` query:
   * open it step by step in the attention panel too (see src/features/heads.ts); `attention`: of
   * which kind, on a page of several; `step`: a generated run's decode step. */
  | { type: 'openHead'; layer: number; head: number; attention?: AttentionKind; step?: number }
  /** Stop the generation under way (what it made so far is kept and shown). */
  | { type: 'stopGeneration' }
  /** A model run's page: run the induction probe on the same model (R tokens twice, seeded). */
  | { type: 'probe'; repeat: number; seed: number }
  /** Choose a second run to compare this page's with (the host asks for the text, folder or file). */
  | { type: 'compare'; with: CompareWith }
  /** Images of the views; csv/json: the head scores' table or the divergence map (webview/heads/scores.ts, compare.ts), as text. */
  | { type: 'export'; format: 'png' | 'svg' | 'csv' | 'json'; fileName: string; text?: string; base64?: string }
  /** The standalone HTML report: the model view as the page drew it (a PNG of `width` × `height`
   * CSS pixels) and the legend that says how it was pooled (src/report/headsHtml.ts). */
  | { type: 'report'; fileName: string; base64: string; width: number; height: number; legend: string; attention?: AttentionKind }
  /** The report asked for by `exportReport` cannot be made yet (the model view is not drawn). */
  | { type: 'reportFailed'; message: string };

/** The most random tokens the induction probe repeats (2R + 1 tokens run). */
export const MAX_PROBE_REPEAT = 1024;
/** Largest thumbnail side and top-k the page may ask for. */
export const MAX_THUMBNAIL_SIDE = 256;
export const MAX_TOP_K = 64;
const MAX_LISTED = 4096;

const isIndexList = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length <= MAX_LISTED && value.every(isIndex);

function parseHeadsQuery(raw: unknown): HeadsQuery | undefined {
  if (!isRecord(raw)) return undefined;
  const question = parseHeadsQuestion(raw);
  if (!question || raw.attention === undefined) return question;
  return isOneOf(ATTENTION_KINDS, raw.attention) ? { ...question, attention: raw.attention } : undefined;
}

function parseHeadsQuestion(raw: Record<string, unknown>): HeadsQuestion | undefined {
  switch (raw.kind) {
    case 'grid': {
      const { size, mode, layers, heads } = raw;
      if (!isIndex(size) || size < 1 || size > MAX_THUMBNAIL_SIDE || (mode !== 'max' && mode !== 'mean')) return undefined;
      return isIndexList(layers) && isIndexList(heads) ? { kind: 'grid', size, mode, layers, heads } : undefined;
    }
    case 'lines': {
      const { layer, heads, k } = raw;
      if (!isIndex(layer) || !isIndexList(heads) || !isIndex(k) || k < 1 || k > MAX_TOP_K) return undefined;
      return { kind: 'lines', layer, heads, k };
    }
    case 'head':
      return isIndex(raw.layer) && isIndex(raw.head) ? { kind: 'head', layer: raw.layer, head: raw.head } : undefined;
    case 'rows': {
      const { query, keyStart, layers, heads } = raw;
      return isIndex(query) && isIndex(keyStart) && isIndexList(layers) && isIndexList(heads) ? { kind: 'rows', query, keyStart, layers, heads } : undefined;
    }
    case 'difference':
      return isIndex(raw.layer) && isIndex(raw.head) ? { kind: 'difference', layer: raw.layer, head: raw.head } : undefined;
    case 'layerMean':
      return isIndex(raw.layer) ? { kind: 'layerMean', layer: raw.layer } : undefined;
    case 'scores':
    case 'flow':
    case 'divergence':
      return { kind: raw.kind };
    case 'predict':
    case 'row':
      return isIndex(raw.position) ? { kind: raw.kind, position: raw.position } : undefined;
    default:
      return undefined;
  }
}

/** A message from the heads view, or undefined when malformed. */
export function parseHeadsViewMessage(raw: unknown): HeadsViewToHost | undefined {
  if (!isRecord(raw)) return undefined;
  switch (raw.type) {
    case 'ready':
      return { type: 'ready' };
    case 'query': {
      const query = parseHeadsQuery(raw.query);
      return isIndex(raw.requestId) && query ? { type: 'query', requestId: raw.requestId, query } : undefined;
    }
    case 'openHead': {
      const { layer, head, attention, step } = raw;
      if (!isIndex(layer) || !isIndex(head) || (step !== undefined && !isIndex(step))) return undefined;
      if (attention !== undefined && !isOneOf(ATTENTION_KINDS, attention)) return undefined;
      return { type: 'openHead', layer, head, ...(attention === undefined ? {} : { attention }), ...(step === undefined ? {} : { step }) };
    }
    case 'stopGeneration':
      return { type: 'stopGeneration' };
    case 'probe':
      return isIndex(raw.repeat) && raw.repeat >= 1 && raw.repeat <= MAX_PROBE_REPEAT && isIndex(raw.seed) ? { type: 'probe', repeat: raw.repeat, seed: raw.seed } : undefined;
    case 'compare':
      return raw.with === 'text' || raw.with === 'checkpoint' || raw.with === 'file' ? { type: 'compare', with: raw.with } : undefined;
    case 'export': {
      if (raw.format === 'csv' || raw.format === 'json') {
        const { format, fileName, text } = raw;
        return isSafeFileName(fileName) && typeof text === 'string' && text.length <= MAX_EXPORT_CHARS ? { type: 'export', format, fileName, text } : undefined;
      }
      const image = parseWebviewMessage(raw);
      return image?.type === 'export' ? image : undefined;
    }
    case 'report': {
      const { fileName, base64, width, height, legend } = raw;
      if (!isSafeFileName(fileName) || !/\.html$/.test(fileName) || typeof legend !== 'string' || legend.length > MAX_LEGEND_CHARS) return undefined;
      if (typeof base64 !== 'string' || base64.length > MAX_EXPORT_CHARS || !/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) return undefined;
      const side = (value: unknown): value is number => isIndex(value) && value > 0 && value <= MAX_REPORT_SIDE;
      if (!side(width) || !side(height)) return undefined;
      if (raw.attention === undefined) return { type: 'report', fileName, base64, width, height, legend };
      return isOneOf(ATTENTION_KINDS, raw.attention) ? { type: 'report', fileName, base64, width, height, legend, attention: raw.attention } : undefined;
    }
    case 'reportFailed':
      return typeof raw.message === 'string' && raw.message.length <= 500 ? { type: 'reportFailed', message: raw.message } : undefined;
    default:
      return undefined;
  }
}
