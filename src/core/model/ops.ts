// The elementwise and row-wise pieces of a transformer block, on float32 rows ([n × width]
// row-major): norms, activations, embeddings, residual adds. The products go through the
// LinearBackend; attention through the engine.
import type { Activation, NormKind } from './config';

/**
 * Row-wise norm of x [n × width] into a fresh array: LayerNorm, RMSNorm, or Gemma's (1 + w) RMSNorm.
 * A weight (and bias) of k·width values holds k rows' parameters in turn (StableLM's per-head q/k
 * norms: rows of head_dim, one set per head).
 */
export function norm(x: Float32Array, width: number, kind: NormKind, eps: number, weight: Float32Array, bias?: Float32Array): Float32Array {
  const out = new Float32Array(x.length);
  // The gain and shift per column, once: the row loop below stays free of branches.
  const gains = kind === 'rms-plus-one' ? Float64Array.from(weight, (w) => 1 + w) : weight;
  const shifts = bias ?? new Float32Array(weight.length);
  const sets = weight.length / width;
  for (let row = 0, r = 0; row < x.length; row += width, r++) {
    const gain = sets === 1 ? gains : gains.subarray((r % sets) * width, (r % sets + 1) * width);
    const shift = sets === 1 ? shifts : shifts.subarray((r % sets) * width, (r % sets + 1) * width);
    let mean = 0;
    if (kind === 'layer') {
      for (let j = 0; j < width; j++) mean += x[row + j];
      mean /= width;
    }
    let squares = 0;
    for (let j = 0; j < width; j++) {
      const centred = x[row + j] - mean;
      squares += centred * centred;
    }
    const inverse = 1 / Math.sqrt(squares / width + eps);
    for (let j = 0; j < width; j++) out[row + j] = (x[row + j] - mean) * inverse * gain[j] + shift[j];
  }
  return out;
}

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/** The activation, in place. */
export function activate(x: Float32Array, activation: Activation): Float32Array {
  const act = activationOf(activation);
  for (let i = 0; i < x.length; i++) x[i] = act(x[i]);
  return x;
}

/** a ⊙= b (the gated MLPs' act(gate) ⊙ up). */
export function multiplyInPlace(a: Float32Array, b: Float32Array): Float32Array {
  for (let i = 0; i < a.length; i++) a[i] *= b[i];
  return a;
}

function activationOf(activation: Activation): (v: number) => number {
  switch (activation) {
    case 'gelu-tanh':
      // 0.5·v·(1 + tanh(u)) = v / (1 + e^(−2u)): one exp instead of tanh (V8's tanh is several times slower).
      return (v) => v / (1 + Math.exp(-2 * SQRT_2_OVER_PI * (v + 0.044715 * v * v * v)));
    case 'gelu-erf':
      return (v) => 0.5 * v * (1 + erf(v / Math.SQRT2));
    case 'silu':
      return (v) => v / (1 + Math.exp(-v));
    case 'relu':
      return (v) => (v > 0 ? v : 0);
    case 'gelu-quick':
      return (v) => v / (1 + Math.exp(-1.702 * v));
  }
}

/**
 * erf to about 1e-7 absolute (Abramowitz & Stegun 7.1.26), far below float32's resolution of
 * the activations it feeds; JavaScript has no Math.erf.
 */
export function erf(x: number): number {
  const sign = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * a);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign * (1 - poly * Math.exp(-a * a));
}

/** a += b. */
export function addInPlace(a: Float32Array, b: Float32Array): Float32Array {
  for (let i = 0; i < a.length; i++) a[i] += b[i];
  return a;
}

/** Rows `ids` of a [count × width] table, times `scale`. */
export function gatherRows(table: Float32Array, width: number, ids: readonly number[], scale = 1): Float32Array {
  const out = new Float32Array(ids.length * width);
  ids.forEach((id, r) => {
    for (let j = 0; j < width; j++) out[r * width + j] = table[id * width + j] * scale;
  });
  return out;
}

/** cap·tanh(v/cap), in place (Gemma 2's final logits). */
export function softcapInPlace(x: Float32Array, cap: number): Float32Array {
  for (let i = 0; i < x.length; i++) x[i] = cap * Math.tanh(x[i] / cap);
  return x;
}
