// The head analyses' WebAssembly SIMD kernels (engine/fast/kernel.h head_rows, rollout_residual,
// rollout_product and head_divergence), run on the fast path's compute threads (engine/fast/pool.ts:
// one per core, each kernel call's rows shared out among them) over one memory kept from one
// analysis to the next (fresh pages cost a fault each: ~3 µs per 4 KiB).
// Heads go in by groups: a group is copied into the memory, then one pass gives every row's
// entropy and adds the heads into their layer's sum; once a layer is summed, its rollout factor Â
// is made and multiplied into the product. Scores and rollout are computed in the heads' own
// dtype, as numpy computes on float32 arrays: float32 attention's logarithms and products take
// 2–2.5× less time than in float64, and its slots half the bytes. Comparing two runs copies groups
// of pairs of heads, and one pass per pair gives every row's Jensen–Shannon divergence, in float64
// whatever the dtype (a small divergence is a difference of near-equal terms). There are two sets
// of slots, so the next group is copied in (and a model run's heads computed) while the threads
// read the last one. How exact each is: docs/analysis.md. Pure: no `vscode` import.
import { Arena, ArenaPlan, type Block, bytesOf, type MatrixBlock, MAX_BYTES, pagedIn } from '../engine/fast/arena';
import { type Phase, threadPool } from '../engine/fast/pool';
import type { DType, Matrix } from '../types';

/** Columns per packed panel of kernel.h's builds (pack: two vectors); pack_rows packs quads of 4 rows. */
const PANEL: Record<DType, number> = { float32: 8, float64: 4 };
const SUFFIX: Record<DType, string> = { float32: 'f32', float64: 'f64' };

/**
 * Bytes of head slots per set (two sets): 48 MiB is a GPT-2-small layer's 12 float32 heads of 1024
 * tokens, or 6 float64 ones. A layer in one group took 12 × 12 float32 heads' scores and rollout
 * from ~250 to ~215 ms (against groups of 4; fewer runs, each layer's sum written once). The memory
 * stays held for the next analysis.
 */
const SET_BYTES = 48 * 2 ** 20;

export type Weights = Float32Array | Float64Array;

/** The memory of the latest analysis (a matrix on it: Arena's `recycle`), taken while one runs. */
let spare: Matrix | undefined;

/** Bytes of a plan besides its n × n matrices (per-row entropies, the flag), at most: well under 1 MiB up to 16,384 tokens. */
const SMALL_BLOCKS = 2 ** 20;

/** The most tokens (a multiple of 16) for which `matrices` n × n matrices of `dtype` and the small blocks fit WebAssembly's 4 GiB. */
function maxTokens(matrices: number, dtype: DType): number {
  return Math.floor(Math.sqrt((MAX_BYTES - SMALL_BLOCKS) / (matrices * bytesOf(dtype))) / 16) * 16;
}

/**
 * Heads per group: as many heads of `headBytes` as a set holds (at least one; at most `most` when
 * given), in groups of equal size.
 */
function groupSize(heads: number, headBytes: number, most = Infinity): number {
  const fit = Math.max(1, Math.min(most, Math.floor(SET_BYTES / headBytes)));
  return Math.ceil(heads / Math.ceil(heads / fit));
}

/** The dtype that holds every one of `heads` exactly. */
export function dtypeOf(heads: Weights[]): DType {
  return heads.every((head) => head instanceof Float32Array) ? 'float32' : 'float64';
}

/** A view of `length` numbers of `dtype` at `offset`. */
function numbers(buffer: ArrayBufferLike, offset: number, length: number, dtype: DType): Weights {
  return dtype === 'float32' ? new Float32Array(buffer, offset, length) : new Float64Array(buffer, offset, length);
}

/** The heads of one group, one after another from the start of `slots`, as `dtype` (rounded or widened to it). */
function copyHeads(buffer: SharedArrayBuffer, slots: Block, heads: Weights[], elements: number, dtype: DType): void {
  heads.forEach((head, k) => numbers(buffer, slots.offset + k * elements * bytesOf(dtype), elements, dtype).set(head));
}

