// FlashAttention's online softmax, walked tile by tile on one head's own numbers, so that the
// panel can show how the output comes out exact without the Lq×Lk matrix ever existing
// (Dao et al. 2022, Algorithm 1; Milakov & Gimelshein 2018). For each tile of queries, the key
// tiles go by in order; per query row it keeps the running maximum m, the running sum l of
// e^(s − m), and the unnormalised output O. A new tile with maximum m' rescales what is kept by
// e^(m − m'): l ← e^(m − m')·l + Σ e^(s − m'), O ← e^(m − m')·O + e^(s − m')·V. At the end O / l.
// Scores are made tile by tile, from the query tile's rows of the head's (RoPE-turned) Q and the
// key tile's rows of K, by the engine's own score function (scores.ts) and modifier (variants.ts):
// every score function the engine has — dot, general, additive, gaussian — scores a query and a
// key from those two rows alone, so each has this tiled form (FlashAttention itself ships the
// dot product; the walk shows the same online softmax over any of them).
import type { AttentionSpec, Matrix } from '../types';
import { type HeadOperands, headOperands } from './attention';
import { zeros } from './kernels';
import { bindScores } from './scores';

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

/**
 * The walk of head `head` in tiles of tileRows×tileCols: over every query tile, or over the one
 * numbered `queryTile` (from 0) — a large problem's walk is shown one query tile at a time, its
 * steps bounded by the key tiles alone. `output` holds the rows walked (the others stay 0).
 */
export function flashWalk(spec: AttentionSpec, head: number, tileRows: number, tileCols: number, queryTile?: number): FlashWalk {
  if (!(Number.isInteger(tileRows) && tileRows >= 1 && Number.isInteger(tileCols) && tileCols >= 1)) {
    throw new RangeError(`tiles need whole sizes from 1, not ${tileRows}×${tileCols}`);
  }
  const operands = headOperands(spec, head);
  const tiles = Math.ceil(operands.Q.rows / tileRows);
  if (queryTile !== undefined && !(Number.isInteger(queryTile) && queryTile >= 0 && queryTile < tiles)) {
    throw new RangeError(`query tile ${queryTile} does not exist: tiles of ${tileRows} rows make ${tiles} (0–${tiles - 1})`);
  }
  return walk(operands, tileRows, tileCols, queryTile);
}

/** Rows [start, end) of a matrix, sharing its numbers. */
const rowsOf = (m: Matrix, start: number, end: number): Matrix => ({ rows: end - start, cols: m.cols, data: m.data.subarray(start * m.cols, end * m.cols) });

function walk({ Q, K, V, modifier, scoreParameters }: HeadOperands, tileRows: number, tileCols: number, queryTile?: number): FlashWalk {
  const [queries, keys, d, dv] = [Q.rows, K.rows, Q.cols, V.cols];
  const { scale, softcap, additive } = modifier;
  /** The modified scores of queries [q0, q1) against keys [k0, k1), one tile, row by row. */
  const tileScores = (q0: number, q1: number, k0: number, k1: number): number[][] => {
    const raw = zeros(q1 - q0, k1 - k0, 'float64');
    bindScores(scoreParameters, rowsOf(Q, q0, q1), rowsOf(K, k0, k1), 'float64').rows(raw, 0, q1 - q0);
    return Array.from({ length: q1 - q0 }, (_, r) => Array.from({ length: k1 - k0 }, (_, c) => {
      const s = raw.data[r * (k1 - k0) + c] * scale;
      return (softcap === undefined ? s : softcap * Math.tanh(s / softcap)) + (additive ? additive.data[(q0 + r) * keys + k0 + c] : 0);
    }));
  };
  const output = zeros(queries, dv, 'float64');
  const steps: FlashStep[] = [];
  const [first, end] = queryTile === undefined ? [0, queries] : [queryTile * tileRows, Math.min(queries, (queryTile + 1) * tileRows)];
  for (let q0 = first; q0 < end; q0 += tileRows) {
    const q1 = Math.min(queries, q0 + tileRows);
    const rows = q1 - q0;
    const m = new Array<number>(rows).fill(-Infinity);
    const l = new Array<number>(rows).fill(0);
    const O = Array.from({ length: rows }, () => new Array<number>(dv).fill(0));
    for (let k0 = 0; k0 < keys; k0 += tileCols) {
      const k1 = Math.min(keys, k0 + tileCols);
      const rescale: number[] = [];
      const scores = tileScores(q0, q1, k0, k1);
      for (let r = 0; r < rows; r++) {
        const tile = scores[r];
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
