// Inputs every benchmark makes the same way: seeded, so each run computes the same numbers.
import type { Matrix } from '../src/core/types';

/** Uniform in [−spread, spread), from a fixed seed: the same inputs on every run. */
export function random(rows: number, cols: number, seed: number, spread: number): Matrix {
  let s = seed >>> 0;
  const data = new Float64Array(rows * cols);
  for (let p = 0; p < data.length; p++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    data[p] = (s / 2 ** 32 - 0.5) * 2 * spread;
  }
  return { rows, cols, data };
}