/**
 * A memory holding `plan` (the latest analysis's memory when large enough, taken until `release`);
 * a RangeError saying `what` is offered up to the tokens whose `matrices` matrices of `dtype` fit.
 */
function arenaFor(plan: ArenaPlan, what: string, matrices: number, dtype: DType, tokens: number): Arena {
  if (plan.totalBytes > MAX_BYTES) {
    throw new RangeError(`${what} offered up to ${maxTokens(matrices, dtype)} tokens (${matrices} n × n ${dtype} matrices must fit WebAssembly's 4 GiB); this input has ${tokens}.`);
  }
  const arena = new Arena(plan, 'float64', spare);
  spare = undefined;
  return arena;
}

/**
 * Runs on the threads over one memory, on two sets of slots in turn: a set is written again only
 * once the run that read it has ended and its results were read.
 */
class Turns {
  private readonly done: [Promise<unknown>, Promise<unknown>] = [Promise.resolve(), Promise.resolve()];
  private next = 0;

  constructor(private readonly arena: Arena) {}

  /** Waits for set `turn`'s last run, then `write`s it and runs `phases`; `read` gives the results. */
  async run<T>(write: (turn: number) => Phase[], read: (turn: number) => T): Promise<{ results: Promise<T> }> {
    const turn = this.next;
    this.next = 1 - turn;
    await this.done[turn];
    const phases = write(turn);
    const results = threadPool()
      .run(this.arena.memory, phases)
      .then(() => read(turn));
    this.done[turn] = results.catch(() => undefined);
    return { results };
  }

  /** Once no run reads or writes the memory any more, it goes to the next analysis. */
  async release(first: MatrixBlock): Promise<void> {
    await Promise.all(this.done);
    spare = this.arena.view(first);
  }
}

interface Layout {
  /** The two sets of head slots, and per head of a set, per row, the entropy (float64). */
  slots: [MatrixBlock, MatrixBlock];
  entropy: [Block, Block];
  /** Non-zero while every row of every head so far ends at its diagonal (int32; head_rows clears it). */
  causal: Block;
  sum?: MatrixBlock;
  augmented?: MatrixBlock;
  packed?: MatrixBlock;
  /** The products in panels (pack's layout), the latest one the next one's factor. */
  products?: [MatrixBlock, MatrixBlock];
  /** The last product, as rows rounded up to whole panels. */
  result?: MatrixBlock;
}

export interface StackPassOptions {
  /** Self-attention only. */
  rollout: boolean;
  /** Every head is square and has no weight past its diagonal (AttentionStack.lowerTriangular):
   * the kernels read only the lower triangles. Nothing checks it. (Copying only them was tried:
   * 1,024 row copies a head cost twice the whole head's one copy.) */
  lowerTriangular?: boolean;
  /** At most this many heads per group (default: as many as a set of slots holds). */
  headsPerGroup?: number;
}

/**
 * One analysis in `dtype` (heads of the other dtype are rounded or widened to it): heads go in by
 * groups (`group` heads at most), layer by layer.
 */
export class StackPass {
  private readonly arena: Arena;
  private readonly layout: Layout;
  private readonly turns: Turns;
  /** Heads per group. */
  readonly group: number;
  /** Layers folded into the product so far. */
  private layers = 0;
  /** The latest product's block (layout.products[0] or [1]). */
  private product = 0;
  /** R's array, its pages faulted in while the threads run the first group (see `addHeads`). */
  private output?: Weights;

