// The attention variants of today's models, as modifiers in one place (in the spirit of
// FlexAttention's score_mod and mask_mod): everything the engine does differently for rope,
// temperature, softcap, alibi, window, segments, prefix, sinks and decode is decided here.
// Order, per head:  scores = scale·RoPE(Q)·RoPE(K)ᵀ → /T → softcap → + ALiBi → masks (−∞)
//                   → softmax → ·V.
// Positions are token indices: key j sits at j, query row i at i + (Lk − Lq), as `causal=
// bottom-right` aligns them; with `decode` the one computed row is the last (position Lk − 1).
import type { AttentionOptions, AttentionSpec, DType, Matrix, RopeLayout } from '../types';
import { zeros } from './kernels';

/** The variants a spec asks for, by option name (empty when it is plain attention). */
export function variantsOf(options: AttentionOptions): string[] {
  const keys = ['rope', 'temperature', 'softcap', 'alibi', 'window', 'prefix', 'sinks', 'decode'] as const;
  return keys.filter((key) => options[key] !== undefined && options[key] !== false);
}

/** Variants that tie attention to token positions (permuting the tokens changes the result). */
export function positional(spec: AttentionSpec): boolean {
  const o = spec.options;
  return o.rope !== undefined || Boolean(o.alibi) || o.window !== undefined || o.prefix !== undefined || Boolean(o.decode) || spec.segments !== undefined;
}

/** Where the rows of one run sit: `queries` computed rows of the full run's `fullQueries`. */
export interface Positions {
  fullQueries: number;
  queries: number;
  keys: number;
  /** Position of the first computed query row. */
  firstQuery: number;
}

export function positionsOf(spec: AttentionSpec, fullQueries: number, keys: number): Positions {
  const offset = keys - fullQueries;
  return spec.options.decode
    ? { fullQueries, queries: 1, keys, firstQuery: offset + fullQueries - 1 }
    : { fullQueries, queries: fullQueries, keys, firstQuery: offset };
}

/** The last row of m when decoding (the one query of a KV-cache step), else m itself. */
export function decodedRows(spec: AttentionSpec, m: Matrix): Matrix {
  if (!spec.options.decode || m.rows <= 1) return m;
  return { rows: 1, cols: m.cols, data: m.data.slice((m.rows - 1) * m.cols, m.rows * m.cols) };
}

// ---------------------------------------------------------------- RoPE

export interface Rope {
  base: number;
  layout: RopeLayout;
  /** Pair k's frequency when a model scales them (linear, llama3 rope types); else base^(−2k/d). */
  frequencies?: ArrayLike<number>;
}

export function ropeOf(options: AttentionOptions): Rope | undefined {
  return options.rope === undefined ? undefined : { base: options.rope, layout: options.ropeLayout ?? 'half' };
}

/**
 * Row r of m (at position firstPosition + r) with pair k turned by position·base^(−2k/d).
 * Pairs are (x_k, x_{k+d/2}) for 'half', (x_{2k}, x_{2k+1}) for 'interleaved'. `direction` −1
 * turns back (the transpose, which carries gradients from rotated to original coordinates).
 */
export function rotate(m: Matrix, rope: Rope, firstPosition: number, dtype: DType, direction: 1 | -1 = 1): Matrix {
  const d = m.cols;
  if (d % 2 !== 0) throw new RangeError(`RoPE needs an even head width, not ${d}`);
  const half = d / 2;
  const out = zeros(m.rows, d, dtype);
  const frequencies = rope.frequencies ?? Array.from({ length: half }, (_, k) => rope.base ** (-2 * k / d));
  if (frequencies.length !== half) throw new RangeError(`RoPE has ${frequencies.length} frequencies for a head width of ${d}`);
  for (let r = 0; r < m.rows; r++) {
    const position = firstPosition + r;
    for (let k = 0; k < half; k++) {
      const angle = position * frequencies[k];
      const cos = Math.cos(angle);
      const sin = direction * Math.sin(angle);
      const a = r * d + (rope.layout === 'half' ? k : 2 * k);
      const b = rope.layout === 'half' ? a + half : a + 1;
      const x = m.data[a];
      const y = m.data[b];
      out.data[a] = x * cos - y * sin;
      out.data[b] = y * cos + x * sin;
    }
  }
  return out;
}

// ---------------------------------------------------------------- ALiBi

/**
 * The ALiBi paper's slopes: 2^(−8h/H), h = 1…H for H a power of two; otherwise those of the
 * nearest lower power of two n, then every other slope of 2n (the authors' `get_slopes`).
 */
