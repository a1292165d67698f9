// The per-head Jensen–Shannon divergence of two runs (compare.ts says what it is), on the head
// analyses' WebAssembly SIMD kernels: a pass per pair of heads (kernels.ts DivergencePass). Apart
// from compare.ts, which the page and the host import, because this one loads WebAssembly.
// Pure functions: no `vscode` import.
import { grid, incomparability } from './compare';
import { DivergencePass } from './kernels';
import type { AttentionStack } from './stack';

/** Mean over queries of the Jensen–Shannon divergence between two heads' rows, in nats. */
export function meanRowDivergence(a: Float32Array | Float64Array, b: Float32Array | Float64Array, queries: number, keys: number): number {
  return new DivergencePass(queries, keys).meanRowDivergence(a, b);
}

/** Per layer × head, the mean row divergence of B from A. Throws a RangeError on different shapes. */
export function divergences(a: AttentionStack, b: AttentionStack): number[][] {
  const refusal = incomparability(a, b);
  if (refusal) throw new RangeError(refusal);
  const pass = new DivergencePass(a.queryCount, a.keyCount);
  return grid(a.layerCount, a.headCount, (layer, head) => pass.meanRowDivergence(a.weights(layer, head), b.weights(layer, head)));
}
