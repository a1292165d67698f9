// The key/value cache of a generation: per layer, every position's K (as scored: after the q/k
// norms and RoPE) and V, [positions × kv_heads·head_dim], so that a new token's forward computes
// its own row of each product and attends over the cached rows instead of running the whole
// sequence again. Its memory is made once for the run's whole length (prompt + new tokens) and
// is all it adds: 2 × layers × kv_heads × head_dim float32s per position.
import type { Matrix } from '../types';

export class KeyValueCache {
  /** Positions whose keys and values every layer holds. */
  length = 0;
  private readonly keys: Float32Array[];
  private readonly values: Float32Array[];

  constructor(
    layers: number,
    /** kv_heads × head_dim. */
    readonly width: number,
    /** The most positions it will hold. */
    readonly capacity: number,
  ) {
    this.keys = Array.from({ length: layers }, () => new Float32Array(capacity * width));
    this.values = Array.from({ length: layers }, () => new Float32Array(capacity * width));
  }

  /** Float32 bytes held: 2 × layers × capacity × width × 4. */
  get bytes(): number {
    return 2 * this.keys.length * this.capacity * this.width * 4;
  }

  /** Layer `layer`'s K and V of the `rows` positions after `length` (the forward under way's new tokens). */
  write(layer: number, K: Float32Array, V: Float32Array, rows: number): void {
    if (this.length + rows > this.capacity) throw new RangeError(`the cache holds ${this.capacity} positions, not ${this.length + rows}`);
    this.keys[layer].set(K.subarray(0, rows * this.width), this.length * this.width);
    this.values[layer].set(V.subarray(0, rows * this.width), this.length * this.width);
  }

  /** After every layer wrote them: the new positions count. */
  advance(rows: number): void {
    this.length += rows;
  }

  /** Layer `layer`'s K and V over the cached positions and the `rows` new ones written, as views (no copy). */
  layer(layer: number, rows: number): { K: Matrix; V: Matrix } {
    const n = this.length + rows;
    return {
      K: { rows: n, cols: this.width, data: this.keys[layer].subarray(0, n * this.width) },
      V: { rows: n, cols: this.width, data: this.values[layer].subarray(0, n * this.width) },
    };
  }
}
