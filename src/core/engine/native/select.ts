// Which backend runs a problem: ONNX Runtime where it is here and the measurements say it wins
// (NATIVE_FROM_FLOPS: float32 output-only runs), the WebAssembly fast path otherwise (which hands small problems and the
// cases it does not cover to the reference engine). ATTENTION_LENS_BACKEND=native|wasm forces one
// (tests, the bench). A native module that cannot load (or a native run that fails) falls back
// silently: the result says why (the worker logs it once; the status bar shows a hint).
import type { AttentionResult, AttentionSpec, DType, OutputOnlyResult } from '../../types';
import { CancelledError, checkCancelled } from '../attention';
import { attentionCost, type AttentionShape } from '../cost';
import { bytesOf, MAX_BYTES } from '../fast/arena';
import { attentionOutputFast, type FastControl, referenceOnly, runAttentionFast } from '../fast/index';
import { prepareNative, type NativeRun } from './attention';
import { attentionOutputNative, runAttentionNative } from './index';
import { backendChoice, nativeRuntime } from './runtime';

/**
 * From how many FLOPs ONNX Runtime runs a problem faster than the WebAssembly kernels, per case
 * class and dtype (measured interleaved on this project's 2-core machine, docs/native.md):
 * - output only, float32: 5–10× faster from 1024 tokens on (nothing n×n leaves the graph);
 * - every step kept (the panel's runs), float32: 3× slower — fetching the n×n steps out of ONNX
 *   Runtime (copied into fresh memory) costs more than the WebAssembly kernels' whole run, whose
 *   results are views on their own memory;
 * - float64: 12–18× slower either way (ONNX Runtime's float64 products are not its fast kernels).
 */
const NATIVE_FROM_FLOPS: Record<'outputOnly' | 'materialized', Record<DType, number>> = {
  outputOnly: { float32: 2e6, float64: Infinity },
  materialized: { float32: Infinity, float64: Infinity },
};
/** The n×n memory an output-only graph may hold (its steps stay inside ONNX Runtime). */
const MAX_OUTPUT_ONLY_BYTES = 2 ** 30;

/** The native run of a spec when it should take it, else why not (undefined: no native attempt was wanted). */
function nativeRun(spec: AttentionSpec, materialize: boolean): { ort: Ort; run: NativeRun } | { fallback?: string } {
  const choice = backendChoice();
  if (choice === 'wasm' || referenceOnly(spec) !== undefined || (!spec.X && !spec.Q)) return {};
  // Shapes that do not fit, or that measurement leaves to the WebAssembly kernels, are turned
  // down before the mask is built (the reference engine reports the misfits).
  const wins = (shape: AttentionShape): boolean => choice === 'native' || attentionCost(shape).flops >= NATIVE_FROM_FLOPS[materialize ? 'materialized' : 'outputOnly'][spec.options.dtype];
  // The graph keeps its n×n steps (4 per head) even when only the output leaves it: beyond what
  // the fast path can keep, the WebAssembly kernels run (materialised: they say so, and how to get
  // the output alone; output only: their online softmax needs O(n·d) memory).
  const fits = (shape: AttentionShape): boolean => 4 * shape.heads * shape.queries * shape.keys * bytesOf(spec.options.dtype) <= (materialize ? MAX_BYTES : MAX_OUTPUT_ONLY_BYTES);
  const run = prepareNative(spec, materialize, (shape) => wins(shape) && fits(shape));
  if (!run) return {};
  const runtime = nativeRuntime();
  if (runtime.ok) return { ort: runtime.ort, run };
  return { fallback: `the native backend (ONNX Runtime) is not available here: ${runtime.reason}` };
}

/** The backend `runAttentionOnBackend` (materialize) or `attentionOutputOnBackend` runs a spec on
 * (the bench prints it); 'wasm' includes the small problems it hands to the reference engine. */
export function backendFor(spec: AttentionSpec, materialize = true): 'onnxruntime' | 'wasm' {
  return 'ort' in nativeRun(spec, materialize) ? 'onnxruntime' : 'wasm';
}

/** A native run that failed (ONNX Runtime out of memory, a refused graph): the WebAssembly kernels take it. */
function failed(error: unknown): string {
  return `the native backend (ONNX Runtime) failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
}

type Ort = typeof import('onnxruntime-node');

/**
 * `native` on ONNX Runtime when selected, else (or when it fails) `portable` on the WebAssembly
 * kernels; returns the result and, when the native one was wanted but did not run, why. A native
 * run cannot be interrupted: a cancellation meanwhile drops its result.
 */
async function onBackend<T>(
  spec: AttentionSpec,
  control: FastControl,
  materialize: boolean,
  native: (ort: Ort, run: NativeRun) => Promise<T>,
  portable: () => Promise<T>,
): Promise<{ result: T; fallback?: string }> {
  checkCancelled(control);
  const chosen = nativeRun(spec, materialize);
  let fallback = 'fallback' in chosen ? chosen.fallback : undefined;
  if ('ort' in chosen) {
    try {
      const result = await native(chosen.ort, chosen.run);
      if (control.cancelFlag && Atomics.load(control.cancelFlag, 0) !== 0) throw new CancelledError();
      return { result };
    } catch (error) {
      if (error instanceof CancelledError) throw error;
      fallback = failed(error);
    }
  }
  return { result: await portable(), fallback };
}

/** Drop-in for `runAttentionFast`: every step of every head on the backend that wins here. */
export async function runAttentionOnBackend(spec: AttentionSpec, control: FastControl = {}): Promise<AttentionResult> {
  const { result, fallback } = await onBackend(spec, control, true, (ort, run) => runAttentionNative(ort, spec, run), () => runAttentionFast(spec, control));
  if (fallback && result.backend) result.backend.fallback = fallback;
  return result;
}

/** Drop-in for `attentionOutputFast`, on the backend that wins here (an output-only result has no place for a fallback's reason). */
export async function attentionOutputOnBackend(spec: AttentionSpec, control: FastControl = {}): Promise<OutputOnlyResult> {
  return (await onBackend(spec, control, false, (ort, run) => attentionOutputNative(ort, spec, run), () => attentionOutputFast(spec, control))).result;
}
