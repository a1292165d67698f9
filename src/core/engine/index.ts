// The attention engine: pure TypeScript, float64 by default, float32 on request. The readable
// reference path; kernels.ts holds its loops.
import type { AttentionResult, AttentionSpec } from '../types';
import { forward, type ForwardPass, residual, type RunControl } from './attention';
import { backward } from './backward';
import { runChecks } from './checks';
import { compareGivenWeights, givenOnlyResult } from './given';

export { CancelledError, describeQuery, fullyMaskedWarning, residual, type RunControl } from './attention';
export { judge, permutationProbe, type Measured } from './checks';
export { compareGivenWeights, givenOnlyResult, maxAbsDifference } from './given';
export { attentionCost, type AttentionCost, type AttentionShape } from './cost';
export { sinusoidalPositionalEncoding } from './positional';

/**
 * Computes one problem, keeping every intermediate. Throws `CancelledError` when
 * `control.isCancelled()` turns true (checked between heads and row blocks), and a RangeError
 * naming the matrices when the spec's shapes do not fit (core/spec reports those first).
 */
export function runAttention(spec: AttentionSpec, control: RunControl = {}): AttentionResult {
  if (!spec.X && !spec.Q && spec.weights) return givenOnlyResult(spec);
  const started = performance.now();
  const pass = forward(spec, control);
  const result: AttentionResult = {
    dtype: pass.dtype,
    input: pass.input,
    heads: pass.heads,
    concat: pass.concat,
    output: pass.output,
    checks: runChecks(spec, pass, control),
    warnings: pass.warnings,
    elapsedMs: 0,
  };
  if (spec.options.residual) result.residual = residual(pass.input, pass.output);
  if (spec.options.gradients) result.gradients = backward(spec, pass, control);
  if (spec.options.decode) result.decode = beside(pass, forward({ ...spec, options: { ...spec.options, decode: undefined } }, control));
  compareGivenWeights(spec, result);
  result.elapsedMs = performance.now() - started;
  return result;
}

/** A decode step beside its full run: the step must equal the full output's last row. */
function beside(step: ForwardPass, full: ForwardPass): NonNullable<AttentionResult['decode']> {
  const width = step.output.cols;
  const last = (full.output.rows - 1) * width;
  let maxDifference = 0;
  for (let c = 0; c < width; c++) {
    const difference = Math.abs(step.output.data[c] - full.output.data[last + c]);
    if (!(difference <= maxDifference)) maxDifference = difference; // NaN stays visible
  }
  return { row: full.output.rows - 1, fullWeights: full.heads.map((head) => head.weights), maxDifference };
}
