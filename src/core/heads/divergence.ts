// The per-head Jensen–Shannon divergence of two runs (compare.ts says what it is), on the head
// analyses' WebAssembly SIMD kernels on the compute threads: a pass per pair of heads (kernels.ts
// DivergencePass), by groups of pairs. Apart
// from compare.ts, which the page and the host import, because this one loads WebAssembly.
// Pure functions: no `vscode` import.
import { grid, incomparability } from './compare';
import { DivergencePass, type Weights } from './kernels';
import type { AttentionStack } from './stack';

/** Mean over queries of the Jensen–Shannon divergence between two heads' rows, in nats. */
export async function meanRowDivergence(a: Weights, b: Weights, queries: number, keys: number): Promise<number> {
  const pass = new DivergencePass(queries, keys, 1);
  try {
    const { results } = await pass.meanRowDivergences([a], [b]);
    return (await results)[0];
  } finally {
    await pass.release();
  }
}

/**
 * Per layer × head, the mean row divergence of B from A. Throws a RangeError on different shapes.
 * A group's pairs are asked for and copied in while the threads read the group before;
 * `pairsPerGroup` caps the pairs per run (default: as many as a set of slots holds, kernels.ts
 * SET_BYTES). Two stacks that compute a layer's heads at once (model runs: `headGroups`) are
 * paired group by group.
 */
export async function divergences(a: AttentionStack, b: AttentionStack, pairsPerGroup?: number): Promise<number[][]> {
  const refusal = incomparability(a, b);
  if (refusal) throw new RangeError(refusal);
  const { layerCount, headCount } = a;
  const pass = new DivergencePass(a.queryCount, a.keyCount, layerCount * headCount, pairsPerGroup);
  const means: number[] = [];
  const pending: Promise<void>[] = [];
  /** Pairs A's and B's heads, the first being head `index` counted over all layers, a pass's group at a time. */
  const compare = async (index: number, headsA: Weights[], headsB: Weights[]): Promise<void> => {
    for (let at = 0; at < headsA.length; at += pass.group) {
      const { results } = await pass.meanRowDivergences(headsA.slice(at, at + pass.group), headsB.slice(at, at + pass.group));
      pending.push(results.then((values) => values.forEach((value, k) => (means[index + at + k] = value))));
    }
  };
  try {
    if (a.headGroups && b.headGroups) {
      for (let layer = 0; layer < layerCount; layer++) {
        await a.headGroups(layer, (firstA, groupA) =>
          b.headGroups!(layer, (firstB, groupB) => {
            // The heads both groups hold (the same ones when both runs group alike).
            const from = Math.max(firstA, firstB);
            const to = Math.min(firstA + groupA.length, firstB + groupB.length);
            return from < to ? compare(layer * headCount + from, groupA.slice(from - firstA, to - firstA), groupB.slice(from - firstB, to - firstB)) : Promise.resolve();
          }),
        );
      }
    } else {
      // Head by head, a group's pairs asked for at once (across layers when they are small).
      for (let first = 0; first < layerCount * headCount; first += pass.group) {
        const heads = Array.from({ length: Math.min(pass.group, layerCount * headCount - first) }, (_, k) => [Math.floor((first + k) / headCount), (first + k) % headCount]);
        await compare(first, heads.map(([layer, head]) => a.weights(layer, head)), heads.map(([layer, head]) => b.weights(layer, head)));
      }
    }
    await Promise.all(pending);
    return grid(layerCount, headCount, (layer, head) => means[layer * headCount + head]);
  } finally {
    await pass.release();
  }
}
