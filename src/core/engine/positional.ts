import type { Matrix } from '../types';
import { zeros } from './kernels';

/**
 * The sinusoidal positional encoding of "Attention Is All You Need":
 * PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)), d = cols.
 * An odd last column gets the sine. Always float64; the engine rounds it with X when asked.
 */
export function sinusoidalPositionalEncoding(rows: number, cols: number): Matrix {
  const pe = zeros(rows, cols, 'float64');
  for (let pos = 0; pos < rows; pos++) {
    for (let c = 0; c < cols; c += 2) {
      const angle = pos / Math.pow(10000, c / cols);
      pe.data[pos * cols + c] = Math.sin(angle);
      if (c + 1 < cols) pe.data[pos * cols + c + 1] = Math.cos(angle);
    }
  }
  return pe;
}
