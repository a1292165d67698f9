// Every message that crosses a thread or frame boundary: extension host ⇄ worker, and
// extension host ⇄ webview (panel, bottom view). Discriminated unions on `type`; each request
// carries an `id` that its reply repeats. Messages from a webview are untrusted: the host
// validates them (see the validators below) before acting.

// ---- extension host ⇄ worker (owned by the extension/worker work) ----

import type { NotebookCell } from './core/parse/notebook';
import type { TensorFile } from './core/parse/tensors';
import type { TensorSummary } from './core/parse/tensors/summary';
import type { MatrixStatistics } from './core/statistics';
import type { AttentionResult, AttentionSpec, Diagnostic, Matrix, ParseResult } from './core/types';

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

/** Read and decode a tensor file from disk, with each tensor's summary, off the host's thread. */
export interface WorkerTensorFileRequest {
  type: 'tensorFile';
  id: number;
  path: string;
  maxElements: number;
}

export type WorkerRequest =
  | WorkerRunRequest
  | WorkerRegionRequest
  | WorkerTextMessage
  | WorkerEditMessage
  | WorkerReadRequest
  | WorkerReadCellsRequest
  | WorkerForgetMessage
  | WorkerTensorFileRequest;

/** One outcome per requested problem, in request order. `view`: the panel's views of the result
 * (panel/model.ts), built in the worker so that the host never pools large matrices itself. */
export type WorkerProblemOutcome =
  | { index: number; result: AttentionResult; view: ResultView }
  | { index: number; error: string };

export type WorkerResponse =
  | { type: 'result'; id: number; outcomes: WorkerProblemOutcome[] }
  | { type: 'region'; id: number; view: MatrixView }
  | { type: 'tensorFile'; id: number; file: TensorFile; summaries: TensorSummary[] }
  | { type: 'tensorFileFailed'; id: number; error: string }
  /** `reading` null: the worker does not hold that version of the text (it was restarted, or
   * missed an edit); the host sends the whole text again. */
  | { type: 'read'; id: number; reading: WorkerReading | null }
  | { type: 'cancelled'; id: number }
  | { type: 'failed'; id: number; error: string };

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
  /** How the numbers follow from other views of the same head, exactly (src/panel/derived.ts):
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
  /** The variants' views (panel/variantsModel.ts), for problems that use any and are small. */
  variants?: VariantsView;
  /** FlashAttention's online softmax walked on head 1, one walk per tile size offered. */
  flash?: FlashView[];
  /** Only weights were given: the heads' `weights` are those, nothing else was computed. */
  givenOnly?: boolean;
}

/** What the variants change, shown from the user's numbers (problems up to 64 tokens). */
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
  }[];
  /** The mask's structure (1 = may attend) and what a kernel skipping masked entries saves. */
  mask?: { visible: MatrixView; blockedShare: number; flopsSaved: number; flops: number; blockSize: number; skippedBlocksShare: number };
  /** A decode step: head 1's one row and the full run's weights it is the last row of. */
  decode?: { row: number; stepWeights: MatrixView; fullWeights: MatrixView; maxDifference: number };
}

export interface FlashView {
  tileRows: number;
  tileCols: number;
  steps: { queryStart: number; queryEnd: number; keyStart: number; keyEnd: number; rowMax: number[]; rowSum: number[]; rescale: number[]; partial: number[][] }[];
  /** One Lq×Lk matrix against what one tile keeps live, bytes. */
  fullBytes: number;
  tileBytes: number;
  /** max |walk output − engine output| of head 1. */
  maxDifference: number;
}

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

export type HostToWebview =
  /** `update` numbers the host's data posts, for the views it held back (src/panel/deferral.ts). */
  | { type: 'data'; data: PanelData; focusHead?: number; update?: number }
  /** The views update `update` held back, each with every place it fills. */
  | { type: 'deferredViews'; update: number; views: { refs: ViewRef[]; view: MatrixView }[] }
  /** The result shown did not change; only whether it is out of date did (see PanelData.stale). */
  | { type: 'stale'; stale?: string }
  | { type: 'region'; requestId: number; view: MatrixView | null };

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
  | { type: 'requestDeferred'; update: number };

const MATRIX_KEYS: readonly MatrixKey[] = [
  'Q', 'K', 'V', 'scores', 'scaled', 'mask', 'masked', 'weights', 'output',
  'dQ', 'dK', 'dV', 'dA', 'dS', 'input', 'concat', 'WO', 'layerOutput', 'residual',
];
const VIEWS: readonly PanelState['view'][] = ['steps', 'heads', 'mask', 'gradients', 'checks', 'variants', 'flash'];
const STEPS: readonly PanelState['step'][] = ['all', 'projections', 'scores', 'scaled', 'masked', 'weights', 'output'];
const COLOR_SCALES: readonly PanelState['colorScale'][] = ['Viridis', 'Cividis', 'Blues', 'Greys', 'RdBu', 'Theme'];
/** Largest image the host accepts from a webview (characters of SVG text or PNG base64). */
const MAX_EXPORT_CHARS = 64 * 1024 * 1024;

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
}

export type HostToTensorView =
  | { type: 'tensors'; data: TensorViewData }
  /** The outcome of a read or a "Show attention": an error, or how names became roles. */
  | { type: 'status'; error?: string; notes: string[] };

export type TensorViewToHost =
  | { type: 'ready' }
  | { type: 'showAttention'; layer: number; input: string; heads: number };

/** A message from the tensor file view, or undefined when malformed. */
export function parseTensorViewMessage(raw: unknown): TensorViewToHost | undefined {
  if (!isRecord(raw)) return undefined;
  if (raw.type === 'ready') return { type: 'ready' };
  if (raw.type !== 'showAttention') return undefined;
  const { layer, input, heads } = raw;
  if (!isIndex(layer) || typeof input !== 'string' || input.length > 4096 || !isIndex(heads) || heads < 1) return undefined;
  return { type: 'showAttention', layer, input, heads };
}
