// What the panel shows, built from one problem and its result: every matrix becomes a MatrixView
// that fits a heatmap (exact when at most 512×512, else a max-pooled overview), and zoomed
// regions are cut from the full matrices on request. Pure: no `vscode` import, so the host, the
// standalone report, the browser tests and the benchmark all build the very same data.
import { attentionCost, type AttentionShape } from '../core/engine/cost';
import type { AttentionResult, Matrix, Problem } from '../core/types';
import type { CostView, HeadView, MatrixKey, MatrixView, PanelData, Region, ResultView } from '../protocol';
import { annotateRules } from './derived';
import { variantViewsOf } from './variantsModel';

/** Largest number of rows or columns a heatmap draws cell by cell. */
export const MAX_CELLS_PER_SIDE = 512;

/**
 * Block maxima as viewOf computes them (row-major, NaN where a block holds one), by faster means
 * where it can — the engine worker passes the WebAssembly kernel's for fast results — or
 * undefined, and viewOf pools in JavaScript.
 */
export type MaxPool = (matrix: Matrix, rowStart: number, rowEnd: number, colStart: number, colEnd: number, rowBlock: number, colBlock: number) => Float64Array | undefined;

/**
 * The region of `matrix` as at most maxSide² cells: exact values when it fits, else
 * the maximum of each block. Max pooling keeps a sharp attention peak visible in the overview,
 * where a mean would dilute it by the block size.
 */
export function viewOf(matrix: Matrix, region: Region = wholeOf(matrix), maxPool?: MaxPool, maxSide = MAX_CELLS_PER_SIDE): MatrixView {
  const rowStart = clamp(region.rowStart, 0, matrix.rows - 1);
  const colStart = clamp(region.colStart, 0, matrix.cols - 1);
  const rowEnd = clamp(region.rowEnd, rowStart + 1, matrix.rows);
  const colEnd = clamp(region.colEnd, colStart + 1, matrix.cols);
  const rowBlock = Math.ceil((rowEnd - rowStart) / maxSide);
  const colBlock = Math.ceil((colEnd - colStart) / maxSide);
  const rows = Math.ceil((rowEnd - rowStart) / rowBlock);
  const cols = Math.ceil((colEnd - colStart) / colBlock);
  const base = { sourceRows: matrix.rows, sourceCols: matrix.cols, rowStart, colStart, rowBlock, colBlock, rows, cols };
  if (matrix.rows === 0 || matrix.cols === 0) return { ...base, rows: 0, cols: 0, data: new Float64Array(0) };
  const source = matrix.data;
  if (rowBlock === 1 && colBlock === 1) {
    const data = new Float64Array(rows * cols);
    for (let r = 0; r < rows; r++) {
      const from = (rowStart + r) * matrix.cols + colStart;
      data.set(source.subarray(from, from + cols), r * cols);
    }
    return { ...base, data };
  }
  const pooled = maxPool?.(matrix, rowStart, rowEnd, colStart, colEnd, rowBlock, colBlock);
  if (pooled) return { ...base, data: pooled };
  const data = new Float64Array(rows * cols).fill(-Infinity);
  for (let sourceRow = rowStart; sourceRow < rowEnd; sourceRow++) {
    const outRow = ((sourceRow - rowStart) / rowBlock) | 0;
    const rowOffset = sourceRow * matrix.cols;
    for (let c = 0; c < cols; c++) {
      const from = rowOffset + colStart + c * colBlock;
      const to = Math.min(from + colBlock, rowOffset + colEnd);
      let max = data[outRow * cols + c];
      for (let k = from; k < to; k++) {
        const value = source[k];
        // NaN wins: a pooled cell must not hide a NaN in its block.
        if (value > max || value !== value) max = value;
        if (max !== max) break;
      }
      data[outRow * cols + c] = max;
    }
  }
  return { ...base, data };
}

function wholeOf(matrix: Matrix): Region {
  return { rowStart: 0, rowEnd: matrix.rows, colStart: 0, colEnd: matrix.cols };
}

function clamp(value: number, low: number, high: number): number {
  return Math.max(low, Math.min(high, value));
}

