// Attention rollout (Abnar & Zuidema, 2020): how much each input token reaches each output
// position through all layers, treating the residual connection as half of each layer's mixing:
//   Â_l = 0.5·mean_h(A_l) + 0.5·I, each row renormalised to sum 1;  R = Â_{L−1} · … · Â_0.
// Â_l alone is made here, for attention flow (flow.ts); the rollout's product is computed with the
// head scores, in WebAssembly (kernels.ts, its rollout_residual_f64 makes the same Â_l). Float64
// throughout. Pure functions: no `vscode` import.

/** Â_l from a layer's head-mean [n × n]: half the mean plus half the identity, rows renormalised. */
export function withResidual(headMean: Float64Array, n: number): Float64Array {
  const augmented = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const row = i * n;
    let sum = 0;
    for (let j = 0; j < n; j++) {
      const value = 0.5 * headMean[row + j] + (i === j ? 0.5 : 0);
      augmented[row + j] = value;
      sum += value;
    }
    // sum ≥ 0.5 (the identity's half), so a fully masked row becomes the identity row.
    for (let j = 0; j < n; j++) augmented[row + j] /= sum;
  }
  return augmented;
}
