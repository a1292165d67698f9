// What the panel shows, built from one problem and its result: every matrix becomes a MatrixView
// that fits a heatmap (matrixView.ts), with the variants' views of a small problem beside them.
// Pure: no `vscode` import, so the host, the standalone report, the browser tests and the
// benchmark all build the very same data.
import { attentionCost, type AttentionShape } from '../core/engine/cost';
import type { AttentionResult, Matrix, Problem } from '../core/types';
import type { CostView, HeadView, MatrixView, PanelData, ResultView } from '../protocol';
import { annotateRules } from './derived';
import { type MaxPool, viewOf } from './matrixView';
import { variantViewsOf } from './variantsModel';

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
