// The native backend's answers in the engine's result shapes: the same AttentionResult and
// OutputOnlyResult as the WebAssembly fast path, with the same checks (row sums from the graph, the
// permutation check rerun on the output-only graph).
import type * as Ort from 'onnxruntime-node';
import type { AttentionResult, AttentionSpec, Matrix, OutputOnlyResult } from '../../types';
import { residual } from '../index';
import { fastChecks } from '../fast/checks';
import { fastResult } from '../fast/index';
import { forwardNative, prepareNative, type NativeRun } from './attention';

/** Every step of every head on ONNX Runtime, for a run prepared with `materialize`. */
export async function runAttentionNative(ort: typeof Ort, spec: AttentionSpec, run: NativeRun): Promise<AttentionResult> {
  const started = performance.now();
  const pass = await forwardNative(ort, spec, run);
  const probeOutput = async (probe: AttentionSpec): Promise<Matrix | undefined> => {
    const probeRun = prepareNative(probe, false);
    return probeRun && (await forwardNative(ort, probe, probeRun)).output;
  };
  return fastResult(spec, pass, await fastChecks(spec, pass.shape, pass.rowSums, pass.output, probeOutput), 'onnxruntime', started);
}

/** The output alone on ONNX Runtime (no n×n matrix leaves the graph), for a run prepared without `materialize`. */
export async function attentionOutputNative(ort: typeof Ort, spec: AttentionSpec, run: NativeRun): Promise<OutputOnlyResult> {
  const started = performance.now();
  const pass = await forwardNative(ort, spec, run);
  const out: OutputOnlyResult = { dtype: spec.options.dtype, concat: pass.concat, output: pass.output, warnings: pass.warnings, elapsedMs: 0 };
  if (spec.options.residual) out.residual = residual(pass.input, pass.output);
  out.elapsedMs = performance.now() - started;
  return out;
}
