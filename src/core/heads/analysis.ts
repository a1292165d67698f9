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
import { dtypeOf, StackPass, type Weights } from './kernels';
import { HEAD_SCORE_NAMES, type HeadScoreValues, positionScores, type ScoreGrids, tokenMatches, withEntropy } from './scores';
import type { AttentionStack } from './stack';

export interface StackAnalysis {
  scores: ScoreGrids;
  /** R [n × n] row-major (row: output position, column: input token), in the heads' dtype; null for cross-attention. */
  rollout: Float32Array | Float64Array | null;
}

export interface AnalysisControl extends RunControl {
  /** At most this many heads per run on the threads (default: as many as a set of slots holds, kernels.ts SET_BYTES). */
  headsPerGroup?: number;
}

/**
 * `control.isCancelled` is checked between groups of heads (then CancelledError is thrown). A
 * group's heads are asked for (a model run computes a layer's at once: `headGroups`) and copied in
 * while the threads read the group before; the scores summed here are read from them at once, as
 * a model run's arrays are only lent.
 */
export async function analyseStack(stack: AttentionStack, control: AnalysisControl = {}): Promise<StackAnalysis> {
  const { layerCount, headCount, queryCount: queries, keyCount: keys } = stack;
  const matches = stack.tokenIds && tokenMatches(stack.tokenIds);
  const perHead: Promise<HeadScoreValues>[][] = Array.from({ length: layerCount }, () => []);
  // Made from the first heads given: their dtype is the analysis's.
  let pass: StackPass | undefined;
  const passFor = (heads: Weights[]): StackPass =>
    (pass ??= new StackPass(queries, keys, layerCount, headCount, dtypeOf(heads), {
      rollout: queries === keys,
      lowerTriangular: stack.lowerTriangular,
      headsPerGroup: control.headsPerGroup,
    }));
  const add = async (layer: number, first: number, heads: Weights[]): Promise<void> => {
    const current = passFor(heads);
    for (let at = 0; at < heads.length; at += current.group) {
      if (control.isCancelled?.()) throw new CancelledError();
      const group = heads.slice(at, at + current.group);
      const { results } = await current.addHeads(group, first + at);
      group.forEach((weights, k) => {
        const scores = positionScores(weights, queries, keys, matches);
        perHead[layer][first + at + k] = results.then((entropies) => withEntropy(scores, entropies[k], queries));
      });
    }
  };
  let eachGroup = stack.headGroups?.bind(stack);
  if (!eachGroup) {
    // Heads asked for a group at a time, the first one once (a stack may compute it) to make the pass.
    const firstHead = stack.weights(0, 0);
    const { group } = passFor([firstHead]);
    eachGroup = async (layer, use) => {
      for (let first = 0; first < headCount; first += group) {
        await use(first, Array.from({ length: Math.min(group, headCount - first) }, (_, k) => (layer === 0 && first + k === 0 ? firstHead : stack.weights(layer, first + k))));
      }
    };
  }
  try {
    for (let layer = 0; layer < layerCount; layer++) await eachGroup(layer, (first, heads) => add(layer, first, heads));
    const values = await Promise.all(perHead.map((row) => Promise.all(row)));
    const scores = Object.fromEntries(HEAD_SCORE_NAMES.map((name) => [name, grid(layerCount, headCount, (l, h) => values[l][h][name])])) as ScoreGrids;
    return { scores, rollout: pass?.rollout() ?? null };
  } finally {
    await pass?.release();
  }
}

/** The stack's attention flow [n × n]; a RangeError for cross-attention or past the size limit. */
export function stackFlow(stack: AttentionStack): Float64Array {
  if (stack.queryCount !== stack.keyCount) throw new RangeError('attention flow needs self-attention (as many keys as queries)');
  return attentionFlow(headMeans(stack), stack.queryCount);
}

/** Each layer's mean over heads [n × n], layer 0 first: what attention flow takes. */
export function headMeans(stack: AttentionStack): Float64Array[] {
  return Array.from({ length: stack.layerCount }, (_, layer) => layerMean(stack, layer));
}

/** A layer's mean over its heads [queries × keys], in float64. */
export function layerMean(stack: AttentionStack, layer: number): Float64Array {
  const mean = new Float64Array(stack.queryCount * stack.keyCount);
  for (let head = 0; head < stack.headCount; head++) {
    addShare(mean, stack.weights(layer, head), stack.headCount);
  }
  return mean;
}

/** mean += weights / heads. */
function addShare(mean: Float64Array, weights: ArrayLike<number>, heads: number): void {
  for (let k = 0; k < mean.length; k++) mean[k] += weights[k] / heads;
}
