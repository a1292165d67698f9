// The reference's checks (core/engine/checks.ts) on a fast pass, WebAssembly or native: the row
// sums come from the attention kernel or graph (summed while each row was in cache), and the
// permutation check reruns on the output-only path, so checking a 4096-token run costs no n×n pass
// in JavaScript.
import type { AttentionSpec, Checks, Matrix } from '../../types';
import type { AttentionShape } from '../cost';
import { judge, permutationProbe } from '../index';

/** Output of the forward pass of another spec (the permuted input). */
export type OutputOf = (spec: AttentionSpec) => Promise<Matrix | undefined>;

/** `rowSums`: per head, its rows' weight sums. */
export async function fastChecks(spec: AttentionSpec, shape: AttentionShape, rowSums: Matrix[], output: Matrix, outputOf: OutputOf): Promise<Checks> {
  let rowSumsMaxError = 0;
  for (const sums of rowSums) {
    for (const sum of sums.data) {
      if (sum !== 0) rowSumsMaxError = Math.max(rowSumsMaxError, Math.abs(sum - 1)); // 0: fully masked
    }
  }
  // The rerun's warnings are not shown: its tokens would name the wrong rows.
  const probe = permutationProbe(spec);
  const probeOutput = probe && (await outputOf(probe.spec));
  const permuted = probe && probeOutput && { rows: probe.rows, output: probeOutput };
  return judge(spec, shape, {
    rowSumsMaxError,
    // Softmax rows are in [0, 1] by construction (x − max ≤ 0, sum ≥ 1); only NaN escapes, and a
    // NaN weight makes its row sum NaN.
    weightsInBounds: !Number.isNaN(rowSumsMaxError),
    output,
    permuted,
  });
}

