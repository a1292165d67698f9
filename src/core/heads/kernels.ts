// The head analyses' WebAssembly SIMD kernels (engine/fast/kernel.h head_rows and head_divergence,
// attention.c rollout_residual_f64 and rollout_product_f64), run on this thread over one memory
// kept from one analysis to the next (fresh pages cost a fault each: ~3 µs per 4 KiB, ≈ 40 ms for
// the 56 MB of 1024 tokens; the memory stays held, like the stacks it serves).
// A head is copied into the memory, then one pass gives every row's entropy and adds the head into
// its layer's sum; once a layer is summed, its rollout factor Â is made and multiplied into the
// product, in float64. Comparing two runs copies a head of each and one pass gives every row's
// Jensen–Shannon divergence. Why float64 and how exact: docs/analysis.md. Pure: no `vscode` import.
import { Arena, ArenaPlan, type Block, type MatrixBlock, MAX_BYTES } from '../engine/fast/arena';
import { kernelsModule } from '../engine/fast/pool';
import type { Matrix } from '../types';

/** Columns per packed panel and rows per packed quad of kernel.h's float64 build (pack, pack_rows). */
const PANEL = 4;
const QUAD = 4;

type Kernel = (...args: number[]) => void;

/** The memory of the latest analysis (a matrix on it: Arena's `recycle`), reused when large enough. */
let recycle: Matrix | undefined;
const instances = new WeakMap<WebAssembly.Memory, WebAssembly.Exports>();

interface Layout {
  head: MatrixBlock;
  /** Per head of the layer, per row: the entropy (float64) and the end of its non-zeros (int32). */
  entropy: Block;
  ends: Block;
  sum?: MatrixBlock;
  augmented?: MatrixBlock;
  packed?: MatrixBlock;
  /** The products in panels (pack_f64's layout), the latest one the next one's factor. */
  products?: [MatrixBlock, MatrixBlock];
  /** The last product, as rows rounded up to whole panels. */
  result?: MatrixBlock;
}

/** The most tokens for which `matrices` n × n float64 matrices fit WebAssembly's 4 GiB. */
function maxTokens(matrices: number): number {
  return Math.floor(Math.sqrt(MAX_BYTES / (matrices * 8)) / 16) * 16;
}

/**
 * The kernels on a memory holding `plan` (the latest analysis's memory when large enough); a
 * RangeError saying `what` is offered up to the tokens whose `matrices` float64 matrices fit.
 */
function kernelsOn(plan: ArenaPlan, first: MatrixBlock, what: string, matrices: number, tokens: number): { arena: Arena; kernels: Record<string, Kernel> } {
  if (plan.totalBytes > MAX_BYTES) {
    throw new RangeError(`${what} offered up to ${maxTokens(matrices)} tokens (${matrices} n × n float64 matrices must fit WebAssembly's 4 GiB); this input has ${tokens}.`);
  }
  const arena = new Arena(plan, 'float64', recycle);
  recycle = arena.view(first);
  let exports = instances.get(arena.memory);
  if (!exports) {
    exports = new WebAssembly.Instance(kernelsModule(), { env: { memory: arena.memory } }).exports;
    instances.set(arena.memory, exports);
  }
  return { arena, kernels: exports as Record<string, Kernel> };
}

/** One analysis: heads go in one at a time, layer by layer; `rollout` only for self-attention. */
export class StackPass {
  private readonly arena: Arena;
  private readonly layout: Layout;
  private readonly kernels: Record<string, Kernel>;
  /** Layers folded into the product so far, and whether the product is still lower triangular. */
  private layers = 0;
  private lower = true;
  /** The latest product's block (layout.products[0] or [1]). */
  private product = 0;

  constructor(
    private readonly queries: number,
    private readonly keys: number,
    private readonly layerCount: number,
    private readonly headCount: number,
    rollout: boolean,
  ) {
    const plan = new ArenaPlan();
    // Either dtype of head fits a float64 slot.
    const layout: Layout = {
      head: plan.matrix(queries, keys, 'float64'),
      entropy: plan.reserve(headCount * queries * 8),
      ends: plan.reserve(headCount * queries * 4),
    };
    if (rollout) {
      const n = queries;
      const padded = Math.ceil(n / QUAD) * QUAD; // QUAD = PANEL
      layout.sum = plan.matrix(n, n, 'float64');
      layout.augmented = plan.matrix(n, n, 'float64');
      layout.packed = plan.matrix(padded, n, 'float64');
      layout.products = [plan.matrix(padded, n, 'float64'), plan.matrix(padded, n, 'float64')];
      layout.result = plan.matrix(n, padded, 'float64');
    }
    ({ arena: this.arena, kernels: this.kernels } = kernelsOn(plan, layout.head, 'The head analyses are', 6, Math.max(queries, keys)));
    this.layout = layout;
  }

