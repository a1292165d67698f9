// The reference's checks (core/engine/checks.ts) on a fast pass: the row sums come from the
// attention kernel (summed while each row was in cache), and the permutation check reruns on the
// output-only path, so checking a 4096-token run costs no n×n pass in JavaScript.
import type { AttentionSpec, Checks, Matrix } from '../../types';
import type { FastForward } from './index';
import { planCost } from './plan';

// As in core/engine/checks.ts.
const EPSILON = { float64: 2 ** -52, float32: 2 ** -23 } as const;
const SLACK = 8;

/** Output of the forward pass of another spec (the permuted input). */
export type OutputOf = (spec: AttentionSpec) => Promise<Matrix | undefined>;

export async function fastChecks(spec: AttentionSpec, pass: FastForward, outputOf: OutputOf): Promise<Checks> {
  const dtype = spec.options.dtype;
  const eps = EPSILON[dtype];
  let rowSumsMaxError = 0;
  for (const head of pass.plan.heads) {
    for (const sum of pass.arena.view(head.rowSums).data) {
      if (sum !== 0) rowSumsMaxError = Math.max(rowSumsMaxError, Math.abs(sum - 1)); // 0: fully masked
    }
  }
  const keys = pass.heads[0].K.rows;
  const cost = planCost(spec, pass.plan);
  const checks: Checks = {
    rowSumsMaxError,
    rowsSumToOne: rowSumsMaxError <= SLACK * keys * eps,
    // Softmax rows are in [0, 1] by construction (x − max ≤ 0, sum ≥ 1); only NaN escapes, and a
    // NaN weight makes its row sum NaN.
    weightsInBounds: !Number.isNaN(rowSumsMaxError),
    flops: cost.flops,
    attentionBytes: cost.attentionBytes,
  };
  if (permutationApplies(spec, pass)) {
    const error = await permutationError(spec, pass.output, outputOf);
    let size = 1;
    for (const v of pass.output.data) size = Math.max(size, Math.abs(v));
    checks.permutationMaxError = error;
    checks.permutationEquivariant = error <= SLACK * (keys + (pass.input?.cols ?? 0)) * eps * size;
  }
  return checks;
}

function permutationApplies(spec: AttentionSpec, pass: FastForward): boolean {
  const { options } = spec;
  return (
    pass.input !== undefined &&
    pass.input.rows > 1 &&
    !spec.context && !spec.Q && !spec.K && !spec.V &&
    !spec.mask && !spec.padding && !options.causal &&
    !spec.PE && !options.sinusoidalPE
  );
}

/** Runs X with its rows reversed (output only) and returns max |out(PX) − P out(X)|. */
async function permutationError(spec: AttentionSpec, output: Matrix, outputOf: OutputOf): Promise<number> {
  const X = spec.X as Matrix;
  const reversed: Matrix = { rows: X.rows, cols: X.cols, data: new Float64Array(X.data.length) };
  for (let i = 0; i < X.rows; i++) reversed.data.set(X.data.subarray(i * X.cols, (i + 1) * X.cols), (X.rows - 1 - i) * X.cols);
  const permuted = await outputOf({ ...spec, X: reversed, tokens: undefined });
  if (!permuted) return NaN;
  let error = 0;
  const n = output.rows;
  const w = output.cols;
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < w; c++) error = Math.max(error, Math.abs(permuted.data[(n - 1 - i) * w + c] - output.data[i * w + c]));
  }
  return error;
}
