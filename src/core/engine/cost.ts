import { formatBytes } from '../words';
import type { AttentionSpec, DType, Matrix } from '../types';

export interface AttentionShape {
  queries: number;
  keys: number;
  dModel: number;
  /** Per-head widths of queries/keys and of values. */
  dK: number;
  dV: number;
  heads: number;
  /** Grouped-query attention: number of KV heads (default `heads`). */
  kvHeads?: number;
  /** Default 1: the panel asks "12 layers × 12 heads at n = 512". */
  layers?: number;
  dtype: DType;
  /** Q/K/V are projected from d_model-wide inputs (default true; false for precomputed Q/K/V). */
  projections?: boolean;
  /** Concat(heads) · W_O back to d_model (default true). */
  outputProjection?: boolean;
  /** The backward pass is kept too (default false). */
  gradients?: boolean;
}

export interface AttentionCost {
  /** Forward floating-point operations: a multiply-add counts 2; scale, mask and softmax 5 per score. */
  flops: number;
  /** The attention-weight matrices: one Lq×Lk matrix per head and layer (the tutorial's count). */
  attentionBytes: number;
  /** Everything `runAttention` keeps: every intermediate of every head, plus gradients if asked. */
  totalBytes: number;
}

const SOFTMAX_FLOPS_PER_SCORE = 5;

export function attentionCost(shape: AttentionShape): AttentionCost {
  const { queries: q, keys: k, dModel, dK, dV, heads: h } = shape;
  const g = shape.kvHeads ?? h;
  const layers = shape.layers ?? 1;
  const project = shape.projections ?? true;
  const outputProjection = shape.outputProjection ?? true;
  const bytes = shape.dtype === 'float32' ? 4 : 8;

  const projectionFlops = project ? 2 * q * dModel * h * dK + 2 * k * dModel * g * (dK + dV) : 0;
  const attentionFlops = h * (2 * q * k * dK + SOFTMAX_FLOPS_PER_SCORE * q * k + 2 * q * k * dV);
  const outputFlops = outputProjection ? 2 * q * h * dV * dModel : 0;

  const scores = q * k;
  // Kept per head: scores, scaled, masked, weights (+ dA, dS); shared by all heads: the mask and
  // the scratch matrix of the permutation check's output-only rerun.
  const squarePerHead = shape.gradients ? 6 : 4;
  const perHeadVectors = q * dK + k * dK + k * dV + q * dV;
  const problemVectors = (project ? q * dModel : 0) + q * h * dV + q * (outputProjection ? dModel : h * dV);
  const elements = h * (squarePerHead * scores + perHeadVectors * (shape.gradients ? 2 : 1)) + 2 * scores + problemVectors;

  return {
    flops: layers * (projectionFlops + attentionFlops + outputFlops),
    attentionBytes: layers * h * scores * bytes,
    totalBytes: layers * elements * bytes,
  };
}

/** What a mask lets a kernel skip of the Lq×Lk products (one mask shared by every head). */
export interface MaskSavings {
  /** Share of the Lq×Lk entries the mask blocks (−∞). */
  blockedShare: number;
  /** Forward FLOPs of those entries over all heads: their QKᵀ, softmax and A·V work. */
  flopsSaved: number;
  /** Side of the square tiles counted below. */
  blockSize: number;
  /** Share of blockSize² tiles blocked entirely, which a block-sparse kernel never computes
   * (FlexAttention's BlockMask `sparsity`, there with 128-wide tiles). */
  skippedBlocksShare: number;
}

/** FlexAttention's tile, or for small matrices the power of two ≤ n/4 (from 2) so the structure shows. */
export function tileFor(keys: number): number {
  return Math.min(128, 2 ** Math.max(1, Math.floor(Math.log2(Math.max(1, keys / 4)))));
}

export function maskSavings(mask: Matrix, shape: Pick<AttentionShape, 'heads' | 'dK' | 'dV'>, blockSize = tileFor(mask.cols)): MaskSavings {
  const { rows, cols, data } = mask;
  let blocked = 0;
  for (let p = 0; p < data.length; p++) if (data[p] === -Infinity) blocked++;
  let tiles = 0;
  let skipped = 0;
  for (let r0 = 0; r0 < rows; r0 += blockSize) {
    for (let c0 = 0; c0 < cols; c0 += blockSize) {
      tiles++;
      let all = true;
      for (let i = r0; all && i < Math.min(rows, r0 + blockSize); i++) {
        for (let j = c0; j < Math.min(cols, c0 + blockSize); j++) {
          if (data[i * cols + j] !== -Infinity) {
            all = false;
            break;
          }
        }
      }
      if (all) skipped++;
    }
  }
  return {
    blockedShare: data.length === 0 ? 0 : blocked / data.length,
    flopsSaved: shape.heads * blocked * (2 * shape.dK + SOFTMAX_FLOPS_PER_SCORE + 2 * shape.dV),
    blockSize,
    skippedBlocksShare: tiles === 0 ? 0 : skipped / tiles,
  };
}

/** What a full run of `spec` keeps (every head's n×n matrices and the rest), checked against a
 * size limit before the run starts — by the extension and the CLI alike. */
export interface RunFootprint {
  numbers: number;
  /** e.g. "3.02 GiB as float64; 1 head of 9000×9000 attention". */
  description: string;
}

export function runFootprint(spec: AttentionSpec): RunFootprint {
  const heads = spec.options.heads;
  const queries = spec.X?.rows ?? spec.Q?.rows ?? 0;
  const keys = spec.context?.rows ?? spec.K?.rows ?? spec.X?.rows ?? 0;
  const width = (whole: number | undefined, perHead: number | undefined) =>
    perHead !== undefined ? perHead : Math.ceil((whole ?? 0) / heads);
  const split = (matrices: { cols: number }[] | undefined) =>
    matrices && matrices.length > 1 ? matrices[0].cols : undefined;
  const dtype = spec.options.dtype;
  const cost = attentionCost({
    queries,
    keys,
    dModel: spec.X?.cols ?? spec.Q?.cols ?? 0,
    dK: width(spec.WQ?.[0].cols ?? spec.Q?.cols, split(spec.WQ)),
    dV: width(spec.WV?.[0].cols ?? spec.V?.cols, split(spec.WV)),
    heads,
    kvHeads: spec.options.kvHeads,
    dtype,
    projections: spec.X !== undefined,
    outputProjection: spec.WO !== undefined,
    gradients: spec.options.gradients,
  });
  return {
    numbers: cost.totalBytes / (dtype === 'float32' ? 4 : 8),
    description: `${formatBytes(cost.totalBytes)} as ${dtype}; ${heads} head${heads === 1 ? '' : 's'} of ${queries}×${keys} attention`,
  };
}
