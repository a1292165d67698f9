// The attention of a sequence while a model writes it, as the heads page holds it: the prompt's
// lower triangles (PromptAttention, sent once), then one row per step (AttentionRow, each step's
// own), so that the model view and head view grow by a row a token from numbers the page already
// has — nothing is sent again. It answers the two questions those views ask (pooled thumbnails and
// top-k lines) with the worker's own functions (core/heads/pool.ts), as an AttentionStack.
// Pure: the page (webview/heads/live.ts) and the tests use it.
import { headLines, poolGrid } from '../core/heads/pool';
import type { AttentionStack, StackSource } from '../core/heads/stack';
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

  /** The model view's and the head view's questions; undefined for what only the finished run answers. */
  async answer(query: HeadsQuery): Promise<HeadsAnswer | undefined> {
    if (query.kind === 'grid') return { kind: 'grid', grid: await poolGrid(this, query.size, query.mode, query.layers, query.heads) };
    if (query.kind === 'lines') return { kind: 'lines', lines: headLines(this, query.layer, query.heads, query.k) };
    return undefined;
  }
}
