// The forward pass of one problem, every intermediate kept for the UI:
//   input = X (+ PE) → per-head Q, K, V → scores → scaled → + mask → row softmax → A V
//   → Concat(heads) (· W_O).
// The variants (RoPE, temperature, softcap, ALiBi, windows…) enter through variants.ts only:
// RoPE turns Q and K before the scores, the head's modifier makes `scaled` and the additive matrix.
// Query rows are processed in blocks so a long run can be cancelled between blocks.
import type { AttentionSpec, DType, HeadResult, Matrix } from '../types';
import { addColumns, addRows, dtypeOf, inDtype, matmul, rowSoftmax, zeros } from './kernels';
import { combinedMask, requireShape } from './masks';
import { sinusoidalPositionalEncoding } from './positional';
import { project, type Projection } from './projections';
import { bindScores, type HeadScores, type ScoreParameters, scoreScale } from './scores';
import { decodedRows, headModifier, type HeadModifier, modifyScores, type Positions, positionsOf, type Rope, ropeOf, rotate } from './variants';

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
  modifier: HeadModifier;
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
  /** RoPE and the positions of the computed rows, for the backward pass. */
  rope?: Rope;
  positions: Positions;
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
  positions: Positions;
  mask: Matrix | null;
  scoreParameters: ScoreParameters;
  groupSize: number; // query heads per KV head
  rope?: Rope;
  /** Per KV head: K as the scores see it (turned by RoPE when asked). */
  scoredKeys: Matrix[];
}

