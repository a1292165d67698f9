// The reference's checks (core/engine/checks.ts) on a fast pass: the row sums come from the
// attention kernel (summed while each row was in cache), and the permutation check reruns on the
// output-only path, so checking a 4096-token run costs no n×n pass in JavaScript.
import type { AttentionSpec, Checks, Matrix } from '../../types';
import { judge, permutationProbe } from '../index';
import type { FastForward } from './index';
import { planShape } from './plan';

/** Output of the forward pass of another spec (the permuted input). */
export type OutputOf = (spec: AttentionSpec) => Promise<Matrix | undefined>;

export async function fastChecks(spec: AttentionSpec, pass: FastForward, outputOf: OutputOf): Promise<Checks> {
  let rowSumsMaxError = 0;
  for (const head of pass.plan.heads) {
    for (const sum of pass.arena.view(head.rowSums).data) {
      if (sum !== 0) rowSumsMaxError = Math.max(rowSumsMaxError, Math.abs(sum - 1)); // 0: fully masked
    }
  }
  // The rerun's warnings are not shown: its tokens would name the wrong rows.
  const probe = permutationProbe(spec);
  const probeOutput = probe && (await outputOf(probe.spec));
  const permuted = probe && probeOutput && { rows: probe.rows, output: probeOutput };
  return judge(spec, planShape(spec, pass.plan), {
    rowSumsMaxError,
    // Softmax rows are in [0, 1] by construction (x − max ≤ 0, sum ≥ 1); only NaN escapes, and a
    // NaN weight makes its row sum NaN.
    weightsInBounds: !Number.isNaN(rowSumsMaxError),
    output: pass.output,
    permuted,
  });
}

