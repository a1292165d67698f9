// Random matrices for the engine's property tests (fast-check).
import fc from 'fast-check';
import type { Matrix } from '../../../src/core/types';

export function matrixOf(rows: number, cols: number, range = 2): fc.Arbitrary<Matrix> {
  return fc
    .array(fc.double({ min: -range, max: range, noNaN: true }), { minLength: rows * cols, maxLength: rows * cols })
    .map((values) => ({ rows, cols, data: Float64Array.from(values) }));
}
