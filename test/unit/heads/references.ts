// The numpy reference cases of scripts/gen_head_references.py, as AttentionStacks.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AttentionStack } from '../../../src/core/heads/stack';
import type { HeadScoreName } from '../../../src/core/heads/scores';

type Grid = (number | null)[][];

export interface ReferenceCase {
  name: string;
  dtype: 'float64' | 'float32';
  ids: number[] | null;
  weights: number[][][][];
  other?: number[][][][];
  expected: {
    scores: Record<HeadScoreName, Grid>;
    rollout: number[][];
    flow?: number[][];
    divergence?: number[][];
    difference_1_0?: number[][];
    /** B − A of head (1, 0) pooled in blocks of 4 (per block, the entry of largest |B − A|). */
    difference_1_0_blocks_of_4?: { difference: number[]; a: number[]; b: number[]; at: number[] };
  };
}

const file = join(__dirname, '..', '..', 'fixtures', 'heads', 'references.json');

export const referenceCases: ReferenceCase[] = (JSON.parse(readFileSync(file, 'utf8')) as { cases: ReferenceCase[] }).cases;

export function referenceCase(name: string): ReferenceCase {
  const found = referenceCases.find((c) => c.name === name);
  if (!found) throw new Error(`no reference case ${name}`);
  return found;
}

/** weights [L][H][queries][keys] as a stack of the case's dtype. */
export function stackOf(weights: number[][][][], dtype: 'float64' | 'float32', ids: number[] | null): AttentionStack {
  const [queries, keys] = [weights[0][0].length, weights[0][0][0].length];
  const label = (i: number) => `t${i}`;
  const array = dtype === 'float32' ? Float32Array : Float64Array;
  const heads = weights.map((layer) => layer.map((head) => array.from(head.flat())));
  return {
    source: { kind: 'saved', file: 'references.json' },
    tokens: Array.from({ length: queries }, (_, i) => label(i)),
    keyTokens: Array.from({ length: keys }, (_, i) => label(i)),
    ...(ids ? { tokenIds: ids } : {}),
    layerCount: weights.length,
    headCount: weights[0].length,
    queryCount: queries,
    keyCount: keys,
    weights: (layer, head) => heads[layer][head],
  };
}

/** |actual − expected| ≤ tolerance everywhere, nulls where expected has them. */
export function assertClose(actual: ArrayLike<number | null>, expected: readonly (number | null)[], tolerance: number, what: string): void {
  if (actual.length !== expected.length) throw new Error(`${what}: ${actual.length} values, expected ${expected.length}`);
  for (let k = 0; k < expected.length; k++) {
    const a = actual[k];
    const e = expected[k];
    if (e === null || a === null) {
      if (a !== e) throw new Error(`${what}[${k}]: ${a}, expected ${e}`);
    } else if (!(Math.abs(a - e) <= tolerance)) {
      throw new Error(`${what}[${k}]: ${a}, expected ${e} (difference ${Math.abs(a - e)} > ${tolerance})`);
    }
  }
}