export const LAYER_KEYS = ['input', 'concat', 'WO', 'layerOutput', 'residual'] as const;
export const GRADIENT_KEYS = ['dQ', 'dK', 'dV', 'dA', 'dS'] as const;
type LayerKey = (typeof LAYER_KEYS)[number];
type GradientKey = (typeof GRADIENT_KEYS)[number];
export const isLayerKey = (key: MatrixKey): key is LayerKey => (LAYER_KEYS as readonly MatrixKey[]).includes(key);
export const isGradientKey = (key: MatrixKey): key is GradientKey => (GRADIENT_KEYS as readonly MatrixKey[]).includes(key);

/** Where a panel matrix lives: in the layer, in a head's gradients, or in the head itself. */
function pick<T>(
  key: MatrixKey,
  layer: Partial<Record<LayerKey, T>>,
  head: Partial<Record<MatrixKey, T | null | number | object>> | undefined,
  gradients: Partial<Record<GradientKey, T>> | undefined,
): T | undefined {
  if (isLayerKey(key)) return layer[key];
  if (isGradientKey(key)) return gradients?.[key];
  return (head?.[key] as T | null | undefined) ?? undefined;
}

/** The full matrix behind a panel heatmap, or undefined when that result does not have it. */
export function matrixOf(result: AttentionResult, problem: Problem, head: number, key: MatrixKey): Matrix | undefined {
  const WO = problem.matrices.find((def) => def.role === 'WO')?.value;
  const layer = { input: result.input, concat: result.concat, WO, layerOutput: result.output, residual: result.residual };
  return pick<Matrix>(key, layer, result.heads[head] as never, result.heads[head]?.gradients);
}

/** A BERT-base / GPT-2-small layer stack in float32, to put the problem's cost in perspective. */
const REALISTIC: AttentionShape = { queries: 512, keys: 512, dModel: 768, dK: 64, dV: 64, heads: 12, layers: 12, dtype: 'float32' };

function realisticCost(): CostView {
  const { flops, attentionBytes } = attentionCost(REALISTIC);
  return { label: `${REALISTIC.layers} layers × ${REALISTIC.heads} heads, n = ${REALISTIC.queries}, d_model = ${REALISTIC.dModel}, float32`, flops, attentionBytes };
}

function problemLabel(problem: Problem): string {
  return problem.name ?? problem.options.name ?? `Problem ${problem.index + 1}`;
}

export interface PanelSource {
  uri: string;
  fileName: string;
  problems: Problem[];
  problemIndex: number;
  result?: AttentionResult;
  message?: string;
  /** The problem's run has started: no result yet, and none to ask for. */
  computing?: boolean;
}

export function panelDataOf(source: PanelSource): PanelData {
  const problem = source.problems[source.problemIndex];
  const base = {
    uri: source.uri,
    fileName: source.fileName,
    problemIndex: source.problemIndex,
    problems: source.problems.map((p) => ({ index: p.index, label: problemLabel(p) })),
  };
  if (!problem) {
    return { ...base, title: source.fileName, options: { heads: 1, score: 'scaled_dot', dtype: 'float64' }, message: source.message ?? 'No attention problem in this file.' };
  }
  const { heads, kvHeads, scale, score, causal, dtype, rope, temperature, softcap, alibi } = problem.options;
  const data: PanelData = {
    ...base,
    title: problemLabel(problem),
    options: { heads, kvHeads, scale, score, causal, dtype, ...(rope === undefined && temperature === undefined && softcap === undefined && !alibi ? {} : { rope, temperature, softcap, alibi }) },
    ...(problem.tokens ? { tokens: problem.tokens } : {}),
    ...(problem.keyTokens ? { keyTokens: problem.keyTokens } : {}),
  };
  if (!source.result) {
    if (source.computing) return { ...data, message: source.message ?? 'Computing attention…', computing: true };
    return { ...data, message: source.message ?? 'Not run yet: run attention on this problem.' };
  }
  // A decode step's one query is the last token; the keys are every token.
  if (source.result.decode && problem.tokens) Object.assign(data, { tokens: problem.tokens.slice(-1), keyTokens: problem.keyTokens ?? problem.tokens });
  const WO = problem.matrices.find((def) => def.role === 'WO')?.value;
  return { ...data, dk: source.result.heads[0]?.Q.cols, result: panelViewOf(problem, source.result, WO) };
}

/** The result's views with the variant views added, built once per result: the session posts only
 * "stale" when the view it last posted is the very same object, so a new object here would resend
 * and redraw an old result on every keystroke. Large problems keep the worker's views as they came. */
