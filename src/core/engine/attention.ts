// The forward pass of one problem, every intermediate kept for the UI:
//   input = X (+ PE) → per-head Q, K, V → scores → scaled → + mask → row softmax → A V
//   → Concat(heads) (· W_O).
// Query rows are processed in blocks so a long run can be cancelled between blocks.
import type { AttentionSpec, DType, HeadResult, Matrix } from '../types';
import { addColumns, addRows, dtypeOf, inDtype, matmul, rowSoftmax, scaleRows, zeros } from './kernels';
import { combinedMask, requireShape } from './masks';
import { sinusoidalPositionalEncoding } from './positional';
import { project, type Projection } from './projections';
import { bindScores, type HeadScores, type ScoreParameters, scoreScale } from './scores';

export class CancelledError extends Error {
  constructor() {
    super('attention run cancelled');
    this.name = 'CancelledError';
  }
}

export interface RunControl {
  isCancelled?: () => boolean;
}

/** Query rows per block between cancellation checks. */
const ROW_BLOCK = 64;

/** What the backward pass needs beyond the HeadResults. */
export interface HeadInternals {
  scale: number;
  scores: HeadScores;
}

export interface ForwardPass {
  dtype: DType;
  input?: Matrix;
  context?: Matrix;
  heads: HeadResult[];
  internals: HeadInternals[];
  projections: { Q: Projection; K: Projection; V: Projection };
  concat: Matrix;
  output: Matrix;
  WO?: Matrix;
  warnings: string[];
}

export function checkCancelled(control: RunControl): void {
  if (control.isCancelled?.()) throw new CancelledError();
}

/** Everything before the heads: the input, per-head Q/K/V, the mask, the score parameters. */
interface Setup {
  dtype: DType;
  input?: Matrix;
  context?: Matrix;
  projections: { Q: Projection; K: Projection; V: Projection };
  queries: number;
  keys: number;
  mask: Matrix | null;
  scoreParameters: ScoreParameters;
  groupSize: number; // query heads per KV head
}

function setUp(spec: AttentionSpec): Setup {
  const { options } = spec;
  const dtype = options.dtype;
  const h = options.heads;
  const g = options.kvHeads ?? h;
  if (!Number.isInteger(h) || h < 1 || !Number.isInteger(g) || g < 1 || h % g !== 0) {
    throw new RangeError(`heads=${h} must be a positive multiple of kv_heads=${g}`);
  }
  const input = spec.X ? positioned(spec, spec.X, dtype) : undefined;
  const context = spec.context ? inDtype(spec.context, dtype) : undefined;
  const kvSource = context ?? input;
  const projections = {
    Q: project('Q', h, dtype, spec.Q, spec.WQ, input),
    K: project('K', g, dtype, spec.K, spec.WK, kvSource),
    V: project('V', g, dtype, spec.V, spec.WV, kvSource),
  };
  const queries = projections.Q.heads[0].rows;
  const keys = projections.K.heads[0].rows;
  if (projections.V.heads[0].rows !== keys) {
    throw new RangeError(`K has ${keys} rows but V has ${projections.V.heads[0].rows}`);
  }
  return {
    dtype,
    input,
    context,
    projections,
    queries,
    keys,
    mask: combinedMask(spec, queries, keys, dtype),
    scoreParameters: {
      score: options.score,
      sigma: options.sigma ?? 1,
      Wa: spec.Wa && inDtype(spec.Wa, dtype),
      W1: spec.W1 && inDtype(spec.W1, dtype),
      W2: spec.W2 && inDtype(spec.W2, dtype),
      va: spec.va && inDtype(spec.va, dtype),
    },
    groupSize: h / g,
  };
}

/** The matrices one head's steps write; the same matrix may stand for several (in place). */
type HeadSteps = Pick<HeadResult, 'scores' | 'scaled' | 'masked' | 'weights' | 'output'>;

/** One head, query rows block by block; returns the fully masked rows. */
function attend(steps: HeadSteps, scores: HeadScores, scale: number, mask: Matrix | null, V: Matrix, control: RunControl): number[] {
  const fullyMasked: number[] = [];
  for (let r0 = 0; r0 < steps.scores.rows; r0 += ROW_BLOCK) {
    checkCancelled(control);
    const r1 = Math.min(steps.scores.rows, r0 + ROW_BLOCK);
    scores.rows(steps.scores, r0, r1);
    scaleRows(steps.scaled, steps.scores, scale, r0, r1);
    if (mask) addRows(steps.masked, steps.scaled, mask, r0, r1);
    fullyMasked.push(...rowSoftmax(steps.weights, steps.masked, r0, r1));
    matmul(steps.output, steps.weights, V, r0, r1);
  }
  return fullyMasked;
}

