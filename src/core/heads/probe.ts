// The induction probe (TransformerLens's standard test, with no code): the model reads BOS and
// R random tokens, then the same R tokens again. On the second copy an induction head attends
// from each token to the token that followed its earlier occurrence, so the heads ranked by
// induction score (scores.ts) put the induction heads first. Seeded, so a probe repeats exactly.
// Pure: no `vscode` import; the model is any function from ids to an AttentionStack.
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { analyseStack } from './analysis';
import type { ScoreGrids } from './scores';
import { ranked, type RankedHead } from './compare';
import type { AttentionStack } from './stack';

export const DEFAULT_REPEAT = 32;

export interface ProbeOptions {
  /** R: how many random tokens are repeated (default 32). */
  repeat?: number;
  seed?: number;
  /** The ids drawn are 0…vocabularySize − 1, never `bos`. */
  vocabularySize: number;
  bos: number;
}

export interface ProbeResult {
  ids: number[];
  /** Every head, the highest induction score first. */
  ranking: RankedHead[];
  scores: ScoreGrids;
}

/** BOS, then R random ids (never BOS) twice. */
export function probeIds({ repeat = DEFAULT_REPEAT, seed = 0, vocabularySize, bos }: ProbeOptions): number[] {
  if (!Number.isInteger(repeat) || repeat < 1) throw new RangeError(`--repeat must be a positive integer, not ${repeat}`);
  if (vocabularySize < 2) throw new RangeError('the probe needs a vocabulary of at least two tokens');
  const generator = xoroshiro128plus(seed);
  const random: number[] = [];
  while (random.length < repeat) {
    const id = uniformInt(generator, 0, vocabularySize - 1);
    if (id !== bos) random.push(id);
  }
  return [bos, ...random, ...random];
}

export async function inductionProbe(model: (ids: number[]) => Promise<AttentionStack>, options: ProbeOptions): Promise<ProbeResult> {
  const ids = probeIds(options);
  const { scores } = await analyseStack(await model(ids));
  return { ids, ranking: ranked(scores.induction), scores };
}
