// The checks shown to the user: every unmasked weight row sums to 1, 0 ≤ A ≤ 1, permuting X's
// rows permutes the output rows (where that holds), and what the run costs. The pieces are
// exported so every engine path (this reference, the WebAssembly one) judges the same way.
import type { AttentionSpec, Checks, DType, Matrix } from '../types';
import { type ForwardPass, forwardOutput, type RunControl } from './attention';
import { attentionCost, type AttentionShape } from './cost';
import { maxAbs, zeros } from './kernels';

const EPSILON = { float64: 2 ** -52, float32: 2 ** -23 } as const;
/** Rounding slack per summed term, well above what a correct sum accumulates. */
const SLACK = 8;

export function runChecks(spec: AttentionSpec, pass: ForwardPass, control: RunControl): Checks {
  let rowSumsMaxError = 0;
  let weightsInBounds = true;
  for (const { weights: A } of pass.heads) {
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
  const head = pass.heads[0];
  const permuted = permutationApplies(spec)
    ? forwardOutput({ ...spec, X: reversedRows(spec.X as Matrix) }, control)
    : undefined;
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
  /** Output of the run on `reversedRows(X)`, when `permutationApplies`. */
  permuted?: Matrix;
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
    const error = reversedRowsError(measured.output, measured.permuted);
    const size = Math.max(1, maxAbs(measured.output));
    checks.permutationMaxError = error;
    checks.permutationEquivariant = error <= SLACK * (shape.keys + (spec.X?.cols ?? 0)) * eps * size;
  }
  return checks;
}

/** Self-attention from X with nothing tied to positions: no masks, no causality, no PE. */
export function permutationApplies(spec: AttentionSpec): boolean {
  const { options } = spec;
  return (
    spec.X !== undefined &&
    spec.X.rows > 1 &&
    !spec.context && !spec.Q && !spec.K && !spec.V &&
    !spec.mask && !spec.padding && !options.causal &&
    !spec.PE && !options.sinusoidalPE
  );
}

/** X with its rows in reverse order: the permutation the check applies. */
export function reversedRows(X: Matrix): Matrix {
  const out = zeros(X.rows, X.cols, 'float64');
  for (let i = 0; i < X.rows; i++) out.data.set(X.data.subarray(i * X.cols, (i + 1) * X.cols), (X.rows - 1 - i) * X.cols);
  return out;
}

/** max |out(PX) − P out(X)| for P = row reversal. */
function reversedRowsError(output: Matrix, permuted: Matrix): number {
  let error = 0;
  const n = output.rows;
  const w = output.cols;
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < w; c++) {
      const diff = Math.abs(permuted.data[(n - 1 - i) * w + c] - output.data[i * w + c]);
      if (diff > error || Number.isNaN(diff)) error = diff;
    }
  }
  return error;
}
