/** Over the finite entries of a matrix; `count` is all of them. */
export interface MatrixStatistics {
  min: number;
  max: number;
  sum: number;
  finite: number;
  count: number;
}

export function matrixStatistics(data: Float64Array | Float32Array): MatrixStatistics {
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  let finite = 0;
  for (let i = 0; i < data.length; i++) {
    const value = data[i];
    if (!Number.isFinite(value)) continue;
    finite++;
    sum += value;
    if (value < min) min = value;
    if (value > max) max = value;
  }
  return { min, max, sum, finite, count: data.length };
}