  constructor(
    private readonly queries: number,
    private readonly keys: number,
    private readonly layerCount: number,
    private readonly headCount: number,
    private readonly dtype: DType,
    private readonly options: StackPassOptions,
  ) {
    const plan = new ArenaPlan();
    this.group = groupSize(headCount, queries * keys * bytesOf(dtype), options.headsPerGroup);
    const layout: Layout = {
      slots: [plan.matrix(this.group * queries, keys, dtype), plan.matrix(this.group * queries, keys, dtype)],
      entropy: [plan.reserve(this.group * queries * 8), plan.reserve(this.group * queries * 8)],
      causal: plan.reserve(4),
    };
    if (options.rollout) {
      const n = queries;
      const padded = this.resultColumns(); // whole panels, and so whole quads of 4 rows
      layout.sum = plan.matrix(n, n, dtype);
      layout.augmented = plan.matrix(n, n, dtype);
      layout.packed = plan.matrix(padded, n, dtype);
      layout.products = [plan.matrix(padded, n, dtype), plan.matrix(padded, n, dtype)];
      layout.result = plan.matrix(n, padded, dtype);
    }
    this.arena = arenaFor(plan, 'The head analyses are', 8, dtype, Math.max(queries, keys));
    new Int32Array(this.arena.buffer, layout.causal.offset, 1)[0] = 1;
    this.layout = layout;
    this.turns = new Turns(this.arena);
  }

  /**
   * Adds the heads `first`… of the current layer (in order from 0, at most `group` of them; the
   * layer's last group folds it into the rollout). Resolves once they are copied in and their run
   * is queued, to each head's sum over rows of −Σ_j a·ln a when the run ends.
   */
  async addHeads(heads: Weights[], first: number): Promise<{ results: Promise<number[]> }> {
    const { queries, keys, layout } = this;
    const elements = queries * keys;
    const lastOfLayer = first + heads.length === this.headCount;
    const { dtype } = this;
    const lowerGiven = this.options.lowerTriangular === true && queries === keys;
    const queued = await this.turns.run(
      (turn) => {
        copyHeads(this.arena.buffer, layout.slots[turn], heads, elements, dtype);
        const rows: Phase = [
          {
            kernel: `head_rows_${SUFFIX[dtype]}`,
            args: [layout.slots[turn].offset, heads.length, elements, queries, keys, layout.entropy[turn].offset, layout.sum?.offset ?? 0, first === 0 ? 1 : 0, layout.sum ? layout.causal.offset : 0, lowerGiven ? 1 : 0],
          },
        ];
        return lastOfLayer ? [rows, ...this.foldLayer()] : [rows];
      },
      (turn) => {
        const rows = new Float64Array(this.arena.buffer, layout.entropy[turn].offset, heads.length * queries);
        return heads.map((_, k) => {
          let total = 0;
          for (let i = k * queries; i < (k + 1) * queries; i++) total += rows[i];
          return total;
        });
      },
    );
    // R goes to the caller in an array of its own (the worker transfers it to the host). Its fresh
    // pages cost a fault each on first touch, about 30 ms for 1024 tokens on this loaded VM: taken
    // here, while the threads run, rather than after the last run.
    if (layout.sum && !this.output) this.output = pagedIn(new (dtype === 'float32' ? Float32Array : Float64Array)(queries * queries));
    return queued;
  }

  /** Row length of the last product: n rounded up to whole panels of the dtype. */
  private resultColumns(): number {
    return Math.ceil(this.queries / PANEL[this.dtype]) * PANEL[this.dtype];
  }

  /** The phases folding the layer just summed into the rollout: R ← Â_l · R (R = Â_0 at first). */
  private foldLayer(): Phase[] {
    const { sum, augmented, packed, products, result, causal } = this.layout;
    if (!sum || !augmented || !packed || !products || !result) return [];
    const n = this.queries;
    const suffix = SUFFIX[this.dtype];
    const phases: Phase[] = [[{ kernel: `rollout_residual_${suffix}`, args: [sum.offset, n, this.headCount, augmented.offset] }]];
    this.layers++;
    if (this.layers === 1) {
      if (this.layerCount > 1) phases.push([{ kernel: `pack_${suffix}`, args: [augmented.offset, n, 0, products[0].offset, n, n] }]);
      return phases;
    }
    const next = 1 - this.product;
    const width = PANEL[this.dtype];
    // The last product goes to rows (a causal one leaves its upper triangle unwritten: `rollout` reads the lower one).
    const [to, ldc, panel] = this.layers === this.layerCount ? [result.offset, result.cols, width] : [products[next].offset, width, n * width];
    phases.push([{ kernel: `pack_rows_${suffix}`, args: [augmented.offset, n, packed.offset, n, n, n, 0] }]);
    phases.push([{ kernel: `rollout_product_${suffix}`, args: [packed.offset, products[this.product].offset, to, n, causal.offset, ldc, panel] }]);
    this.product = next;
    return phases;
  }