function setUp(spec: AttentionSpec): Setup {
  const { options } = spec;
  const dtype = options.dtype;
  const h = options.heads;
  const g = options.kvHeads ?? h;
  if (!Number.isInteger(h) || h < 1 || !Number.isInteger(g) || g < 1 || h % g !== 0) {
    throw new RangeError(`heads=${h} must be a positive multiple of kv_heads=${g}`);
  }
  const fullInput = spec.X ? positioned(spec, spec.X, dtype) : undefined;
  const context = spec.context ? inDtype(spec.context, dtype) : undefined;
  const kvSource = context ?? fullInput;
  // A decode step projects the last query alone; keys and values come from every token.
  const input = fullInput && decodedRows(spec, fullInput);
  const projections = {
    Q: project('Q', h, dtype, spec.Q && decodedRows(spec, spec.Q), spec.WQ, input),
    K: project('K', g, dtype, spec.K, spec.WK, kvSource),
    V: project('V', g, dtype, spec.V, spec.WV, kvSource),
  };
  const fullQueries = spec.Q?.rows ?? fullInput?.rows ?? projections.Q.heads[0].rows;
  const keys = projections.K.heads[0].rows;
  if (projections.V.heads[0].rows !== keys) {
    throw new RangeError(`K has ${keys} rows but V has ${projections.V.heads[0].rows}`);
  }
  const positions = positionsOf(spec, fullQueries, keys);
  const rope = ropeOf(options);
  const fullMask = combinedMask(spec, fullQueries, keys, dtype);
  return {
    dtype,
    input,
    context,
    projections,
    queries: positions.queries,
    keys,
    positions,
    rope,
    scoredKeys: projections.K.heads.map((K) => (rope ? rotate(K, rope, 0, dtype) : K)),
    mask: fullMask && decodedRows(spec, fullMask),
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
function attend(steps: HeadSteps, scores: HeadScores, modifier: HeadModifier, V: Matrix, control: RunControl): number[] {
  const fullyMasked: number[] = [];
  const additive = modifier.additive;
  for (let r0 = 0; r0 < steps.scores.rows; r0 += ROW_BLOCK) {
    checkCancelled(control);
    const r1 = Math.min(steps.scores.rows, r0 + ROW_BLOCK);
    scores.rows(steps.scores, r0, r1);
    modifyScores(steps.scaled, steps.scores, modifier, r0, r1);
    if (additive) addRows(steps.masked, steps.scaled, additive, r0, r1);
    fullyMasked.push(...rowSoftmax(steps.weights, steps.masked, r0, r1));
    matmul(steps.output, steps.weights, V, r0, r1);
  }
  return fullyMasked;
}

/** Head i's score function (on RoPE-turned Q and K when asked) and its score modifier. */
function headScoring(spec: AttentionSpec, setup: Setup, i: number): { scores: HeadScores; modifier: HeadModifier } {
  const { Q, K, modifier } = operandsOf(spec, setup, i);
  return { scores: bindScores(setup.scoreParameters, Q, K, setup.dtype), modifier };
}

/** What head i's scores are made of: Q and K as scored (RoPE-turned when asked), V, its modifier,
 * and the score function's parameters (bindScores makes the scores of any rows of Q and K). */
export interface HeadOperands {
  Q: Matrix;
  K: Matrix;
  V: Matrix;
  modifier: HeadModifier;
  scoreParameters: ScoreParameters;
}

export function headOperands(spec: AttentionSpec, i: number): HeadOperands {
  return operandsOf(spec, setUp(spec), i);
}

/** Head i's operands with what they are made from, for the views of one head on demand (the
 * panel's Variants tab): Q and K before RoPE, the mask of the computed rows, and the positions. */
export interface HeadParts extends HeadOperands {
  unturnedQ: Matrix;
  unturnedK: Matrix;
  mask: Matrix | null;
  positions: Positions;
}

export function headParts(spec: AttentionSpec, i: number): HeadParts {
  const setup = setUp(spec);
  const kvHead = Math.floor(i / setup.groupSize);
  return {
    ...operandsOf(spec, setup, i),
    unturnedQ: setup.projections.Q.heads[i],
    unturnedK: setup.projections.K.heads[kvHead],
    mask: setup.mask,
    positions: setup.positions,
  };
}

function operandsOf(spec: AttentionSpec, setup: Setup, i: number): HeadOperands {
  const { dtype, projections, positions, rope, mask } = setup;
  const Q = projections.Q.heads[i];
  const kvHead = Math.floor(i / setup.groupSize);
  return {
    Q: rope ? rotate(Q, rope, positions.firstQuery, dtype) : Q,
    K: setup.scoredKeys[kvHead],
    V: projections.V.heads[kvHead],
    modifier: headModifier(spec, i, scoreScale(spec, Q.cols), mask, positions, dtype),
    scoreParameters: setup.scoreParameters,
  };
}

/** The forward pass with every intermediate of every head kept. */
export function forward(spec: AttentionSpec, control: RunControl): ForwardPass {
  const setup = setUp(spec);
  const { dtype, projections, queries, keys, groupSize, positions } = setup;
  const heads: HeadResult[] = [];
  const internals: HeadInternals[] = [];
  const warnings: string[] = [];
  projections.Q.heads.forEach((Q, i) => {
    checkCancelled(control);
    const kvHead = Math.floor(i / groupSize);
    const K = projections.K.heads[kvHead];
    const V = projections.V.heads[kvHead];
    const { scores, modifier } = headScoring(spec, setup, i);
    const scaled = zeros(queries, keys, dtype);
    const head: HeadResult = {
      Q,
      K,
      V,
      scores: zeros(queries, keys, dtype),
      scaled,
      mask: modifier.additive,
      masked: modifier.additive ? zeros(queries, keys, dtype) : scaled, // nothing added: the same numbers
      weights: zeros(queries, keys, dtype),
      output: zeros(queries, V.cols, dtype),
      kvHead,
    };
    const firstRow = positions.fullQueries - positions.queries; // the decode step's row
    for (const row of attend(head, scores, modifier, V, control)) {
      warnings.push(fullyMaskedWarning(spec, firstRow + row, i));
    }
    const undefinedRows = rowsWithNaN(head.weights);
    if (undefinedRows.length > 0) {
      warnings.push(
        `${describeQuery(spec, firstRow + undefinedRows[0])} (head ${i + 1})` +
          (undefinedRows.length > 1 ? ` and ${undefinedRows.length - 1} more queries` : '') +
          ' got NaN weights: a score there is NaN or +∞',
      );
    }
    heads.push(head);
    internals.push({ modifier, scores });
  });
  const WO = spec.WO && inDtype(spec.WO, dtype);
  const { concat, output } = combineHeads(heads.map((head) => head.output), WO, dtype);
  return { dtype, input: setup.input, context: setup.context, heads, internals, projections, concat, output, WO, warnings, rope: setup.rope, positions };
}

/**
 * The final output alone (for checks that rerun a problem, a model's layers): every head's steps
 * run in place in one Lq×Lk scratch matrix, so it keeps one n×n matrix instead of four per head.
 * `eachHead` sees each head's weights in that scratch before the next head overwrites them.
 */
export function forwardOutput(spec: AttentionSpec, control: RunControl, eachHead?: (head: number, weights: Matrix) => void): Matrix {
  const setup = setUp(spec);
  const { dtype, projections, queries, keys, groupSize } = setup;
  const scratch = zeros(queries, keys, dtype);
  const outputs = projections.Q.heads.map((_, i) => {
    checkCancelled(control);
    const V = projections.V.heads[Math.floor(i / groupSize)];
    const steps = { scores: scratch, scaled: scratch, masked: scratch, weights: scratch, output: zeros(queries, V.cols, dtype) };
    const { scores, modifier } = headScoring(spec, setup, i);
    attend(steps, scores, modifier, V, control);
    // The scratch holds the head's weights until the next head overwrites it.
    eachHead?.(i, scratch);
    return steps.output;
  });
  return combineHeads(outputs, spec.WO && inDtype(spec.WO, dtype), dtype).output;
}

/**
 * Head i's weights alone, no output (V is not read): a model run recomputes one head's weights
 * on demand rather than keeping every head's. The same steps as the forward pass, in place in one
 * Lq×Lk matrix.
 */
export function headWeights(spec: AttentionSpec, i: number, control: RunControl = {}): Matrix {
  const setup = setUp(spec);
  const weights = zeros(setup.queries, setup.keys, setup.dtype);
  const { scores, modifier } = headScoring(spec, setup, i);
  for (let r0 = 0; r0 < weights.rows; r0 += ROW_BLOCK) {
    checkCancelled(control);
    const r1 = Math.min(weights.rows, r0 + ROW_BLOCK);
    scores.rows(weights, r0, r1);
    modifyScores(weights, weights, modifier, r0, r1);
    if (modifier.additive) addRows(weights, weights, modifier.additive, r0, r1);
    rowSoftmax(weights, weights, r0, r1);
  }
  return weights;
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
