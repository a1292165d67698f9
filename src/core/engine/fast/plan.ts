// From an AttentionSpec to one fast run: where every matrix lives in the shared memory, what
// JavaScript writes there first (the inputs, rounded to the run's dtype), and the phases of
// kernel calls the threads execute. Shapes are checked as the plan is made; a spec that does not
// fit returns undefined and the caller lets the reference engine report it.
import type { AttentionSpec, DType, Matrix } from '../../types';
import type { AttentionShape } from '../cost';
import { scoreScale } from '../scores';
import { sinusoidalPositionalEncoding } from '../positional';
import { ArenaPlan, bytesOf, type Block, type MatrixBlock } from './arena';
import type { KernelCall, Phase } from './pool';

/** The Attn struct of attention.c: a float64 scale, then int32 fields in this order. */
const ATTN_FIELDS = [
  'qPacked', 'kPacked', 'vPacked', 'nq', 'nk', 'd', 'dv',
  'scores', 'scaled', 'maskOut', 'masked', 'weights', 'out', 'ldo',
  'mask', 'maskKind', 'causal', 'causalOffset', 'padding', 'maskedAny',
  'rowFlags', 'rowSums', 'scratch', 'scratchStride',
] as const;
export type AttnField = (typeof ATTN_FIELDS)[number];
const ATTN_BYTES = 8 + 4 * ATTN_FIELDS.length;
const MASK_KIND = { none: 0, boolean: 1, additive: 2 } as const;
/** Columns per packed panel: the micro-kernel's width, two SIMD vectors (NB in kernel.h). */
const PANEL: Record<DType, number> = { float32: 8, float64: 4 };
/** Rows per packed quad of a left-hand side (MR in kernel.h). */
const QUAD = 4;
/** Bytes of one key's column of a query tile: TR rows (16 float32, 8 float64) of its dtype. */
const TILE_COLUMN_BYTES = 64;
/** Per-thread scratch of the online-softmax path: a tile of scores (TR × FB keys: 16 KiB), its
 * packing, running max and sum. */
const FLASH_SCRATCH_BYTES = 48 * 1024;
/** Cells the panel's max pooling writes at most: its views are at most 512 × 512 (float64). */
export const POOLED_CELLS = 512 * 512;

export interface HeadPlan {
  Q: MatrixBlock;
  K: MatrixBlock;
  V: MatrixBlock;
  kvHead: number;
  /** n×n blocks; absent in output-only runs. `scaled` is absent when the scale is 1 (= scores). */
  scores?: MatrixBlock;
  scaled?: MatrixBlock;
  masked?: MatrixBlock;
  weights?: MatrixBlock;
  output: MatrixBlock;
  rowFlags: Block;
  rowSums: MatrixBlock;
  attn: Block;
  attnFields: Record<AttnField, number>;
  scale: number;
}

export interface RunPlan {
  dtype: DType;
  arena: ArenaPlan;
  /** Inputs JavaScript copies into the memory before the threads start. */
  writes: { block: MatrixBlock; value: Matrix }[];
  phases: Phase[];
  input?: MatrixBlock;
  heads: HeadPlan[];
  /** The additive mask shared by every head (written by head 0), when anything masks. */
  mask?: MatrixBlock;
  concat: MatrixBlock;
  output: MatrixBlock;
  /** Q was projected through W_Q (the cost report counts projections). */
  projected: boolean;
  hasOutputProjection: boolean;
  /** Where pool_max works when the panel pools this run's matrices: a row of the widest matrix,
   * and the pooled cells (materialised runs only). */
  poolScratch?: { row: Block; cells: Block };
}

interface Projected {
  heads: MatrixBlock[];
  /** Packing the weights and the source, then computing (or copying out) the heads. */
  packs: KernelCall[];
  calls: KernelCall[];
}

/**
 * Plans the forward pass; `materialize` false is the O(n·d) output-only path. `weightsOnly` keeps
 * the weights alone of the n×n steps: the kernel computes the scores in their memory and scales,
 * masks and normalises each row in place (each number is read before it is written), so a run
 * whose caller reads only the weights (a model's layers) writes one n×n matrix per head, not four.
 */
