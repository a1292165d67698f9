// What each head does, as numbers: the six head scores of issue 27, exactly as defined there
// (docs/analysis.md). A is one head's attention [n × n], t the token ids, positions 0-based:
//   previous_token  = mean over i = 1…n−1 of A[i][i−1]
//   duplicate_token = mean over queries i with an earlier equal token of Σ_{j<i, t_j = t_i} A[i][j]
//   induction       = mean over queries i with some 1 ≤ j < i, t_{j−1} = t_i, of Σ over those j of A[i][j]
//   first_token     = mean over i of A[i][0]
//   entropy         = mean over i of −Σ_j A[i][j]·ln A[i][j] (nats, 0·ln 0 = 0)
//   local           = mean over i of Σ_{|i−j| ≤ 2} A[i][j]
// A score no query qualifies for is null, never 0 or NaN. Pure functions: no `vscode` import.

export const HEAD_SCORE_NAMES = ['previous_token', 'duplicate_token', 'induction', 'first_token', 'entropy', 'local'] as const;
export type HeadScoreName = (typeof HEAD_SCORE_NAMES)[number];

/** One head's scores. */
export type HeadScoreValues = Record<HeadScoreName, number | null>;

/** Per score, [layer][head]; null where no query qualifies. */
export type ScoreGrids = Record<HeadScoreName, (number | null)[][]>;

/** Keys within this distance of the query count as local. */
export const LOCAL_RADIUS = 2;

/**
 * The keys each query sums over for the two scores that compare tokens, from the ids alone (the
 * same for every head of a stack, so built once). `undefined` when the ids are unknown.
 */
export interface TokenMatches {
  /** Per query i: the j < i with t_j = t_i (empty: i does not qualify). */
  duplicate: number[][];
  /** Per query i: the 1 ≤ j < i with t_{j−1} = t_i (empty: i does not qualify). */
  induction: number[][];
}

export function tokenMatches(ids: readonly number[]): TokenMatches {
  const duplicate: number[][] = [];
  const induction: number[][] = [];
  // Positions seen so far per id, and per id the positions right after it (j with t_{j−1} = id).
  const seenAt = new Map<number, number[]>();
  const followsAt = new Map<number, number[]>();
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    duplicate.push([...(seenAt.get(id) ?? [])]);
    induction.push([...(followsAt.get(id) ?? [])]);
    append(seenAt, id, i);
    // Position i follows t_{i−1}; recorded after query i itself, since induction wants j < i.
    if (i > 0) append(followsAt, ids[i - 1], i);
  }
  return { duplicate, induction };
}

function append(map: Map<number, number[]>, key: number, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * The five scores of one head read from the cells they name (entropy reads every weight: the
 * layer's pass in WebAssembly, kernels.ts, then `withEntropy`). `weights` is [queries × keys]
 * row-major. Scores that relate a query position to a key position (previous_token,
 * duplicate_token, induction, local) need self-attention (queries = keys) and are null otherwise;
 * duplicate_token and induction need `matches` (token ids).
 */
export function positionScores(weights: ArrayLike<number>, queries: number, keys: number, matches?: TokenMatches): Omit<HeadScoreValues, 'entropy'> {
  const square = queries === keys;
  let previous = 0;
  let first = 0;
  let local = 0;
  for (let i = 0; i < queries; i++) {
    const row = i * keys;
    if (square && i > 0) previous += weights[row + i - 1];
    first += weights[row];
    if (square) {
      for (let j = Math.max(0, i - LOCAL_RADIUS); j <= Math.min(keys - 1, i + LOCAL_RADIUS); j++) local += weights[row + j];
    }
  }
  return {
    previous_token: square && queries > 1 ? previous / (queries - 1) : null,
    duplicate_token: square && matches ? meanOverMatches(weights, keys, matches.duplicate) : null,
    induction: square && matches ? meanOverMatches(weights, keys, matches.induction) : null,
    first_token: queries > 0 && keys > 0 ? first / queries : null,
    local: square && queries > 0 ? local / queries : null,
  };
}

/** A head's six scores: its position scores and the mean over its `queries` rows of `entropySum` (Σ over rows of −Σ_j a·ln a). */
export function withEntropy(scores: Omit<HeadScoreValues, 'entropy'>, entropySum: number, queries: number): HeadScoreValues {
  return { ...scores, entropy: queries > 0 ? entropySum / queries : null };
}

/** Mean over the queries with at least one matching key of the weight on those keys. */
function meanOverMatches(weights: ArrayLike<number>, keys: number, matches: number[][]): number | null {
  let sum = 0;
  let qualifying = 0;
  matches.forEach((js, i) => {
    if (js.length === 0) return;
    qualifying++;
    for (const j of js) sum += weights[i * keys + j];
  });
  return qualifying > 0 ? sum / qualifying : null;
}

/** One row per head: `layer,head,` then every score (empty where null), full precision. */
export function scoresCsv(scores: ScoreGrids): string {
  const lines = [['layer', 'head', ...HEAD_SCORE_NAMES].join(',')];
  scores.entropy.forEach((row, layer) =>
    row.forEach((_, head) => lines.push([layer, head, ...HEAD_SCORE_NAMES.map((name) => scores[name][layer][head] ?? '')].join(','))),
  );
  return lines.join('\n') + '\n';
}
