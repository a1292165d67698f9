// The reference kernels: small, named, readable loops over row-major storage. Each writes into
// an `out` matrix the caller allocated (no allocation in the loops), and the row-wise ones take a
// half-open row range [r0, r1) so the engine can work — and check for cancellation — in blocks.
// Sums accumulate in a float64 local; storing into a Float32Array rounds to float32 on write,
// which is how float32 results come to match torch.float32.
import type { DType, Matrix } from '../types';

export function zeros(rows: number, cols: number, dtype: DType): Matrix {
  const size = rows * cols;
  return { rows, cols, data: dtype === 'float32' ? new Float32Array(size) : new Float64Array(size) };
}

export function filled(rows: number, cols: number, value: number, dtype: DType): Matrix {
  const m = zeros(rows, cols, dtype);
  m.data.fill(value);
  return m;
}

/** `m` itself when already stored in `dtype`, else a copy in `dtype` (rounds to float32). */
export function inDtype(m: Matrix, dtype: DType): Matrix {
  if (dtypeOf(m) === dtype) return m;
  const out = zeros(m.rows, m.cols, dtype);
  out.data.set(m.data);
  return out;
}

export function dtypeOf(m: Matrix): DType {
  return m.data instanceof Float32Array ? 'float32' : 'float64';
}

/** out[r0:r1] = a[r0:r1] · b */
export function matmul(out: Matrix, a: Matrix, b: Matrix, r0 = 0, r1 = a.rows): void {
  const n = a.cols;
  const m = b.cols;
  const ad = a.data;
  const bd = b.data;
  const od = out.data;
  const row = new Float64Array(m);
  for (let i = r0; i < r1; i++) {
    row.fill(0);
    for (let k = 0; k < n; k++) {
      const aik = ad[i * n + k];
      const bOff = k * m;
      for (let j = 0; j < m; j++) row[j] += aik * bd[bOff + j];
    }
    od.set(row, i * m);
  }
}

/** out[r0:r1] = a[r0:r1] · bᵀ (rows of a against rows of b: no transpose is materialised) */
export function matmulTransB(out: Matrix, a: Matrix, b: Matrix, r0 = 0, r1 = a.rows): void {
  const n = a.cols;
  const ad = a.data;
  const bd = b.data;
  const od = out.data;
  for (let i = r0; i < r1; i++) {
    const aOff = i * n;
    for (let j = 0; j < b.rows; j++) {
      const bOff = j * n;
      let sum = 0;
      for (let k = 0; k < n; k++) sum += ad[aOff + k] * bd[bOff + k];
      od[i * b.rows + j] = sum;
    }
  }
}

/** out = aᵀ · b (both have the same number of rows) */
export function matmulTransA(out: Matrix, a: Matrix, b: Matrix): void {
  const n = a.cols;
  const m = b.cols;
  const acc = new Float64Array(n * m);
  const ad = a.data;
  const bd = b.data;
  for (let r = 0; r < a.rows; r++) {
    for (let i = 0; i < n; i++) {
      const ari = ad[r * n + i];
      for (let j = 0; j < m; j++) acc[i * m + j] += ari * bd[r * m + j];
    }
  }
  out.data.set(acc);
}

/** out[r0:r1] = a[r0:r1] + b[r0:r1] */
export function addRows(out: Matrix, a: Matrix, b: Matrix, r0 = 0, r1 = a.rows): void {
  const ad = a.data;
  const bd = b.data;
  const od = out.data;
  for (let p = r0 * a.cols; p < r1 * a.cols; p++) od[p] = ad[p] + bd[p];
}

/** acc += a, elementwise */
export function accumulate(acc: Matrix, a: Matrix): void {
  addRows(acc, acc, a);
}

/**
 * Stable row softmax of a[r0:r1] into out: subtract the row max, exponentiate, normalise.
 * A row whose max is −∞ (every key masked) becomes all zeros instead of NaN; its index is
 * returned so the caller can say so. A row holding NaN stays NaN. Finite inputs never give NaN: x − max ≤ 0, so exp ≤ 1
 * and the sum is ≥ 1.
 */
export function rowSoftmax(out: Matrix, a: Matrix, r0 = 0, r1 = a.rows): number[] {
  const n = a.cols;
  const ad = a.data;
  const od = out.data;
  const fullyMasked: number[] = [];
  for (let i = r0; i < r1; i++) {
    const off = i * n;
    let max = -Infinity;
    for (let j = 0; j < n; j++) {
      const x = ad[off + j];
      if (x > max) max = x;
      else if (Number.isNaN(x)) {
        max = NaN; // as numpy and torch: one NaN makes the whole row NaN, never "fully masked"
        break;
      }
    }
    if (max === -Infinity) {
      od.fill(0, off, off + n);
      fullyMasked.push(i);
      continue;
    }
    let sum = 0;
    for (let j = 0; j < n; j++) {
      const e = Math.exp(ad[off + j] - max);
      od[off + j] = e;
      sum += e;
    }
    const inv = 1 / sum;
    for (let j = 0; j < n; j++) od[off + j] = od[off + j] * inv;
  }
  return fullyMasked;
}

