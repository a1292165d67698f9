// The attention engine: pure TypeScript, float64 by default, float32 on request. The readable
// reference path; kernels.ts holds its loops.
import type { AttentionResult, AttentionSpec, Matrix } from '../types';
import { forward, type RunControl } from './attention';
import { backward } from './backward';
import { runChecks } from './checks';
import { addRows, zeros } from './kernels';
import { requireShape } from './masks';

export { CancelledError, type RunControl } from './attention';
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

/** E' = E + ΔE: the input plus the attention output. */
function residual(input: Matrix | undefined, output: Matrix): Matrix {
  if (!input) throw new RangeError('the residual E + ΔE needs the input X');
  requireShape(output, input.rows, input.cols, 'the output (for the residual)');
  const out = zeros(input.rows, input.cols, output.data instanceof Float32Array ? 'float32' : 'float64');
  addRows(out, input, output);
  return out;
}