export function planRun(spec: AttentionSpec, materialize: boolean, threads: number, weightsOnly = false): RunPlan | undefined {
  const { options } = spec;
  const dtype = options.dtype;
  const h = options.heads;
  const g = options.kvHeads ?? h;
  if (!Number.isInteger(h) || h < 1 || !Number.isInteger(g) || g < 1 || h % g !== 0) return undefined;
  const arena = new ArenaPlan();
  const writes: RunPlan['writes'] = [];
  const put = (value: Matrix): MatrixBlock => {
    const block = arena.matrix(value.rows, value.cols, dtype);
    writes.push({ block, value });
    return block;
  };
  const kernel = (name: string): string => `${name}_${dtype === 'float32' ? 'f32' : 'f64'}`;
  const size = bytesOf(dtype);
  /** B (K×N) of a product, packed into panels: from src with leading dimension ld (Bᵀ if transposed). */
  const packed = (src: number, ld: number, transposed: boolean, K: number, N: number): { block: Block; call: KernelCall } => {
    const block = arena.reserve(Math.ceil(N / PANEL[dtype]) * PANEL[dtype] * K * size);
    return { block, call: { kernel: kernel('pack'), args: [src, ld, transposed ? 1 : 0, block.offset, K, N] } };
  };
  /** A (M×K) of a product, packed into quads of rows: columns [k0, k0 + K) of a packing ldp wide. */
  const packRows = (src: MatrixBlock, dst: Block, ldp: number, k0: number): KernelCall => ({
    kernel: kernel('pack_rows'),
    args: [src.offset, src.cols, dst.offset, src.rows, src.cols, ldp, k0],
  });
  const rowsPacked = (rows: number, cols: number): Block => arena.reserve(Math.ceil(rows / QUAD) * QUAD * cols * size);
  /** Each source of a projection packed once (X serves W_Q, W_K and W_V). */
  const sourcePacks = new Map<MatrixBlock, { block: Block; call: KernelCall }>();
  const packedSource = (source: MatrixBlock): { block: Block; call?: KernelCall } => {
    const known = sourcePacks.get(source);
    if (known) return { block: known.block };
    const block = rowsPacked(source.rows, source.cols);
    const packing = { block, call: packRows(source, block, source.cols, 0) };
    sourcePacks.set(source, packing);
    return packing;
  };

  let inputValue: Matrix | undefined;
  if (spec.X) {
    inputValue = positioned(spec, spec.X);
    if (!inputValue) return undefined;
  }
  const input = inputValue && put(inputValue);
  const context = spec.context && put(spec.context);
  const kvSource = context ?? input;

  const project = (count: number, precomputed: Matrix | undefined, W: Matrix[] | undefined, source: MatrixBlock | undefined): Projected | undefined => {
    const split = (whole: MatrixBlock): Projected | undefined => {
      if (whole.cols % count !== 0) return undefined;
      if (count === 1) return { heads: [whole], packs: [], calls: [] };
      const width = whole.cols / count;
      const heads = Array.from({ length: count }, () => arena.matrix(whole.rows, width, dtype));
      const calls = heads.map((head, i) => ({
        kernel: kernel('copy2d'),
        args: [whole.offset + i * width * size, whole.cols, head.offset, width, whole.rows, width],
      }));
      return { heads, packs: [], calls };
    };
    if (precomputed) return split(put(precomputed));
    if (!source) return undefined;
    if (!W || W.length === 0) return split(source);
    if (W.length !== 1 && W.length !== count) return undefined;
    const blocks = W.map(put);
    if (blocks.some((w) => w.rows !== source.cols)) return undefined;
    if (blocks.length === 1 && blocks[0].cols % count !== 0) return undefined;
    const width = blocks.length === 1 ? blocks[0].cols / count : blocks[0].cols;
    if (blocks.some((w) => w.cols !== (blocks.length === 1 ? width * count : width))) return undefined;
    const heads = Array.from({ length: count }, () => arena.matrix(source.rows, width, dtype));
    const weights = heads.map((_, i) => {
      const w = blocks.length === 1 ? blocks[0] : blocks[i];
      const column = blocks.length === 1 ? i * width : 0;
      return packed(w.offset + column * size, w.cols, false, source.cols, width);
    });
    const sourcePacked = packedSource(source);
    const calls = heads.map((head, i) => ({
      kernel: kernel('gemm'),
      args: [sourcePacked.block.offset, weights[i].block.offset, head.offset, width, source.rows, width, source.cols],
    }));
    return { heads, packs: [...(sourcePacked.call ? [sourcePacked.call] : []), ...weights.map((w) => w.call)], calls };
  };

  const Q = project(h, spec.Q, spec.WQ, input);
  const K = project(g, spec.K, spec.WK, kvSource);
  const V = project(g, spec.V, spec.WV, kvSource);
  if (!Q || !K || !V) return undefined;
  const queries = Q.heads[0].rows;
  const keys = K.heads[0].rows;
  const dK = Q.heads[0].cols;
  const dV = V.heads[0].cols;
  if (K.heads[0].cols !== dK || V.heads[0].rows !== keys || keys === 0 || queries === 0) return undefined;

  const { mask, padding } = spec;
  if (mask && (mask.value.rows !== queries || mask.value.cols !== keys)) return undefined;
  if (padding && (padding.rows !== 1 || padding.cols !== keys)) return undefined;
  const maskIn = mask && put(mask.value);
  const paddingIn = padding && put(padding);
  const maskedAny = Boolean(mask || padding || options.causal);
  const maskOut = maskedAny && materialize && !weightsOnly ? arena.matrix(queries, keys, dtype) : undefined;

  // Q as the left-hand side of QKᵀ, Kᵀ (d_k × keys) and V (keys × d_v) as the right-hand sides
  // of QKᵀ and AV.
  const QP = Q.heads.map((q) => {
    const block = rowsPacked(q.rows, q.cols);
    return { block, call: packRows(q, block, q.cols, 0) };
  });
  const KP = K.heads.map((k) => packed(k.offset, k.cols, true, k.cols, k.rows));
  const VP = V.heads.map((v) => packed(v.offset, v.cols, false, v.rows, v.cols));
  // Per thread: the query tile's weights packed for AV (before them, its rows' running maxima: a
  // vector, 4 keys' worth, per row), or the online softmax's tiles.
  const scratchStride = materialize ? Math.ceil((TILE_COLUMN_BYTES * Math.max(keys, 4)) / 64) * 64 : FLASH_SCRATCH_BYTES;
  const scratch = arena.reserve(scratchStride * threads);

  const heads: HeadPlan[] = [];
  for (let i = 0; i < h; i++) {
    const kvHead = Math.floor(i / (h / g));
    const scale = scoreScale(spec, dK);
    const square = (): MatrixBlock | undefined => (materialize ? arena.matrix(queries, keys, dtype) : undefined);
    const step = (kept: boolean): MatrixBlock | undefined => (kept && !weightsOnly ? square() : undefined);
    const scores = step(true);
    const scaled = step(scale !== 1);
    const masked = step(maskedAny);
    const weights = square();
    const output = arena.matrix(queries, dV, dtype);
    const fields: Record<AttnField, number> = {
      qPacked: QP[i].block.offset, kPacked: KP[kvHead].block.offset, vPacked: VP[kvHead].block.offset,
      nq: queries, nk: keys, d: dK, dv: dV,
      scores: (scores ?? weights)?.offset ?? 0, scaled: scaled?.offset ?? 0, maskOut: i === 0 ? (maskOut?.offset ?? 0) : 0,
      masked: masked?.offset ?? 0, weights: weights?.offset ?? 0, out: output.offset, ldo: dV,
      mask: maskIn?.offset ?? 0, maskKind: MASK_KIND[mask?.kind ?? 'none'],
      causal: options.causal ? 1 : 0, causalOffset: options.causal === 'bottom-right' ? keys - queries : 0,
      padding: paddingIn?.offset ?? 0, maskedAny: maskedAny ? 1 : 0,
      rowFlags: 0, rowSums: 0, scratch: scratch.offset, scratchStride,
    };
    const rowFlags = arena.reserve(queries);
    const rowSums = arena.matrix(queries, 1, dtype);
    fields.rowFlags = rowFlags.offset;
    fields.rowSums = rowSums.offset;
    const attn = arena.reserve(ATTN_BYTES);
    heads.push({ Q: Q.heads[i], K: K.heads[kvHead], V: V.heads[kvHead], kvHead, scores, scaled, masked, weights, output, rowFlags, rowSums, attn, attnFields: fields, scale });
  }

  const attention = heads.map((head) => ({ kernel: kernel(materialize ? 'attention' : 'flash'), args: [head.attn.offset] }));
  const phases: Phase[] = [
    [...Q.packs, ...K.packs, ...V.packs],
    [...Q.calls, ...K.calls, ...V.calls],
    [...QP, ...KP, ...VP].map((p) => p.call),
    attention,
  ];
  const concat = h > 1 ? arena.matrix(queries, dV * h, dtype) : heads[0].output;
  // The heads' outputs side by side, and (for W_O) packed side by side, in one phase.
  const concatenate: KernelCall[] = h === 1 ? [] : heads.map((head, i) => ({
    kernel: kernel('copy2d'),
    args: [head.output.offset, dV, concat.offset + i * dV * size, concat.cols, queries, dV],
  }));
  phases.push(concatenate);
  let output = concat;
  if (spec.WO) {
    if (spec.WO.rows !== concat.cols) return undefined;
    const WO = put(spec.WO);
    const WOP = packed(WO.offset, WO.cols, false, WO.rows, WO.cols);
    phases[0].push(WOP.call);
    const concatPacked = rowsPacked(queries, concat.cols);
    concatenate.push(...heads.map((head, i) => packRows(head.output, concatPacked, concat.cols, i * dV)));
    output = arena.matrix(queries, WO.cols, dtype);
    phases.push([{ kernel: kernel('gemm'), args: [concatPacked.offset, WOP.block.offset, output.offset, WO.cols, queries, WO.cols, concat.cols] }]);
  }
  const poolScratch = materialize ? { row: arena.reserve(arena.widest * size), cells: arena.reserve(POOLED_CELLS * 8) } : undefined;
  return {
    dtype, arena, writes, phases: phases.filter((phase) => phase.length > 0), input, heads,
    mask: maskOut, concat, output, projected: Boolean(!spec.Q && spec.WQ?.length), hasOutputProjection: Boolean(spec.WO),
    poolScratch,
  };
}