/** The forward pass with every intermediate of every head kept. */
export function forward(spec: AttentionSpec, control: RunControl): ForwardPass {
  const setup = setUp(spec);
  const { dtype, projections, queries, keys, mask, groupSize } = setup;
  const heads: HeadResult[] = [];
  const internals: HeadInternals[] = [];
  const warnings: string[] = [];
  projections.Q.heads.forEach((Q, i) => {
    checkCancelled(control);
    const kvHead = Math.floor(i / groupSize);
    const K = projections.K.heads[kvHead];
    const V = projections.V.heads[kvHead];
    const scale = scoreScale(spec, Q.cols);
    const scores = bindScores(setup.scoreParameters, Q, K, dtype);
    const scaled = zeros(queries, keys, dtype);
    const head: HeadResult = {
      Q,
      K,
      V,
      scores: zeros(queries, keys, dtype),
      scaled,
      mask,
      masked: mask ? zeros(queries, keys, dtype) : scaled, // nothing added: the same numbers
      weights: zeros(queries, keys, dtype),
      output: zeros(queries, V.cols, dtype),
      kvHead,
    };
    for (const row of attend(head, scores, scale, mask, V, control)) {
      warnings.push(fullyMaskedWarning(spec, row, i));
    }
    const undefinedRows = rowsWithNaN(head.weights);
    if (undefinedRows.length > 0) {
      warnings.push(
        `${describeQuery(spec, undefinedRows[0])} (head ${i + 1})` +
          (undefinedRows.length > 1 ? ` and ${undefinedRows.length - 1} more queries` : '') +
          ' got NaN weights: a score there is NaN or +∞',
      );
    }
    heads.push(head);
    internals.push({ scale, scores });
  });
  const WO = spec.WO && inDtype(spec.WO, dtype);
  const { concat, output } = combineHeads(heads.map((head) => head.output), WO, dtype);
  return { dtype, input: setup.input, context: setup.context, heads, internals, projections, concat, output, WO, warnings };
}

/**
 * The final output alone (for checks that rerun a problem): every head's steps run in place in
 * one Lq×Lk scratch matrix, so it keeps one n×n matrix instead of four per head.
 */
export function forwardOutput(spec: AttentionSpec, control: RunControl): Matrix {
  const setup = setUp(spec);
  const { dtype, projections, queries, keys, mask, groupSize } = setup;
  const scratch = zeros(queries, keys, dtype);
  const outputs = projections.Q.heads.map((Q, i) => {
    checkCancelled(control);
    const K = projections.K.heads[Math.floor(i / groupSize)];
    const V = projections.V.heads[Math.floor(i / groupSize)];
    const steps = { scores: scratch, scaled: scratch, masked: scratch, weights: scratch, output: zeros(queries, V.cols, dtype) };
    attend(steps, bindScores(setup.scoreParameters, Q, K, dtype), scoreScale(spec, Q.cols), mask, V, control);
    return steps.output;
  });
  return combineHeads(outputs, spec.WO && inDtype(spec.WO, dtype), dtype).output;
}

/** Concat(head outputs), then · W_O when given. */
function combineHeads(outputs: Matrix[], WO: Matrix | undefined, dtype: DType): { concat: Matrix; output: Matrix } {
  const width = outputs[0].cols;
  const concat = zeros(outputs[0].rows, width * outputs.length, dtype);
  outputs.forEach((out, i) => addColumns(concat, out, i * width));
  if (!WO) return { concat, output: concat };
  if (WO.rows !== concat.cols) {
    throw new RangeError(`Concat(heads) has ${concat.cols} columns but W_O has ${WO.rows} rows`);
  }
  const output = zeros(concat.rows, WO.cols, dtype);
  matmul(output, concat, WO);
  return { concat, output };
}

/** X + PE (given, or sinusoidal on request), in the run's dtype. */
function positioned(spec: AttentionSpec, X: Matrix, dtype: DType): Matrix {
  const x = inDtype(X, dtype);
  const pe = spec.PE ?? (spec.options.sinusoidalPE ? sinusoidalPositionalEncoding(X.rows, X.cols) : undefined);
  if (!pe) return x;
  requireShape(pe, X.rows, X.cols, 'PE');
  const out = zeros(X.rows, X.cols, dtype);
  addRows(out, x, inDtype(pe, dtype));
  return out;
}

function rowsWithNaN(m: Matrix): number[] {
  const rows: number[] = [];
  for (let i = 0; i < m.rows; i++) {
    for (let j = 0; j < m.cols; j++) {
      if (Number.isNaN(m.data[i * m.cols + j])) {
        rows.push(i);
        break;
      }
    }
  }
  return rows;
}

/** "query 2 "love"": 1-based, with the token when there is one. */
export function describeQuery(spec: AttentionSpec, row: number): string {
  const token = spec.tokens?.[row];
  return token === undefined ? `query ${row + 1}` : `query ${row + 1} ${JSON.stringify(token)}`;
}

/** The warning for a query row no key is left for (`head`: 0-based). Shared by every engine path. */
export function fullyMaskedWarning(spec: AttentionSpec, row: number, head: number): string {
  return `${describeQuery(spec, row)} (head ${head + 1}) is fully masked: its output row is 0`;
}

/** E' = E + ΔE: the input plus the attention output. */
export function residual(input: Matrix | undefined, output: Matrix): Matrix {
  if (!input) throw new RangeError('the residual E + ΔE needs the input X');
  requireShape(output, input.rows, input.cols, 'the output (for the residual)');
  const out = zeros(input.rows, input.cols, dtypeOf(output));
  addRows(out, input, output);
  return out;
}