export function alibiSlopes(heads: number): number[] {
  const powerOfTwo = (n: number): number[] => Array.from({ length: n }, (_, h) => 2 ** ((-8 * (h + 1)) / n));
  const n = 2 ** Math.floor(Math.log2(heads));
  if (n === heads) return powerOfTwo(heads);
  return [...powerOfTwo(n), ...alibiSlopes(2 * n).filter((_, i) => i % 2 === 0).slice(0, heads - n)];
}

// ---------------------------------------------------------------- mask_mod

/** Whether full-run query row i may see key j under window, segments, prefix and sinks. */
export type MaskRule = (i: number, j: number) => boolean;

/** The variants' mask rule over the full run's Lq×Lk, or undefined when none masks. */
export function variantMaskRule(spec: AttentionSpec, fullQueries: number, keys: number): MaskRule | undefined {
  const { window, prefix, sinks = 0, causal } = spec.options;
  const segments = spec.segments?.data;
  if (window === undefined && prefix === undefined && !segments) return undefined;
  const offset = keys - fullQueries;
  // With causal (or a prefix, causal past it) the window is the W keys up to the query itself.
  const oneSided = causal !== undefined || prefix !== undefined;
  return (i, j) => {
    const p = i + offset;
    if (window !== undefined && !(oneSided ? p - j < window : Math.abs(p - j) < window) && j >= sinks) return false;
    if (segments && segments[p] !== segments[j]) return false;
    if (prefix !== undefined && j >= prefix && j > p) return false;
    return true;
  };
}

// ---------------------------------------------------------------- score_mod, per head

/** What one head does between its raw scores and the softmax. */
export interface HeadModifier {
  /** Multiplies the raw scores: the scale over the temperature. */
  scale: number;
  softcap?: number;
  /** Added after the softcap: the mask (0 / −∞ / additive values) plus this head's ALiBi bias. */
  additive: Matrix | null;
}

/**
 * Head `head`'s modifier. `mask` is the run's combined mask over the computed rows (shared by
 * every head); with ALiBi each head gets its own copy with −m_h·|i − j| added.
 */
export function headModifier(spec: AttentionSpec, head: number, baseScale: number, mask: Matrix | null, at: Positions, dtype: DType): HeadModifier {
  const { temperature = 1, softcap, alibi } = spec.options;
  const modifier: HeadModifier = { scale: baseScale / temperature, additive: mask };
  if (softcap !== undefined) modifier.softcap = softcap;
  if (alibi) {
    const additive = alibiBias(headSlope(spec, head), at, dtype);
    if (mask) for (let p = 0; p < additive.data.length; p++) additive.data[p] += mask.data[p];
    modifier.additive = additive;
  }
  return modifier;
}

/** Head `head`'s ALiBi slope: from the `alibi_slopes` row, else the paper's. */
export function headSlope(spec: AttentionSpec, head: number): number {
  return spec.alibiSlopes?.data[head] ?? alibiSlopes(spec.options.heads)[head];
}

/** −slope·|i − j| over the computed rows, query row i at position at.firstQuery + i. */
export function alibiBias(slope: number, at: Positions, dtype: DType): Matrix {
  const bias = zeros(at.queries, at.keys, dtype);
  for (let i = 0; i < at.queries; i++) {
    for (let j = 0; j < at.keys; j++) bias.data[i * at.keys + j] = -slope * Math.abs(at.firstQuery + i - j);
  }
  return bias;
}

/** scaled[r0:r1] = softcap(scale · scores[r0:r1]) (in place when `scaled` is `scores`). */
export function modifyScores(scaled: Matrix, scores: Matrix, modifier: HeadModifier, r0: number, r1: number): void {
  const { scale, softcap } = modifier;
  const end = r1 * scores.cols;
  for (let p = r0 * scores.cols; p < end; p++) {
    const s = scores.data[p] * scale;
    scaled.data[p] = softcap === undefined ? s : softcap * Math.tanh(s / softcap);
  }
}

/** dL/d(raw scores) from dL/d(modified scores), given the modified scores (`scaled`). */
export function scoresGradient(dS: Matrix, scaled: Matrix, modifier: HeadModifier, dtype: DType): Matrix {
  const { scale, softcap } = modifier;
  const out = zeros(dS.rows, dS.cols, dtype);
  for (let p = 0; p < dS.data.length; p++) {
    // d/ds C·tanh(s/C) = 1 − tanh² = 1 − (capped/C)².
    const capped = softcap === undefined ? 0 : scaled.data[p] / softcap;
    out.data[p] = dS.data[p] * scale * (1 - capped * capped);
  }
  return out;
}