/** The run's shape, as the reference's checks and cost report describe it. */
export function planShape(spec: AttentionSpec, plan: RunPlan): AttentionShape {
  const head = plan.heads[0];
  return {
    queries: head.Q.rows,
    keys: head.K.rows,
    dModel: plan.input?.cols ?? 0,
    dK: head.Q.cols,
    dV: head.V.cols,
    heads: plan.heads.length,
    kvHeads: spec.options.kvHeads,
    dtype: plan.dtype,
    projections: plan.projected,
    outputProjection: plan.hasOutputProjection,
  };
}

/** Writes a head's Attn struct (the scale as float64, then the int32 fields). */
export function writeAttn(buffer: SharedArrayBuffer, head: HeadPlan): void {
  new Float64Array(buffer, head.attn.offset, 1)[0] = head.scale;
  const ints = new Int32Array(buffer, head.attn.offset + 8, ATTN_FIELDS.length);
  ATTN_FIELDS.forEach((field, i) => (ints[i] = head.attnFields[field]));
}

/** X + PE (given, or sinusoidal on request), as the reference forms it; undefined if PE misfits. */
export function positioned(spec: AttentionSpec, X: Matrix): Matrix | undefined {
  const pe = spec.PE ?? (spec.options.sinusoidalPE ? sinusoidalPositionalEncoding(X.rows, X.cols) : undefined);
  if (!pe) return X;
  if (pe.rows !== X.rows || pe.cols !== X.cols) return undefined;
  // Both rounded to the run's dtype first, then added and rounded again, like the reference.
  const round = spec.options.dtype === 'float32' ? Math.fround : (v: number) => v;
  const data = new Float64Array(X.data.length);
  for (let p = 0; p < data.length; p++) data[p] = round(round(X.data[p]) + round(pe.data[p]));
  return { rows: X.rows, cols: X.cols, data };
}