const panelViews = new WeakMap<AttentionResult, ResultView>();
function panelViewOf(problem: Problem, result: AttentionResult, WO: Matrix | undefined): ResultView {
  const cached = panelViews.get(result);
  if (cached) return cached;
  const view = resultViewOf(result, WO);
  const extra = variantViewsOf(problem, result);
  const combined = extra.variants || extra.flash ? { ...view, ...extra } : view;
  panelViews.set(result, combined);
  return combined;
}

/** Views of each result, built once: pooling a 4096² matrix takes 60–240 ms, and the same result
 * is posted again on every cursor move, reload and problem switch. */
const viewsByResult = new WeakMap<AttentionResult, ResultView>();

/**
 * The panel's views of a result (`WO`: the problem's output projection, shown beside the layer).
 * The engine worker builds them next to the result, so the extension host, which adopts them
 * (`adoptResultView`), never spends its event loop pooling large matrices.
 */
export function resultViewOf(result: AttentionResult, WO: Matrix | undefined, maxPool?: MaxPool): ResultView {
  const cached = viewsByResult.get(result);
  if (cached) return cached;
  const views = buildResultView(result, WO, maxPool);
  viewsByResult.set(result, views);
  return views;
}

/** Takes `view` (built by resultViewOf elsewhere, e.g. in the worker) as the views of `result`. */
export function adoptResultView(result: AttentionResult, view: ResultView): void {
  viewsByResult.set(result, view);
}

function buildResultView(result: AttentionResult, WO: Matrix | undefined, maxPool: MaxPool | undefined): ResultView {
  // One view per matrix, however often the result names it: the heads share one causal or padding
  // mask, and a step that changes nothing is the previous step's matrix (masked = scaled without
  // a mask). A shared view is posted once (VS Code sends each buffer once): 14–20% fewer bytes.
  const views = new Map<Matrix, MatrixView>();
  const view = (matrix: Matrix): MatrixView => {
    let made = views.get(matrix);
    if (!made) views.set(matrix, (made = viewOf(matrix, undefined, maxPool)));
    return made;
  };
  const heads = result.heads.map((head): HeadView => ({
    kvHead: head.kvHead,
    Q: view(head.Q),
    K: view(head.K),
    V: view(head.V),
    scores: view(head.scores),
    scaled: view(head.scaled),
    mask: head.mask ? view(head.mask) : null,
    masked: view(head.masked),
    weights: view(head.weights),
    output: view(head.output),
    ...(head.gradients
      ? {
          gradients: {
            dQ: view(head.gradients.dQ),
            dK: view(head.gradients.dK),
            dV: view(head.gradients.dV),
            dA: view(head.gradients.dA),
            dS: view(head.gradients.dS),
          },
        }
      : {}),
    ...(head.givenWeights ? { givenWeights: view(head.givenWeights), givenMaxDifference: head.givenMaxDifference } : {}),
  }));
  const first = result.heads[0];
  const n = first?.weights.cols ?? 0;
  const resultView: ResultView = {
    dtype: result.dtype,
    elapsedMs: result.elapsedMs,
    warnings: result.warnings,
    checks: { ...result.checks },
    cost: [
      { label: `this problem (${result.heads.length} head${result.heads.length === 1 ? '' : 's'}, n = ${n})`, flops: result.checks.flops, attentionBytes: result.checks.attentionBytes },
      realisticCost(),
    ],
    heads,
    ...(result.input ? { input: view(result.input) } : {}),
    concat: view(result.concat),
    ...(WO ? { WO: view(WO) } : {}),
    layerOutput: view(result.output),
    ...(result.residual ? { residual: view(result.residual) } : {}),
    ...(result.givenOnly ? { givenOnly: true } : {}),
  };
  annotateRules(resultView);
  return resultView;
}

/** The view of a panel matrix as sent to the webview (the standalone report's only copy). */
export function viewOfKey(data: PanelData, head: number, key: MatrixKey): MatrixView | undefined {
  return data.result && viewAt(data.result, head, key);
}

/** The view of a matrix in a result's views, if it has one. */
export function viewAt(result: ResultView, head: number, key: MatrixKey): MatrixView | undefined {
  return pick<MatrixView>(key, result, result.heads[head] as never, result.heads[head]?.gradients);
}
