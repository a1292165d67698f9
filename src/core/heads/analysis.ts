// The analyses of one AttentionStack in a single pass over its heads (a model run may compute
// each head on demand, so each is asked for once): the six head scores per layer × head, and the
// attention rollout, folded in layer by layer so no more than one layer's sum is held. The n²
// work (entropy's logarithms, the layer sums and the rollout's products) runs in WebAssembly SIMD
// (kernels.ts); the scores that read O(n) cells of a head are summed here.
// Attention flow (flow.ts) and comparisons (compare.ts) are asked for separately.
// Pure functions: no `vscode` import.
import { CancelledError, type RunControl } from '../engine';
import { grid } from './compare';
import { attentionFlow } from './flow';
import { StackPass } from './kernels';
import { HEAD_SCORE_NAMES, type HeadScoreValues, type ScoreGrids, scoresOfHead, tokenMatches } from './scores';
import type { AttentionStack } from './stack';

export interface StackAnalysis {
  scores: ScoreGrids;
  /** R [n × n] row-major (row: output position, column: input token); null for cross-attention. */
  rollout: Float64Array | null;
}

/** `control.isCancelled` is checked between heads (then CancelledError is thrown). */
export function analyseStack(stack: AttentionStack, control: RunControl = {}): StackAnalysis {
  const { layerCount, headCount, queryCount: queries, keyCount: keys } = stack;
  const matches = stack.tokenIds && tokenMatches(stack.tokenIds);
  const pass = new StackPass(queries, keys, layerCount, headCount, queries === keys);
  const perHead: HeadScoreValues[][] = [];
  for (let layer = 0; layer < layerCount; layer++) {
    const row: HeadScoreValues[] = [];
    for (let head = 0; head < headCount; head++) {
      if (control.isCancelled?.()) throw new CancelledError();
      const weights = stack.weights(layer, head);
      row.push(scoresOfHead(weights, queries, keys, pass.addHead(weights, head), matches));
    }
    perHead.push(row);
    pass.foldLayer();
  }
  const scores = Object.fromEntries(HEAD_SCORE_NAMES.map((name) => [name, grid(layerCount, headCount, (l, h) => perHead[l][h][name])])) as ScoreGrids;
  return { scores, rollout: pass.rollout() };
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
