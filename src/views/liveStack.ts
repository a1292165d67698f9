// The attention of a sequence while a model writes it, as the heads page holds it: the prompt's
// lower triangles (PromptAttention, sent once), then one row per step (AttentionRow, each step's
// own), so that the model view and head view grow by a row a token from numbers the page already
// has — nothing is sent again. It answers the two questions those views ask (pooled thumbnails and
// top-k lines) with the worker's own functions (core/heads/pool.ts), as an AttentionStack.
// The thumbnails are pooled as the rows come (each row once into its blocks' max and sum), not
// from every head's whole map at each token: on the page, pooling 144 heads of 160 tokens whole at
// each step took the CPU the tokens needed. Pure: the page (webview/heads/live.ts) and the tests use it.
import { headLines, poolGrid } from '../core/heads/pool';
import type { AttentionStack, PoolMode, StackSource } from '../core/heads/stack';
import type { AttentionRow, HeadsAnswer, HeadsQuery, PromptAttention } from '../protocol';

export class LiveStack implements AttentionStack {
  readonly source: StackSource;
  readonly layerCount: number;
  readonly headCount: number;
  readonly lowerTriangular = true;
  /** Labels of the tokens with a row so far (the newest token has none until the next step reads it). */
  readonly tokens: string[];
  private readonly rows: AttentionRow[] = [];
  /** Tokens read but without a row yet: the prompt's last, then each generated token until the step after it reads it. */
  private readonly pending: string[];
  private readonly prompt: PromptAttention & { weights: Float32Array };
  /** One head's dense [n × n] weights, rewritten by each `weights` call (see there). */
  private scratch = new Float32Array(0);
  /** Every head pooled in blocks of rowBlock × colBlock over the first `rows` query rows: each cell's max and sum. */
  private pool: { rowBlock: number; colBlock: number; rows: number; rowCells: number; colCells: number; tops: Float32Array; sums: Float64Array } | undefined;

  /** `labels`: the prompt's tokens, all of them (the last one's row is step 0's). */
  constructor(prompt: PromptAttention & { weights: Float32Array }, labels: readonly string[], source: StackSource) {
    this.prompt = prompt;
    this.layerCount = prompt.layers;
    this.headCount = prompt.heads;
    this.tokens = labels.slice(0, prompt.queries);
    this.source = source;
    this.pending = labels.slice(prompt.queries);
  }

  get keyTokens(): string[] {
    return this.tokens;
  }

  get queryCount(): number {
    return this.tokens.length;
  }

  get keyCount(): number {
    return this.tokens.length;
  }

  /** A step: the row it computed (of the token it read, the next without one) and the token it chose. */
  add(row: AttentionRow, token: string): void {
    if (row.position !== this.queryCount || row.keys !== row.position + 1 || row.layers !== this.layerCount || row.heads !== this.headCount) {
      throw new RangeError(`step row at ${row.position} (${row.layers} × ${row.heads} × ${row.keys}) does not follow the ${this.queryCount} rows had`);
    }
    this.rows.push(row);
    this.tokens.push(this.pending.shift() as string);
    this.pending.push(token);
  }

  /**
   * One head's [n × n] weights, assembled from the prompt's triangle and the steps' rows into one
   * buffer that the next call rewrites: pooling and top-k read each head before asking the next.
   */
  weights(layer: number, head: number): Float32Array {
    const n = this.queryCount;
    if (this.scratch.length !== n * n) this.scratch = new Float32Array(n * n);
    else this.scratch.fill(0);
    const { queries, weights } = this.prompt;
    const triangle = (queries * (queries + 1)) / 2;
    const base = (layer * this.headCount + head) * triangle;
    for (let q = 0; q < queries; q++) this.scratch.set(weights.subarray(base + (q * (q + 1)) / 2, base + ((q + 1) * (q + 2)) / 2), q * n);
    for (const row of this.rows) {
      const at = (layer * row.heads + head) * row.keys;
      this.scratch.set(row.weights.subarray(at, at + row.keys), row.position * n);
    }
    return this.scratch;
  }

