// A model run's predictions in words, for messages, the heads view and the log.
import type { Prediction } from './input';

/** `Next token: "␣the" 12.3%, …`, `[MASK] at 4: "paris" 80.1%, …`, or a vision classifier's `Labels: "tabby cat" 61.0%, …`. */
export function predictionText(prediction: Prediction): string {
  const what = prediction.kind === 'next' ? 'Next token' : prediction.kind === 'label' ? 'Labels' : `[MASK] at ${prediction.position + 1}`;
  const top = prediction.top.map((candidate) => `${JSON.stringify(candidate.token)} ${(candidate.probability * 100).toFixed(1)}%`).join(', ');
  return `${what}: ${top}.`;
}
