// How a generated token is chosen from one position's logits: greedy (the largest logit, a tie to
// the lowest id), or sampled as transformers' generate samples: the logits divided by the
// temperature, then top-k, then top-p (the smallest set of the most probable tokens whose
// probabilities reach p), then one draw from what is left, renormalised. Pure functions over a
// logits row; the draws come from pure-rand's seeded generator, so the same seed gives the same
// tokens. The encoder–decoder runs choose their target tokens here too.
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

export interface SamplingOptions {
  /** Divides the logits before the softmax: below 1 sharper, above 1 flatter. */
  temperature: number;
  /** Keep only the k most probable tokens (absent or 0: all, as transformers reads top_k 0). */
  topK?: number;
  /** Keep the smallest set of the most probable tokens whose probabilities sum to at least p (absent: all). */
  topP?: number;
  /** The generator's seed: the same seed, model and prompt give the same tokens. */
  seed: number;
}

/** The ids of the `k` largest logits, largest first, a tie to the lowest id (one pass, no sort of the vocabulary). */
export function topIds(logits: ArrayLike<number>, k: number): number[] {
  const ids: number[] = [];
  for (let id = 0; id < logits.length; id++) {
    const v = logits[id];
    if (Number.isNaN(v)) continue;
    if (ids.length === k && !(v > logits[ids[k - 1]])) continue;
    // Insert after every kept id whose logit is at least v: an equal logit seen earlier has the lower id.
    let at = Math.min(ids.length, k - 1);
    while (at > 0 && logits[ids[at - 1]] < v) at--;
    if (ids.length === k) ids.pop();
    ids.splice(at, 0, id);
  }
  return ids;
}

/** The largest logit's id, a tie to the lowest id. */
export function greedyToken(logits: ArrayLike<number>): number {
  const [id] = topIds(logits, 1);
  if (id === undefined) throw new RangeError('the logits are all NaN: no token can be chosen');
  return id;
}

/** The softmax of `logits` at ids `ids`: each one's probability over the whole row. */
export function probabilitiesOf(logits: ArrayLike<number>, ids: readonly number[], temperature = 1): number[] {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i];
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp((logits[i] - max) / temperature);
  return ids.map((id) => Math.exp((logits[id] - max) / temperature) / sum);
}

/** One line for options a run cannot sample with; undefined when they are fine. */
export function samplingProblem(s: SamplingOptions): string | undefined {
  if (!(Number.isFinite(s.temperature) && s.temperature > 0)) return `the temperature must be a number above 0, not ${s.temperature} (for the most probable token at each step, do not sample)`;
  if (s.topK !== undefined && !(Number.isInteger(s.topK) && s.topK >= 0)) return `top-k must be a whole number of at least 0 (0: no top-k), not ${s.topK}`;
  if (s.topP !== undefined && !(s.topP > 0 && s.topP <= 1)) return `top-p must be above 0 and at most 1, not ${s.topP}`;
  if (!Number.isSafeInteger(s.seed)) return `the seed must be a whole number, not ${s.seed}`;
  return undefined;
}

/**
 * The tokens sampling may draw from `logits` and each one's probability of being drawn, most
 * probable first: temperature, then top-k, then top-p, renormalised (transformers' warpers in
 * that order; top-p keeps at least one token).
 */
export function samplingSet(logits: ArrayLike<number>, sampling: SamplingOptions): { ids: number[]; probabilities: number[] } {
  const s = sampling.topK === 0 ? { ...sampling, topK: undefined } : sampling;
  if (s.topK === undefined && (s.topP === undefined || s.topP >= 1)) {
    // Nothing cut: every token in id order (no sort of the vocabulary).
    const ids = Array.from({ length: logits.length }, (_, id) => id).filter((id) => !Number.isNaN(logits[id]));
    return { ids, probabilities: probabilitiesOf(logits, ids, s.temperature) };
  }
  const probabilityOf = (ids: number[]) => probabilitiesOf(logits, ids, s.temperature);
  let k = Math.min(s.topK ?? TOP_P_FIRST, logits.length);
  let ids = topIds(logits, k);
  // Top-p alone: more of the most probable tokens until they reach p (or all of them).
  while (s.topK === undefined && k < logits.length && probabilityOf(ids).reduce((a, b) => a + b, 0) < (s.topP as number)) ids = topIds(logits, (k = Math.min(2 * k, logits.length)));
  // Over the tokens top-k kept, as transformers' top-p reads the logits top-k left; without top-k, over all.
  let probabilities = s.topK === undefined ? probabilityOf(ids) : normalised(probabilityOf(ids));
  if (s.topP !== undefined && s.topP < 1) {
    let sum = 0;
    let kept = 0;
    while (kept < ids.length && (kept === 0 || sum < s.topP)) sum += probabilities[kept++];
    ids = ids.slice(0, kept);
    probabilities = normalised(probabilities.slice(0, kept));
  }
  return { ids, probabilities };
}

/** Top-p alone first looks at this many of the most probable tokens, then twice as many… */
const TOP_P_FIRST = 64;

function normalised(values: number[]): number[] {
  const sum = values.reduce((a, b) => a + b, 0);
  return values.map((v) => v / sum);
}

/** The token of `logits` for a uniform draw u in [0, 1) under sampling `s`. */
export function sampledToken(logits: ArrayLike<number>, s: SamplingOptions, u: number): number {
  const { ids, probabilities } = samplingSet(logits, s);
  let cumulative = 0;
  for (let i = 0; i < ids.length; i++) {
    cumulative += probabilities[i];
    if (u < cumulative) return ids[i];
  }
  return ids[ids.length - 1]; // u within rounding of 1
}

/**
 * A run's token chooser: greedy without `sampling`, else seeded draws, one per call in order
 * (the generator's state is the chooser's own).
 */
export function tokenChooser(sampling: SamplingOptions | undefined): (logits: ArrayLike<number>) => number {
  if (!sampling) return greedyToken;
  const problem = samplingProblem(sampling);
  if (problem) throw new RangeError(problem);
  const rng = xoroshiro128plus(sampling.seed);
  return (logits) => sampledToken(logits, sampling, uniformFloat64(rng));
}
