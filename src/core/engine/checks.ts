// The checks shown to the user: every unmasked weight row sums to 1, 0 ≤ A ≤ 1, permuting X's
// rows permutes the output rows (where that holds), and what the run costs. The pieces are
// exported so every engine path (this reference, the WebAssembly one) judges the same way.
import type { AttentionSpec, Checks, DType, Matrix } from '../types';
import { type ForwardPass, forwardOutput, type RunControl } from './attention';
import { attentionCost, type AttentionShape } from './cost';
import { maxAbs, zeros } from './kernels';
import { positional } from './variants';

const EPSILON = { float64: 2 ** -52, float32: 2 ** -23 } as const;
/** Rounding slack per summed term, well above what a correct sum accumulates. */
const SLACK = 8;
/**
 * Query rows the permutation check compares: all of them up to this many, else this many spread
 * over the sequence. The rerun then projects K and V of every row but attends from these rows
 * only: 8 heads of 1024 tokens with d_model 512 cost 174 ms with the checks' whole second run,
 * against 78 without any checks.
 */
const PERMUTATION_ROWS = 64;

/** max |Σ_j A_ij − 1| over the rows that are not all 0 (fully masked), and whether 0 ≤ A ≤ 1, over every head. */
export function weightRowChecks(weights: readonly Matrix[]): { rowSumsMaxError: number; weightsInBounds: boolean } {
  let rowSumsMaxError = 0;
  let weightsInBounds = true;
  for (const A of weights) {
    for (let i = 0; i < A.rows; i++) {
      let sum = 0;
      for (let j = 0; j < A.cols; j++) {
        const a = A.data[i * A.cols + j];
        if (!(a >= 0 && a <= 1)) weightsInBounds = false;
        sum += a;
      }
      if (sum !== 0) rowSumsMaxError = Math.max(rowSumsMaxError, Math.abs(sum - 1)); // 0: fully masked
    }
  }
  return { rowSumsMaxError, weightsInBounds };
}

export function runChecks(spec: AttentionSpec, pass: ForwardPass, control: RunControl): Checks {
  const { rowSumsMaxError, weightsInBounds } = weightRowChecks(pass.heads.map((head) => head.weights));
  const head = pass.heads[0];
  const probe = permutationProbe(spec);
  const permuted = probe && { rows: probe.rows, output: forwardOutput(probe.spec, control) };
  return judge(
    spec,
    {
      queries: head.Q.rows,
      keys: head.K.rows,
      dModel: pass.input?.cols ?? 0,
      dK: head.Q.cols,
      dV: head.V.cols,
      heads: pass.heads.length,
      kvHeads: spec.options.kvHeads,
      dtype: pass.dtype,
      projections: pass.projections.Q.weights !== null,
      outputProjection: pass.WO !== undefined,
    },
    { rowSumsMaxError, weightsInBounds, output: pass.output, permuted },
  );
}

export interface Measured {
  rowSumsMaxError: number;
  weightsInBounds: boolean;
  output: Matrix;
  /** Output of the `permutationProbe` run (its row k must equal `output`'s row `rows[k]`). */
  permuted?: { rows: number[]; output: Matrix };
}

/** Turns measured errors into verdicts with tolerances scaled to the dtype and sizes. */
export function judge(spec: AttentionSpec, shape: AttentionShape, measured: Measured): Checks {
  const eps = EPSILON[shape.dtype as DType];
  const cost = attentionCost(shape);
  const checks: Checks = {
    rowSumsMaxError: measured.rowSumsMaxError,
    rowsSumToOne: measured.rowSumsMaxError <= SLACK * shape.keys * eps,
    weightsInBounds: measured.weightsInBounds,
    flops: cost.flops,
    attentionBytes: cost.attentionBytes,
  };
  if (measured.permuted) {
    const error = permutedRowsError(measured.output, measured.permuted);
    const size = Math.max(1, maxAbs(measured.output));
    checks.permutationMaxError = error;
    checks.permutationEquivariant = error <= SLACK * (shape.keys + (spec.X?.cols ?? 0)) * eps * size;
    checks.permutationRowsChecked = measured.permuted.rows.length;
  }
  return checks;
}

/** Self-attention from X with nothing tied to positions: no masks, no causality, no PE. */
function permutationApplies(spec: AttentionSpec): boolean {
  const { options } = spec;
  return (
    spec.X !== undefined &&
    spec.X.rows > 1 &&
    !spec.context && !spec.Q && !spec.K && !spec.V &&
    !spec.mask && !spec.padding && !options.causal &&
    !spec.PE && !options.sinusoidalPE && !positional(spec)
  );
}

/**
 * The rerun the permutation check compares with the run: the same attention with X's rows
 * reversed (keys and values from every reversed row), from PERMUTATION_ROWS of those rows at most,
 * the first and last among them; `rows[k]` is the row of the original output that its output row
 * k must equal. Undefined where permuting X need not permute the output (`permutationApplies`).
 */
export function permutationProbe(spec: AttentionSpec): { spec: AttentionSpec; rows: number[] } | undefined {
  if (!permutationApplies(spec)) return undefined;
  const X = spec.X as Matrix;
  const n = X.rows;
  const reversed = zeros(n, X.cols, 'float64');
  for (let i = 0; i < n; i++) reversed.data.set(X.data.subarray(i * X.cols, (i + 1) * X.cols), (n - 1 - i) * X.cols);
  const probe = { ...spec, tokens: undefined, keyTokens: undefined };
  if (n <= PERMUTATION_ROWS) return { spec: { ...probe, X: reversed }, rows: Array.from({ length: n }, (_, k) => n - 1 - k) };
  const picked = Array.from({ length: PERMUTATION_ROWS }, (_, k) => Math.round((k * (n - 1)) / (PERMUTATION_ROWS - 1)));
  const queries = zeros(picked.length, X.cols, 'float64');
  picked.forEach((row, k) => queries.data.set(reversed.data.subarray(row * X.cols, (row + 1) * X.cols), k * X.cols));
  return { spec: { ...probe, X: queries, context: reversed }, rows: picked.map((row) => n - 1 - row) };
}

/** max |out(PX)[k] − out(X)[rows[k]]| over the probe's rows. */
function permutedRowsError(output: Matrix, permuted: { rows: number[]; output: Matrix }): number {
  let error = 0;
  const w = output.cols;
  permuted.rows.forEach((row, k) => {
    for (let c = 0; c < w; c++) {
      const diff = Math.abs(permuted.output.data[k * w + c] - output.data[row * w + c]);
      if (diff > error || Number.isNaN(diff)) error = diff;
    }
  });
  return error;
}
