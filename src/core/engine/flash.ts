// FlashAttention's online softmax, walked tile by tile on one head's own numbers, so that the
// panel can show how the output comes out exact without the Lq×Lk matrix ever existing
// (Dao et al. 2022, Algorithm 1; Milakov & Gimelshein 2018). For each tile of queries, the key
// tiles go by in order; per query row it keeps the running maximum m, the running sum l of
// e^(s − m), and the unnormalised output O. A new tile with maximum m' rescales what is kept by
// e^(m − m'): l ← e^(m − m')·l + Σ e^(s − m'), O ← e^(m − m')·O + e^(s − m')·V. At the end O / l.
// Scores are made tile by tile from the head's (RoPE-turned) Q and K and its score modifier, as
// the engine makes them (variants.ts): the walk is for the dot-product scores FlashAttention has.
import type { AttentionSpec, Matrix } from '../types';
import { type HeadOperands, headOperands } from './attention';
import { zeros } from './kernels';

/** The state after one key tile of one query tile. */
export interface FlashStep {
  queryStart: number;
  queryEnd: number;
  keyStart: number;
  keyEnd: number;
  /** Per query row of the tile: running maximum m, running sum l, the factor e^(m_old − m_new). */
  rowMax: number[];
  rowSum: number[];
  rescale: number[];
  /** O / l so far: the output if the keys ended with this tile (rows of the query tile). */
  partial: number[][];
}

export interface FlashWalk {
  tileRows: number;
  tileCols: number;
  steps: FlashStep[];
  output: Matrix;
  /** One Lq×Lk matrix (what the engine keeps per step) against the largest set a tile keeps live. */
  fullBytes: number;
  tileBytes: number;
}

/** Undefined for score functions FlashAttention does not compute (general, additive, gaussian). */
export function flashWalk(spec: AttentionSpec, head: number, tileRows: number, tileCols: number): FlashWalk | undefined {
  if (spec.options.score !== 'scaled_dot' && spec.options.score !== 'dot') return undefined;
  if (!(Number.isInteger(tileRows) && tileRows >= 1 && Number.isInteger(tileCols) && tileCols >= 1)) {
    throw new RangeError(`tiles need whole sizes from 1, not ${tileRows}×${tileCols}`);
  }
  return walk(headOperands(spec, head), tileRows, tileCols);
}

function walk({ Q, K, V, modifier }: HeadOperands, tileRows: number, tileCols: number): FlashWalk {
  const [queries, keys, d, dv] = [Q.rows, K.rows, Q.cols, V.cols];
  const { scale, softcap, additive } = modifier;
  const score = (i: number, j: number): number => {
    let dot = 0;
    for (let c = 0; c < d; c++) dot += Q.data[i * d + c] * K.data[j * d + c];
    const s = dot * scale;
    return (softcap === undefined ? s : softcap * Math.tanh(s / softcap)) + (additive ? additive.data[i * keys + j] : 0);
  };
  const output = zeros(queries, dv, 'float64');
  const steps: FlashStep[] = [];
  for (let q0 = 0; q0 < queries; q0 += tileRows) {
    const q1 = Math.min(queries, q0 + tileRows);
    const rows = q1 - q0;
    const m = new Array<number>(rows).fill(-Infinity);
    const l = new Array<number>(rows).fill(0);
    const O = Array.from({ length: rows }, () => new Array<number>(dv).fill(0));
    for (let k0 = 0; k0 < keys; k0 += tileCols) {
      const k1 = Math.min(keys, k0 + tileCols);
      const rescale: number[] = [];
      for (let r = 0; r < rows; r++) {
        const tile = Array.from({ length: k1 - k0 }, (_, c) => score(q0 + r, k0 + c));
        const next = Math.max(m[r], ...tile);
        // Nothing seen yet (or only blocked keys): no rescaling, nothing added.
        const factor = next === -Infinity ? 1 : Math.exp(m[r] - next);
        l[r] *= factor;
        for (let c = 0; c < dv; c++) O[r][c] *= factor;
        tile.forEach((s, t) => {
          const p = next === -Infinity ? 0 : Math.exp(s - next);
          l[r] += p;
          for (let c = 0; c < dv; c++) O[r][c] += p * V.data[(k0 + t) * dv + c];
        });
        m[r] = next;
        rescale.push(factor);
      }
      steps.push({
        queryStart: q0,
        queryEnd: q1,
        keyStart: k0,
        keyEnd: k1,
        rowMax: [...m],
        rowSum: [...l],
        rescale,
        partial: O.map((row, r) => row.map((x) => (l[r] === 0 ? 0 : x / l[r]))),
      });
    }
    // A row no key is left for gives 0, as the engine's fully masked rows do.
    O.forEach((row, r) => row.forEach((x, c) => (output.data[(q0 + r) * dv + c] = l[r] === 0 ? 0 : x / l[r])));
  }
  const bytes = 8;
  return {
    tileRows,
    tileCols,
    steps,
    output,
    fullBytes: queries * keys * bytes,
    tileBytes: (Math.min(tileRows, queries) * (Math.min(tileCols, keys) + dv + 2) + Math.min(tileCols, keys) * (d + dv)) * bytes,
  };
}
