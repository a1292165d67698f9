// Inputs every benchmark makes the same way: seeded, so each run computes the same numbers.
import { closeSync, openSync, writeSync } from 'node:fs';
import type { AttentionSpec, DType, Matrix } from '../src/core/types';

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

/** The benchmark's single-head case: n tokens, d_k = 64. */
export function sdpaSpec(n: number, dtype: DType): AttentionSpec {
  return { options: { heads: 1, score: 'scaled_dot', dtype }, Q: random(n, 64, 1, 1), K: random(n, 64, 2, 1), V: random(n, 64, 3, 1) };
}

/** A profile's case by name (bench/kernels.ts, bench/phases.ts): `mha` (the default), `4096`, `2048` (float32), `1024f64`. */
export function profileSpec(name: string): AttentionSpec {
  if (name === '4096' || name === '2048') return sdpaSpec(Number(name), 'float32');
  return name === '1024f64' ? sdpaSpec(1024, 'float64') : mhaSpec();
}

/** The benchmark's multi-head case: 1024 tokens, d_model 512, 8 heads, W_O, float32. */
export function mhaSpec(): AttentionSpec {
  const n = 1024;
  const dm = 512;
  const w = 1 / Math.sqrt(dm);
  return {
    options: { heads: 8, score: 'scaled_dot', dtype: 'float32' },
    X: random(n, dm, 4, 1),
    WQ: [random(dm, dm, 5, w)],
    WK: [random(dm, dm, 6, w)],
    WV: [random(dm, dm, 7, w)],
    WO: random(dm, dm, 8, w),
  };
}

/**
 * Writes `NAME = [[…], …]` of rows×cols seeded numbers in numpy's print style (`-0.5753`, Python
 * notation; the literal is JSON too) to `path`, a row at a time: files of hundreds of MB without building them in memory.
 * `before`: text written ahead of it. Returns the file's size in bytes.
 */
export function writeNumberFile(path: string, name: string, rows: number, cols: number, seed = 1, before = ''): number {
  const fd = openSync(path, 'w');
  let s = seed >>> 0;
  let bytes = writeSync(fd, `${before}${name} = [\n`);
  const row: string[] = new Array(cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      row[c] = ((s / 2 ** 32 - 0.5) * 4).toFixed(4);
    }
    bytes += writeSync(fd, `  [${row.join(', ')}]${r < rows - 1 ? ',' : ''}\n`);
  }
  bytes += writeSync(fd, ']\n');
  closeSync(fd);
  return bytes;
}
