// The checks shown to the user: every unmasked weight row sums to 1, 0 ≤ A ≤ 1, permuting X's
// rows permutes the output rows (where that holds), and what the run costs.
import type { AttentionSpec, Checks, Matrix } from '../types';
import { type ForwardPass, forward, type RunControl } from './attention';
import { attentionCost } from './cost';
import { maxAbs, zeros } from './kernels';

const EPSILON = { float64: 2 ** -52, float32: 2 ** -23 } as const;
/** Rounding slack per summed term, well above what a correct sum accumulates. */
const SLACK = 8;

export function runChecks(spec: AttentionSpec, pass: ForwardPass, control: RunControl): Checks {
  const eps = EPSILON[pass.dtype];
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
  const keys = pass.heads[0].weights.cols;
  const head = pass.heads[0];
  const cost = attentionCost({
    queries: head.Q.rows,
    keys,
    dModel: pass.input?.cols ?? 0,
    dK: head.Q.cols,
    dV: head.V.cols,
    heads: pass.heads.length,
    kvHeads: spec.options.kvHeads,
    dtype: pass.dtype,
    projections: pass.projections.Q.weights !== null,
    outputProjection: pass.WO !== undefined,
  });
  const checks: Checks = {
    rowSumsMaxError,
    rowsSumToOne: rowSumsMaxError <= SLACK * keys * eps,
    weightsInBounds,
    flops: cost.flops,
    attentionBytes: cost.attentionBytes,
  };
  if (permutationApplies(spec, pass)) {
    const error = permutationError(spec, pass.output, control);
    const size = Math.max(1, maxAbs(pass.output));
    checks.permutationMaxError = error;
    checks.permutationEquivariant = error <= SLACK * (keys + (pass.input?.cols ?? 0)) * eps * size;
  }
  return checks;
}

/** Self-attention from X with nothing tied to positions: no masks, no causality, no PE. */
function permutationApplies(spec: AttentionSpec, pass: ForwardPass): boolean {
  const { options } = spec;
  return (
    pass.input !== undefined &&
    pass.input.rows > 1 &&
    !spec.context && !spec.Q && !spec.K && !spec.V &&
    !spec.mask && !spec.padding && !options.causal &&
    !spec.PE && !options.sinusoidalPE
  );
}

/** Runs X with its rows reversed and returns max |out(PX) − P out(X)|. */
function permutationError(spec: AttentionSpec, output: Matrix, control: RunControl): number {
  const X = spec.X as Matrix;
  const reversed = zeros(X.rows, X.cols, 'float64');
  for (let i = 0; i < X.rows; i++) reversed.data.set(X.data.subarray(i * X.cols, (i + 1) * X.cols), (X.rows - 1 - i) * X.cols);
  const permuted = forward({ ...spec, X: reversed, tokens: undefined }, control).output;
  let error = 0;
  const n = output.rows;
  const w = output.cols;
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < w; c++) {
      error = Math.max(error, Math.abs(permuted.data[(n - 1 - i) * w + c] - output.data[i * w + c]));
    }
  }
  return error;
}
