// Every way of blocking a query from a key, folded into one additive Lq×Lk mask (0 / −∞ or the
// additive values given) that every head adds to its scaled scores. PyTorch conventions; the
// variants' rules (window, segments, prefix, sinks) come from variants.ts.
import type { AttentionSpec, DType, Matrix } from '../types';
import { zeros } from './kernels';
import { variantMaskRule } from './variants';

/** The additive mask actually applied, or null when nothing masks. */
export function combinedMask(spec: AttentionSpec, queries: number, keys: number, dtype: DType): Matrix | null {
  const { mask, padding } = spec;
  // A prefix-LM is causal past its prefix: its own rule replaces `causal`.
  const causal = spec.options.prefix === undefined ? spec.options.causal : undefined;
  const rule = variantMaskRule(spec, queries, keys);
  if (!mask && !padding && !causal && !rule) return null;
  const out = zeros(queries, keys, dtype);
  const m = out.data;
  if (mask) {
    requireShape(mask.value, queries, keys, 'mask');
    const v = mask.value.data;
    // Boolean: true (1) = may attend, false (0) = blocked. Additive: added as written.
    if (mask.kind === 'boolean') for (let p = 0; p < m.length; p++) m[p] = v[p] !== 0 ? 0 : -Infinity;
    else m.set(v);
  }
  if (causal) {
    // tril(ones(Lq, Lk)) top-left; bottom-right shifts the diagonal by Lk − Lq (FlashAttention).
    const offset = causal === 'bottom-right' ? keys - queries : 0;
    for (let i = 0; i < queries; i++) {
      for (let j = Math.max(0, i + offset + 1); j < keys; j++) m[i * keys + j] = -Infinity;
    }
  }
  if (rule) {
    for (let i = 0; i < queries; i++) {
      for (let j = 0; j < keys; j++) if (!rule(i, j)) m[i * keys + j] = -Infinity;
    }
  }
  if (padding) {
    requireShape(padding, 1, keys, 'padding');
    // Key padding: true (1) = padded, ignored by every query (nn.MultiheadAttention).
    for (let j = 0; j < keys; j++) {
      if (padding.data[j] === 0) continue;
      for (let i = 0; i < queries; i++) m[i * keys + j] = -Infinity;
    }
  }
  return out;
}

export function requireShape(m: Matrix, rows: number, cols: number, name: string): void {
  if (m.rows !== rows || m.cols !== cols) {
    throw new RangeError(`${name} is ${m.rows}×${m.cols} but ${rows}×${cols} is needed`);
  }
}