/** Through the softmax Jacobian: dS_ij = A_ij (dA_ij − Σ_k A_ik dA_ik). */
export function softmaxBackward(dS: Matrix, A: Matrix, dA: Matrix): void {
  const n = A.cols;
  const a = A.data;
  const g = dA.data;
  const od = dS.data;
  for (let i = 0; i < A.rows; i++) {
    const off = i * n;
    let dot = 0;
    for (let j = 0; j < n; j++) dot += a[off + j] * g[off + j];
    for (let j = 0; j < n; j++) od[off + j] = a[off + j] * (g[off + j] - dot);
  }
}

/** Columns [start, start + count) of m as a new matrix. */
export function columns(m: Matrix, start: number, count: number): Matrix {
  const out = zeros(m.rows, count, dtypeOf(m));
  for (let i = 0; i < m.rows; i++) {
    out.data.set(m.data.subarray(i * m.cols + start, i * m.cols + start + count), i * count);
  }
  return out;
}

/** dst[:, start:start + src.cols] += src (into zeros: concatenation; GQA heads sharing a KV head add their gradients). */
export function addColumns(dst: Matrix, src: Matrix, start: number): void {
  const dd = dst.data;
  const sd = src.data;
  for (let i = 0; i < src.rows; i++) {
    const dOff = i * dst.cols + start;
    for (let j = 0; j < src.cols; j++) dd[dOff + j] += sd[i * src.cols + j];
  }
}

/** Additive (Bahdanau) scores: out_ij = Σ_a va_a · tanh(P_ia + R_ja), P = Q W1, R = K W2. */
export function additiveScores(out: Matrix, P: Matrix, R: Matrix, va: Matrix, r0 = 0, r1 = P.rows): void {
  const d = P.cols;
  const pd = P.data;
  const rd = R.data;
  const v = va.data;
  const od = out.data;
  for (let i = r0; i < r1; i++) {
    for (let j = 0; j < R.rows; j++) {
      let sum = 0;
      for (let a = 0; a < d; a++) sum += v[a] * Math.tanh(pd[i * d + a] + rd[j * d + a]);
      od[i * R.rows + j] = sum;
    }
  }
}

/**
 * Backward of `additiveScores`: with T = tanh(P_ia + R_ja) recomputed (never stored: it is
 * Lq×Lk×d), dP_ia = Σ_j dS_ij va_a (1 − T²) and dR_ja = Σ_i dS_ij va_a (1 − T²).
 */
export function additiveScoresBackward(dP: Matrix, dR: Matrix, dS: Matrix, P: Matrix, R: Matrix, va: Matrix): void {
  const d = P.cols;
  const pd = P.data;
  const rd = R.data;
  const v = va.data;
  const g = dS.data;
  const dp = new Float64Array(dP.data.length);
  const dr = new Float64Array(dR.data.length);
  for (let i = 0; i < P.rows; i++) {
    for (let j = 0; j < R.rows; j++) {
      const gij = g[i * R.rows + j];
      for (let a = 0; a < d; a++) {
        const t = Math.tanh(pd[i * d + a] + rd[j * d + a]);
        const local = gij * v[a] * (1 - t * t);
        dp[i * d + a] += local;
        dr[j * d + a] += local;
      }
    }
  }
  dP.data.set(dp);
  dR.data.set(dr);
}

/** Gaussian scores: out_ij = −‖q_i − k_j‖² / (2σ²), differences taken directly (no cancellation). */
export function gaussianScores(out: Matrix, Q: Matrix, K: Matrix, sigma: number, r0 = 0, r1 = Q.rows): void {
  const d = Q.cols;
  const qd = Q.data;
  const kd = K.data;
  const od = out.data;
  const factor = -1 / (2 * sigma * sigma);
  for (let i = r0; i < r1; i++) {
    for (let j = 0; j < K.rows; j++) {
      let sum = 0;
      for (let a = 0; a < d; a++) {
        const diff = qd[i * d + a] - kd[j * d + a];
        sum += diff * diff;
      }
      od[i * K.rows + j] = sum * factor;
    }
  }
}

/**
 * Backward of `gaussianScores`: ∂S_ij/∂q_i = −(q_i − k_j)/σ², ∂S_ij/∂k_j = (q_i − k_j)/σ², so
 * dQ_i = Σ_j dS_ij (k_j − q_i)/σ² and dK_j = Σ_i dS_ij (q_i − k_j)/σ².
 */
export function gaussianScoresBackward(dQ: Matrix, dK: Matrix, dS: Matrix, Q: Matrix, K: Matrix, sigma: number): void {
  const d = Q.cols;
  const qd = Q.data;
  const kd = K.data;
  const g = dS.data;
  const inv = 1 / (sigma * sigma);
  const dq = new Float64Array(dQ.data.length);
  const dk = new Float64Array(dK.data.length);
  for (let i = 0; i < Q.rows; i++) {
    for (let j = 0; j < K.rows; j++) {
      const gij = g[i * K.rows + j] * inv;
      for (let a = 0; a < d; a++) {
        const diff = qd[i * d + a] - kd[j * d + a];
        dq[i * d + a] -= gij * diff;
        dk[j * d + a] += gij * diff;
      }
    }
  }
  dQ.data.set(dq);
  dK.data.set(dk);
}

/** max |m_ij| (NaN when any entry is NaN). */
export function maxAbs(m: Matrix): number {
  let max = 0;
  for (let p = 0; p < m.data.length; p++) {
    const v = Math.abs(m.data[p]);
    if (v > max || Number.isNaN(v)) max = v;
  }
  return max;
}
