// Score functions: how much query i matches key j, before scaling and masking. Row-vector
// convention throughout (tokens are rows):
//   dot, scaled_dot  S = Q Kᵀ
//   general (Luong)  S = Q W_a Kᵀ,                W_a: d_q × d_k (shared by every head)
//   additive         S_ij = v_aᵀ tanh(q_i W_1 + k_j W_2), W_1: d_q × d_a, W_2: d_k × d_a,
//   (Bahdanau)                                    v_a: d_a entries (1×d_a or d_a×1)
//   gaussian         S_ij = −‖q_i − k_j‖² / 2σ²
import type { AttentionSpec, DType, Matrix, ScoreFunction } from '../types';
import {
  additiveScores,
  additiveScoresBackward,
  gaussianScores,
  gaussianScoresBackward,
  matmul,
  matmulTransA,
  matmulTransB,
  zeros,
} from './kernels';
import { requireShape } from './masks';

export interface ScoreParameters {
  score: ScoreFunction;
  sigma: number;
  Wa?: Matrix;
  W1?: Matrix;
  W2?: Matrix;
  va?: Matrix;
}

/** One head's score function bound to its Q and K. */
export interface HeadScores {
  /** out[r0:r1] = S[r0:r1] */
  rows(out: Matrix, r0: number, r1: number): void;
  /** Given dL/dS (raw scores), dL/dQ and dL/dK. */
  backward(dScores: Matrix): { dQ: Matrix; dK: Matrix };
}

/** Multiplies the raw scores: `scale` when given, else 1/√d_k for scaled_dot and 1 otherwise. */
export function scoreScale(spec: AttentionSpec, dK: number): number {
  const { scale, score } = spec.options;
  if (scale !== undefined) return scale;
  return score === 'scaled_dot' ? 1 / Math.sqrt(dK) : 1;
}

export function bindScores(p: ScoreParameters, Q: Matrix, K: Matrix, dtype: DType): HeadScores {
  switch (p.score) {
    case 'scaled_dot':
    case 'dot':
      return dotScores(Q, K, dtype);
    case 'general':
      return generalScores(need(p.Wa, 'W_a', 'general'), Q, K, dtype);
    case 'additive':
      return bahdanauScores(need(p.W1, 'W_1', 'additive'), need(p.W2, 'W_2', 'additive'), need(p.va, 'v_a', 'additive'), Q, K, dtype);
    case 'gaussian':
      return radialScores(p.sigma, Q, K, dtype);
  }
}

function dotScores(Q: Matrix, K: Matrix, dtype: DType): HeadScores {
  requireWidth(K, Q.cols, 'K');
  return {
    rows: (out, r0, r1) => matmulTransB(out, Q, K, r0, r1),
    backward: (dScores) =>
      queryKeyGradients(Q, K, dtype, (dQ, dK) => {
        matmul(dQ, dScores, K);
        matmulTransA(dK, dScores, Q);
      }),
  };
}

function generalScores(Wa: Matrix, Q: Matrix, K: Matrix, dtype: DType): HeadScores {
  requireShape(Wa, Q.cols, K.cols, 'W_a');
  const QWa = zeros(Q.rows, K.cols, dtype);
  matmul(QWa, Q, Wa);
  return {
    rows: (out, r0, r1) => matmulTransB(out, QWa, K, r0, r1),
    backward: (dScores) => {
      const dSK = zeros(Q.rows, K.cols, dtype);
      matmul(dSK, dScores, K);
      return queryKeyGradients(Q, K, dtype, (dQ, dK) => {
        matmulTransB(dQ, dSK, Wa);
        matmulTransA(dK, dScores, QWa);
      });
    },
  };
}

function bahdanauScores(W1: Matrix, W2: Matrix, va: Matrix, Q: Matrix, K: Matrix, dtype: DType): HeadScores {
  const width = W1.cols;
  requireShape(W1, Q.cols, width, 'W_1');
  requireShape(W2, K.cols, width, 'W_2');
  if (va.rows * va.cols !== width || Math.min(va.rows, va.cols) !== 1) {
    throw new RangeError(`v_a is ${va.rows}×${va.cols} but a vector of ${width} entries is needed`);
  }
  const P = zeros(Q.rows, width, dtype);
  const R = zeros(K.rows, width, dtype);
  matmul(P, Q, W1);
  matmul(R, K, W2);
  return {
    rows: (out, r0, r1) => additiveScores(out, P, R, va, r0, r1),
    backward: (dScores) => {
      const dP = zeros(P.rows, width, dtype);
      const dR = zeros(R.rows, width, dtype);
      additiveScoresBackward(dP, dR, dScores, P, R, va);
      return queryKeyGradients(Q, K, dtype, (dQ, dK) => {
        matmulTransB(dQ, dP, W1);
        matmulTransB(dK, dR, W2);
      });
    },
  };
}

function radialScores(sigma: number, Q: Matrix, K: Matrix, dtype: DType): HeadScores {
  requireWidth(K, Q.cols, 'K');
  return {
    rows: (out, r0, r1) => gaussianScores(out, Q, K, sigma, r0, r1),
    backward: (dScores) =>
      queryKeyGradients(Q, K, dtype, (dQ, dK) => gaussianScoresBackward(dQ, dK, dScores, Q, K, sigma)),
  };
}

/** Fresh dQ and dK shaped like Q and K, filled by `fill`. */
function queryKeyGradients(Q: Matrix, K: Matrix, dtype: DType, fill: (dQ: Matrix, dK: Matrix) => void): { dQ: Matrix; dK: Matrix } {
  const dQ = zeros(Q.rows, Q.cols, dtype);
  const dK = zeros(K.rows, K.cols, dtype);
  fill(dQ, dK);
  return { dQ, dK };
}

function need(m: Matrix | undefined, name: string, score: ScoreFunction): Matrix {
  if (!m) throw new RangeError(`score=${score} needs ${name}`);
  return m;
}

function requireWidth(K: Matrix, width: number, name: string): void {
  if (K.cols !== width) throw new RangeError(`${name} has ${K.cols} columns per head but Q has ${width}`);
}