  /** R [n × n] row-major in the heads' dtype, a copy; null before every layer was folded. Call once the runs have ended. */
  rollout(): Weights | null {
    const { augmented, result, causal } = this.layout;
    const { output: rows, dtype } = this;
    if (!augmented || !result || !rows || this.layers !== this.layerCount || this.layers === 0) return null;
    const n = this.queries;
    if (this.layers === 1) {
      rows.set(numbers(this.arena.buffer, augmented.offset, n * n, dtype));
      return rows;
    }
    const { cols } = result;
    const from = numbers(this.arena.buffer, result.offset, n * cols, dtype);
    // A causal R is lower triangular: the fresh array's zeros are its upper triangle.
    const lower = new Int32Array(this.arena.buffer, causal.offset, 1)[0] !== 0;
    for (let i = 0; i < n; i++) rows.set(from.subarray(i * cols, i * cols + (lower ? i + 1 : n)), i * n);
    return rows;
  }

  /** Hands the memory on to the next analysis once the threads are done with it (also after a failure). */
  release(): Promise<void> {
    return this.turns.release(this.layout.slots[0]);
  }
}

/** The Jensen–Shannon divergence of pairs of heads of two runs of one shape, by groups of pairs. */
export class DivergencePass {
  private readonly arena: Arena;
  private readonly turns: Turns;
  /** Per set: the slots of A's heads, then B's, and per pair each row's divergence. */
  private readonly slots: [MatrixBlock, MatrixBlock];
  private readonly rows: [Block, Block];
  /** Pairs per group. */
  readonly group: number;

  constructor(
    private readonly queries: number,
    private readonly keys: number,
    pairs: number,
    pairsPerGroup?: number,
  ) {
    const plan = new ArenaPlan();
    this.group = groupSize(pairs, 2 * queries * keys * 8, pairsPerGroup);
    this.slots = [plan.matrix(2 * this.group * queries, keys, 'float64'), plan.matrix(2 * this.group * queries, keys, 'float64')];
    this.rows = [plan.reserve(this.group * queries * 8), plan.reserve(this.group * queries * 8)];
    this.arena = arenaFor(plan, 'Comparing runs is', 4, 'float64', Math.max(queries, keys));
    this.turns = new Turns(this.arena);
  }

  /**
   * Per pair (at most `group`), the mean over queries of the rows' divergence ½KL(a‖m) + ½KL(b‖m),
   * m = (a + b)/2, in nats. Two float32 heads are read as they are; otherwise both as float64 (a
   * float32 one exactly widened). Resolves once the pairs are copied in and their run is queued.
   */
  meanRowDivergences(a: Weights[], b: Weights[]): Promise<{ results: Promise<number[]> }> {
    const { queries, keys } = this;
    const elements = queries * keys;
    return this.turns.run(
      (turn) => {
        const dtype = dtypeOf([...a, ...b]);
        copyHeads(this.arena.buffer, this.slots[turn], [...a, ...b], elements, dtype);
        const slot = (k: number) => this.slots[turn].offset + k * elements * bytesOf(dtype);
        const kernel = `head_divergence_${SUFFIX[dtype]}`;
        return [a.map((_, k) => ({ kernel, args: [slot(k), slot(a.length + k), queries, keys, this.rows[turn].offset + k * queries * 8] }))];
      },
      (turn) => {
        const rows = new Float64Array(this.arena.buffer, this.rows[turn].offset, a.length * queries);
        return a.map((_, k) => {
          let total = 0;
          for (let i = k * queries; i < (k + 1) * queries; i++) total += rows[i];
          return total / queries;
        });
      },
    );
  }

  release(): Promise<void> {
    return this.turns.release(this.slots[0]);
  }
}