  /**
   * The sum over rows of −Σ_j a·ln a for the `head`-th head of the current layer (heads in order
   * from 0), adding it into the layer's sum when there is a rollout.
   */
  addHead(weights: Float32Array | Float64Array, head: number): number {
    const { queries, keys, layout, arena } = this;
    const float32 = weights instanceof Float32Array;
    const into = float32 ? new Float32Array(arena.buffer, layout.head.offset, queries * keys) : new Float64Array(arena.buffer, layout.head.offset, queries * keys);
    into.set(weights);
    const entropy = layout.entropy.offset + head * queries * 8;
    const ends = layout.ends.offset + head * queries * 4;
    this.kernels[float32 ? 'head_rows_f32' : 'head_rows_f64'](layout.head.offset, queries, keys, entropy, ends, layout.sum?.offset ?? 0, head === 0 ? 1 : 0, 0, 1);
    const rows = new Float64Array(arena.buffer, entropy, queries);
    if (layout.sum) this.lower &&= new Int32Array(arena.buffer, ends, queries).every((end, i) => end <= i + 1);
    let total = 0;
    for (let i = 0; i < queries; i++) total += rows[i];
    return total;
  }

  /** Folds the layer whose heads were just added into the rollout: R ← Â_l · R (R = Â_0 at first). */
  foldLayer(): void {
    const { sum, augmented, packed, products, result } = this.layout;
    if (!sum || !augmented || !packed || !products || !result) return;
    const n = this.queries;
    const kernels = this.kernels;
    kernels.rollout_residual_f64(sum.offset, n, this.headCount, augmented.offset, 0, 1);
    this.layers++;
    if (this.layers === 1) {
      if (this.layerCount > 1) kernels.pack_f64(augmented.offset, n, 0, products[0].offset, n, n, 0, 1);
      return;
    }
    kernels.pack_rows_f64(augmented.offset, n, packed.offset, n, n, n, 0, 0, 1);
    const next = 1 - this.product;
    const last = this.layers === this.layerCount;
    // The last product goes to rows: a causal one leaves its upper triangle unwritten, so zeros first.
    if (last) this.arena.view(result).data.fill(0);
    const [to, ldc, panel] = last ? [result.offset, result.cols, PANEL] : [products[next].offset, PANEL, n * PANEL];
    kernels.rollout_product_f64(packed.offset, products[this.product].offset, to, n, this.lower ? 1 : 0, ldc, panel, 0, 1);
    this.product = next;
  }

  /** R [n × n] row-major, a copy; null before every layer was folded. */
  rollout(): Float64Array | null {
    const { augmented, result } = this.layout;
    if (!augmented || !result || this.layers !== this.layerCount || this.layers === 0) return null;
    const n = this.queries;
    if (this.layers === 1) return this.arena.view(augmented).data.slice() as Float64Array;
    const from = this.arena.view(result).data;
    const rows = new Float64Array(n * n);
    for (let i = 0; i < n; i++) rows.set(from.subarray(i * result.cols, i * result.cols + n), i * n);
    return rows;
  }
}

/** The Jensen–Shannon divergence of pairs of heads of two runs of one shape, a pass per pair. */
export class DivergencePass {
  private readonly arena: Arena;
  private readonly kernels: Record<string, Kernel>;
  private readonly a: MatrixBlock;
  private readonly b: MatrixBlock;
  private readonly rows: Block;

  constructor(
    private readonly queries: number,
    private readonly keys: number,
  ) {
    const plan = new ArenaPlan();
    // Either dtype of head fits a float64 slot.
    this.a = plan.matrix(queries, keys, 'float64');
    this.b = plan.matrix(queries, keys, 'float64');
    this.rows = plan.reserve(queries * 8);
    ({ arena: this.arena, kernels: this.kernels } = kernelsOn(plan, this.a, 'Comparing runs is', 2, Math.max(queries, keys)));
  }

  /**
   * The mean over queries of the rows' divergence ½KL(a‖m) + ½KL(b‖m), m = (a + b)/2, in nats. Two
   * float32 heads are read as they are; otherwise both as float64 (a float32 one exactly widened).
   */
  meanRowDivergence(a: Float32Array | Float64Array, b: Float32Array | Float64Array): number {
    const { queries, keys, arena } = this;
    const float32 = a instanceof Float32Array && b instanceof Float32Array;
    const slot = ({ offset }: Block) => (float32 ? new Float32Array(arena.buffer, offset, queries * keys) : new Float64Array(arena.buffer, offset, queries * keys));
    slot(this.a).set(a);
    slot(this.b).set(b);
    this.kernels[float32 ? 'head_divergence_f32' : 'head_divergence_f64'](this.a.offset, this.b.offset, queries, keys, this.rows.offset, 0, 1);
    const rows = new Float64Array(arena.buffer, this.rows.offset, queries);
    let total = 0;
    for (let i = 0; i < queries; i++) total += rows[i];
    return total / queries;
  }
}
