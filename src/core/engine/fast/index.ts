// The fast path: the same forward pass as the reference engine, computed by WebAssembly SIMD
// kernels on every core over one shared memory, results handed back as views on that memory.
//   runAttentionFast(spec)  ≡ runAttention(spec) (await it), every n×n step materialised; problems
//                           under 2 MFLOP go straight to the reference (quicker than the threads);
//   attentionOutputFast(spec): output only, online softmax, O(n·d) memory (n = 16384 fits).
// Covered: score scaled_dot and dot, from X (+ PE, sinusoidal) or context through whole or
// per-head W_Q/W_K/W_V (or none), or from precomputed Q/K/V; heads, kv_heads (GQA), W_O,
// boolean/additive masks, causal (both alignments), key padding, residual. The reference runs
// everything else: the other score functions, the backward pass (`gradients`) and every variant
// of engine/variants.ts (rope, temperature, softcap, alibi, window, segments, prefix, sinks, decode).
import type { AttentionResult, AttentionSpec, Checks, HeadResult, Matrix, OutputOnlyResult } from '../../types';
import { checkCancelled } from '../attention';
import { attentionCost, compareGivenWeights, fullyMaskedWarning, residual, runAttention, type RunControl } from '../index';
import { variantsOf } from '../variants';
import { Arena, MAX_BYTES } from './arena';

export { memoryBytesOf, SpareMemory } from './arena';
export { maxPoolFast } from './pooling';
import { fastChecks } from './checks';
import { planRun, planShape, writeAttn, type RunPlan } from './plan';
import { registerPoolTarget } from './pooling';
import { runPhasesHere, threadCount, threadPool } from './pool';

export interface FastForward {
  plan: RunPlan;
  arena: Arena;
  input?: Matrix;
  heads: HeadResult[];
  concat: Matrix;
  output: Matrix;
  warnings: string[];
}

/** Below this many FLOPs the reference engine answers before a trip to the threads would. */
const REFERENCE_BELOW_FLOPS = 2e6;

export interface FastControl extends RunControl {
  /** Problems smaller than this (FLOPs) run on the reference engine; default 2e6, 0: never. */
  referenceBelowFlops?: number;
  /**
   * An earlier fast result the caller no longer reads (e.g. the run this one replaces), or a
   * `SpareMemory`'s handle: its memory is reused (when large enough) and overwritten. Saves the
   * page faults of fresh n×n memory.
   */
  recycle?: { output: Matrix };
  /**
   * A shared flag (as the worker's requests carry): once `cancelFlag[0]` is non-zero the compute
   * threads stop within one share of a kernel call and the run rejects with CancelledError.
   * `isCancelled` is only consulted before the kernels start.
   */
  cancelFlag?: Int32Array;
}

/** Why the fast path leaves a spec to the reference engine, or undefined when it covers it. */
export function referenceOnly(spec: AttentionSpec): string | undefined {
  if (spec.options.score !== 'scaled_dot' && spec.options.score !== 'dot') return `score=${spec.options.score}`;
  // The variants (RoPE, ALiBi, windows, softcap…) are the reference engine's modifiers alone.
  const variants = variantsOf(spec.options);
  if (variants.length > 0 || spec.segments) return variants.concat(spec.segments ? ['segments'] : []).join(', ');
  if (spec.options.gradients) return 'gradients';
  return undefined;
}

/** Drop-in for `runAttention`: same result, computed by the fast kernels where they apply. */
export async function runAttentionFast(spec: AttentionSpec, control: FastControl = {}): Promise<AttentionResult> {
  const started = performance.now();
  checkCancelled(control); // a run cancelled while queued never starts
  if (!spec.X && !spec.Q) return runAttention(spec, control); // given weights only: nothing to compute
  const small = (plan: RunPlan): boolean => attentionCost(planShape(spec, plan)).flops < (control.referenceBelowFlops ?? REFERENCE_BELOW_FLOPS);
  const pass = referenceOnly(spec) === undefined ? await forwardFast(spec, true, { ...control, declines: small }) : undefined;
  if (!pass) return runAttention(spec, control);
  const checks = await fastChecks(spec, planShape(spec, pass.plan), pass.plan.heads.map((head) => pass.arena.view(head.rowSums)), pass.output, (probe) => probeOutput(probe, control.cancelFlag));
  return fastResult(spec, pass, checks, 'wasm', started);
}

/** A fast backend's forward pass as the reference's result: its checks, residual and given weights' comparison. */
export function fastResult(
  spec: AttentionSpec,
  pass: Pick<FastForward, 'input' | 'heads' | 'concat' | 'output' | 'warnings'>,
  checks: Checks,
  backend: NonNullable<AttentionResult['backend']>['name'],
  started: number,
): AttentionResult {
  const { input, heads, concat, output, warnings } = pass;
  const result: AttentionResult = { dtype: spec.options.dtype, input, heads, concat, output, checks, warnings, elapsedMs: 0, backend: { name: backend } };
  if (spec.options.residual) result.residual = residual(input, output);
  compareGivenWeights(spec, result);
  result.elapsedMs = performance.now() - started;
  return result;
}

/** The memory of the last permutation check's rerun, for the next one; taken while a check runs,
 * so a check running meanwhile takes fresh memory. */
let probeMemory: { output: Matrix } | undefined;

/**
 * The output of the permutation check's rerun (output-only: at most 64 rows, copied out) on the
 * memory of the previous rerun: its fresh pages cost ~18 ms of the check for 8 heads of 1024
 * tokens.
 */
