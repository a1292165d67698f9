// The attention engine: pure TypeScript, float64 by default, float32 on request. The readable
// reference path; kernels.ts holds its loops.
import type { AttentionResult, AttentionSpec } from '../types';
import { forward, residual, type RunControl } from './attention';
import { backward } from './backward';
import { runChecks } from './checks';

export { CancelledError, describeQuery, fullyMaskedWarning, residual, type RunControl } from './attention';
export { judge, permutationProbe, type Measured } from './checks';
export { attentionCost, type AttentionCost, type AttentionShape } from './cost';
export { sinusoidalPositionalEncoding } from './positional';

/**
 * Computes one problem, keeping every intermediate. Throws `CancelledError` when
 * `control.isCancelled()` turns true (checked between heads and row blocks), and a RangeError
 * naming the matrices when the spec's shapes do not fit (core/spec reports those first).
 */
export function runAttention(spec: AttentionSpec, control: RunControl = {}): AttentionResult {
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
  result.elapsedMs = performance.now() - started;
  return result;
}
