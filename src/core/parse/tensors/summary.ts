import type { Tensor } from './tensor';

/** What the tensor list shows of each tensor's numbers, from one pass over them. */
export interface TensorSummary {
  min: number;
  max: number;
  mean: number;
  std: number;
  /** NaN entries (left out of the other figures). */
  nan: number;
  /** ±Infinity entries (left out of mean and std). */
  infinite: number;
}

export function summarize(tensor: Tensor): TensorSummary {
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  let squares = 0;
  let finite = 0;
  let nan = 0;
  let infinite = 0;
  const data = tensor.data;
  for (let i = 0; i < data.length; i++) {
    const value = data[i];
    if (value !== value) {
      nan++;
      continue;
    }
    if (value < min) min = value;
    if (value > max) max = value;
    if (value === Infinity || value === -Infinity) {
      infinite++;
      continue;
    }
    finite++;
    sum += value;
    squares += value * value;
  }
  const mean = finite === 0 ? NaN : sum / finite;
  return { min, max, mean, std: finite === 0 ? NaN : Math.sqrt(Math.max(0, squares / finite - mean * mean)), nan, infinite };
}
