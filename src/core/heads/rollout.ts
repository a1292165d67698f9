// Attention rollout (Abnar & Zuidema, 2020): how much each input token reaches each output
// position through all layers, treating the residual connection as half of each layer's mixing:
//   Â_l = 0.5·mean_h(A_l) + 0.5·I, each row renormalised to sum 1;  R = Â_{L−1} · … · Â_0.
// Float64 throughout. Pure functions: no `vscode` import.

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

/** R = Â_{L−1} · … · Â_0 from the layers' head-means, each [n × n]. */
export function rollout(headMeans: readonly Float64Array[], n: number): Float64Array {
  return headMeans.reduce<Float64Array | undefined>((product, mean) => rolloutStep(product, mean, n), undefined) ?? identity(n);
}

/** The rollout through one more layer: Â_l · R (or Â_0 for the first), so layers need not all be held. */
export function rolloutStep(product: Float64Array | undefined, headMean: Float64Array, n: number): Float64Array {
  const augmented = withResidual(headMean, n);
  return product ? multiply(augmented, product, n) : augmented;
}

function identity(n: number): Float64Array {
  const matrix = new Float64Array(n * n);
  for (let i = 0; i < n; i++) matrix[i * n + i] = 1;
  return matrix;
}

/**
 * a · b for [n × n] matrices, skipping zeros: causal attention makes both lower triangular, and
 * then only the columns up to each row's last non-zero are touched (a sixth of a dense product).
 */
function multiply(a: Float64Array, b: Float64Array, n: number): Float64Array {
  const lastNonZero = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    let last = n - 1;
    while (last >= 0 && b[k * n + last] === 0) last--;
    lastNonZero[k] = last;
  }
  const product = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    const out = i * n;
    for (let k = 0; k < n; k++) {
      const weight = a[out + k];
      if (weight === 0) continue;
      const from = k * n;
      const last = lastNonZero[k];
      for (let c = 0; c <= last; c++) product[out + c] += weight * b[from + c];
    }
  }
  return product;
}