  /**
   * Head `head` of `layer` pooled by `mode` in blocks of rowBlock × colBlock, as poolMap pools it
   * (poolGrid asks here first): the pool is brought up to the rows had, each new row added once;
   * other blocks (the sequence passed a multiple of the thumbnail's side, or another size was
   * chosen) pool every row again.
   */
  pooled(layer: number, head: number, mode: PoolMode, rowBlock: number, colBlock: number): Float32Array {
    const n = this.queryCount;
    if (this.pool?.rowBlock !== rowBlock || this.pool.colBlock !== colBlock) this.pool = { rowBlock, colBlock, rows: 0, rowCells: 0, colCells: 0, tops: new Float32Array(0), sums: new Float64Array(0) };
    const pool = this.pool;
    if (pool.rows < n) {
      this.widen(pool, Math.ceil(n / rowBlock), Math.ceil(n / colBlock));
      for (let q = pool.rows; q < n; q++) this.poolRow(pool, q);
      pool.rows = n;
    }
    const cells = pool.rowCells * pool.colCells;
    const at = (layer * this.headCount + head) * cells;
    if (mode === 'max') return pool.tops.slice(at, at + cells);
    const out = new Float32Array(cells);
    for (let r = 0; r < pool.rowCells; r++) {
      const height = Math.min(n, (r + 1) * rowBlock) - r * rowBlock;
      for (let c = 0; c < pool.colCells; c++) out[r * pool.colCells + c] = pool.sums[at + r * pool.colCells + c] / (height * (Math.min(n, (c + 1) * colBlock) - c * colBlock));
    }
    return out;
  }

  /** The pool's cells laid out anew for rowCells × colCells per head, those had kept in place. */
  private widen(pool: NonNullable<LiveStack['pool']>, rowCells: number, colCells: number): void {
    if (rowCells === pool.rowCells && colCells === pool.colCells) return;
    const heads = this.layerCount * this.headCount;
    const tops = new Float32Array(heads * rowCells * colCells);
    const sums = new Float64Array(heads * rowCells * colCells);
    for (let h = 0; h < heads; h++) {
      for (let r = 0; r < pool.rowCells; r++) {
        const from = (h * pool.rowCells + r) * pool.colCells;
        const to = (h * rowCells + r) * colCells;
        tops.set(pool.tops.subarray(from, from + pool.colCells), to);
        sums.set(pool.sums.subarray(from, from + pool.colCells), to);
      }
    }
    Object.assign(pool, { rowCells, colCells, tops, sums });
  }

  /** Query row `q` of every head into its blocks (its keys past q are 0: they raise no max, add nothing). */
  private poolRow(pool: NonNullable<LiveStack['pool']>, q: number): void {
    const { queries, weights: prompt } = this.prompt;
    const triangle = (queries * (queries + 1)) / 2;
    const step = q >= queries ? this.rows[q - queries] : undefined;
    const base = Math.floor(q / pool.rowBlock) * pool.colCells;
    for (let h = 0; h < this.layerCount * this.headCount; h++) {
      const weights = step ? step.weights.subarray(h * step.keys, (h + 1) * step.keys) : prompt.subarray(h * triangle + (q * (q + 1)) / 2, h * triangle + ((q + 1) * (q + 2)) / 2);
      const cells = h * pool.rowCells * pool.colCells + base;
      for (let k = 0; k <= q; k++) {
        const cell = cells + Math.floor(k / pool.colBlock);
        const value = weights[k];
        if (value > pool.tops[cell]) pool.tops[cell] = value;
        pool.sums[cell] += value;
      }
    }
  }

  /** The model view's and the head view's questions; undefined for what only the finished run answers. */
  async answer(query: HeadsQuery): Promise<HeadsAnswer | undefined> {
    if (query.kind === 'grid') return { kind: 'grid', grid: await poolGrid(this, query.size, query.mode, query.layers, query.heads) };
    if (query.kind === 'lines') return { kind: 'lines', lines: headLines(this, query.layer, query.heads, query.k) };
    return undefined;
  }
}