async function probeOutput(probe: AttentionSpec, cancelFlag: Int32Array | undefined): Promise<Matrix | undefined> {
  const recycle = probeMemory;
  probeMemory = undefined;
  const pass = await forwardFast(probe, false, { cancelFlag, recycle });
  if (!pass) return undefined;
  const output = { rows: pass.output.rows, cols: pass.output.cols, data: Float64Array.from(pass.output.data) };
  probeMemory = { output: pass.output };
  return output;
}

/** Output (and residual) only, by online softmax: no n×n matrix is ever stored. */
export async function attentionOutputFast(spec: AttentionSpec, control: FastControl = {}): Promise<OutputOnlyResult> {
  const started = performance.now();
  const reason = referenceOnly(spec);
  if (reason) throw new RangeError(`the output-only path does not cover ${reason}`);
  const pass = await forwardFast(spec, false, control);
  if (!pass) {
    runAttention(spec); // throws the reference's message for the shapes that do not fit
    throw new RangeError('the output-only path cannot run this problem');
  }
  const out: OutputOnlyResult = { dtype: spec.options.dtype, concat: pass.concat, output: pass.output, warnings: pass.warnings, elapsedMs: 0 };
  if (spec.options.residual) out.residual = residual(pass.input, pass.output);
  out.elapsedMs = performance.now() - started;
  return out;
}

/**
 * A run planned, with its memory holding its inputs, ready for the threads' `plan.phases` (the
 * benchmark and tests run those phases themselves); undefined as for forwardFast.
 */
export function prepareRun(spec: AttentionSpec, materialize: boolean, options: Omit<ForwardOptions, 'cancelFlag'> = {}): { plan: RunPlan; arena: Arena } | undefined {
  const plan = planRun(spec, materialize, threadCount(), options.weightsOnly);
  if (!plan || options.declines?.(plan)) return undefined;
  if (plan.arena.totalBytes > MAX_BYTES) {
    const gib = (plan.arena.totalBytes / 2 ** 30).toFixed(1);
    throw new RangeError(`keeping every n×n step of this problem needs ${gib} GiB, more than WebAssembly can address (4 GiB): compute the output alone (\`attention-lens run --output-only\`)`);
  }
  const arena = new Arena(plan.arena, plan.dtype, options.recycle?.output);
  for (const { block, value } of plan.writes) arena.write(block, value);
  for (const head of plan.heads) {
    writeAttn(arena.buffer, head);
    arena.bytes(head.rowFlags).fill(0); // the kernels only mark fully masked rows
  }
  return { plan, arena };
}

export interface ForwardOptions extends Pick<FastControl, 'recycle' | 'cancelFlag'> {
  /** Of the n×n steps, keep the weights alone (planRun): the heads' scores, scaled and masked are absent. */
  weightsOnly?: boolean;
  /** Turns the plan down (the caller then runs the reference engine). */
  declines?: (plan: RunPlan) => boolean;
}

/**
 * The forward pass on the fast kernels (`materialize` false: output only), or undefined when the
 * spec's shapes do not fit (the reference engine then reports them) or `declines` the plan.
 */
export async function forwardFast(spec: AttentionSpec, materialize: boolean, options: ForwardOptions = {}): Promise<FastForward | undefined> {
  const prepared = prepareRun(spec, materialize, options);
  if (!prepared) return undefined;
  await threadPool().run(prepared.arena.memory, prepared.plan.phases, options.cancelFlag);
  return ranForward(spec, prepared);
}

/**
 * forwardFast on this thread, synchronously, for a run small enough to wait for (one head's
 * weights that an AttentionStack's `weights` recomputes: 1024 tokens in ~10 ms here, where the
 * reference engine's loops took 126–270 ms). Not cancellable.
 */
export function forwardFastHere(spec: AttentionSpec, materialize: boolean, options: Omit<ForwardOptions, 'cancelFlag'> = {}): FastForward | undefined {
  const prepared = prepareRun(spec, materialize, options);
  if (!prepared) return undefined;
  runPhasesHere(prepared.arena.memory, prepared.plan.phases);
  return ranForward(spec, prepared);
}

/** A run's results as views on its memory, once its phases ran. */
function ranForward(spec: AttentionSpec, { plan, arena }: { plan: RunPlan; arena: Arena }): FastForward {
  if (plan.poolScratch) registerPoolTarget({ memory: arena.memory, dtype: plan.dtype, ...plan.poolScratch });
  const mask = plan.mask ? arena.view(plan.mask) : null;
  const warnings: string[] = [];
  const heads = plan.heads.map((head, i): HeadResult => {
    arena.bytes(head.rowFlags).forEach((flag, row) => {
      if (flag) warnings.push(fullyMaskedWarning(spec, row, i));
    });
    const square = head.scores && arena.view(head.scores);
    const scaled = head.scaled ? arena.view(head.scaled) : square;
    return {
      Q: arena.view(head.Q),
      K: arena.view(head.K),
      V: arena.view(head.V),
      scores: square as Matrix,
      scaled: scaled as Matrix,
      mask,
      masked: head.masked ? arena.view(head.masked) : (scaled as Matrix), // nothing added: the same numbers
      weights: (head.weights && arena.view(head.weights)) as Matrix,
      output: arena.view(head.output),
      kvHead: head.kvHead,
    };
  });
  return {
    plan,
    arena,
    input: plan.input && arena.view(plan.input),
    heads,
    concat: arena.view(plan.concat),
    output: arena.view(plan.output),
    warnings,
  };
}

