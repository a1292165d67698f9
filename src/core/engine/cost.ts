import { formatBytes } from '../format';
import type { AttentionSpec, DType } from '../types';

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
