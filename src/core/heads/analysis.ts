// The analyses of one AttentionStack in a single pass over its heads (a model run may compute
// each head on demand, so each is asked for once): the six head scores per layer × head, and the
// attention rollout, folded in layer by layer so no more than one layer's sum is held. The n²
// work (entropy's logarithms, the layer sums and the rollout's products) runs in WebAssembly SIMD
// on the fast path's compute threads (kernels.ts); the scores that read O(n) cells of a head are
// summed here.
// Attention flow (flow.ts) and comparisons (compare.ts) are asked for separately.
// Pure functions: no `vscode` import.
import { CancelledError, type RunControl } from '../engine';
import { grid } from './compare';
import { attentionFlow } from './flow';
import { dtypeOf, StackPass } from './kernels';
import { HEAD_SCORE_NAMES, type HeadScoreValues, type ScoreGrids, scoresOfHead, tokenMatches } from './scores';
import type { AttentionStack } from './stack';

export interface StackAnalysis {
  scores: ScoreGrids;
  /** R [n × n] row-major (row: output position, column: input token), in the heads' dtype; null for cross-attention. */
  rollout: Float32Array | Float64Array | null;
}

export interface AnalysisControl extends RunControl {
  /** At most this many heads per run on the threads (default: as many as 32 MiB of slots hold). */
  headsPerGroup?: number;
}

/**
 * `control.isCancelled` is checked between groups of heads (then CancelledError is thrown). A
 * group's heads are asked for (a model run computes them) and copied in while the threads read
 * the group before.
 */
export async function analyseStack(stack: AttentionStack, control: AnalysisControl = {}): Promise<StackAnalysis> {
  const { layerCount, headCount, queryCount: queries, keyCount: keys } = stack;
  const matches = stack.tokenIds && tokenMatches(stack.tokenIds);
  // The first head is asked for once (a model run computes it): its dtype is the analysis's.
  const firstHead = stack.weights(0, 0);
  const pass = new StackPass(queries, keys, layerCount, headCount, dtypeOf([firstHead]), queries === keys, control.headsPerGroup);
  try {
    const perHead: Promise<HeadScoreValues>[][] = [];
    for (let layer = 0; layer < layerCount; layer++) {
      const row: Promise<HeadScoreValues>[] = [];
      for (let first = 0; first < headCount; first += pass.group) {
        if (control.isCancelled?.()) throw new CancelledError();
        const heads = Array.from({ length: Math.min(pass.group, headCount - first) }, (_, k) => (layer === 0 && first + k === 0 ? firstHead : stack.weights(layer, first + k)));
        const { results } = await pass.addHeads(heads, first);
        row.push(...heads.map((weights, k) => results.then((entropies) => scoresOfHead(weights, queries, keys, entropies[k], matches))));
      }
      perHead.push(row);
    }
    const values = await Promise.all(perHead.map((row) => Promise.all(row)));
    const scores = Object.fromEntries(HEAD_SCORE_NAMES.map((name) => [name, grid(layerCount, headCount, (l, h) => values[l][h][name])])) as ScoreGrids;
    return { scores, rollout: pass.rollout() };
  } finally {
    await pass.release();
  }
}

/** The stack's attention flow [n × n]; a RangeError for cross-attention or past the size limit. */
export function stackFlow(stack: AttentionStack): Float64Array {
  if (stack.queryCount !== stack.keyCount) throw new RangeError('attention flow needs self-attention (as many keys as queries)');
  return attentionFlow(headMeans(stack), stack.queryCount);
}

/** Each layer's mean over heads [n × n], layer 0 first: what attention flow takes. */
export function headMeans(stack: AttentionStack): Float64Array[] {
  return Array.from({ length: stack.layerCount }, (_, layer) => {
    const mean = new Float64Array(stack.queryCount * stack.keyCount);
    for (let head = 0; head < stack.headCount; head++) {
      addShare(mean, stack.weights(layer, head), stack.headCount);
    }
    return mean;
  });
}

/** mean += weights / heads. */
function addShare(mean: Float64Array, weights: ArrayLike<number>, heads: number): void {
  for (let k = 0; k < mean.length; k++) mean[k] += weights[k] / heads;
}
