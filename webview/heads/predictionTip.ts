// A model run's prediction on hover of a token: once the mouse rests on a token the page asks the
// worker for that position's top 5 (the LM head's row, computed there on demand: the next tokens
// of a causal LM, the fillers of a BERT [MASK]) and shows them in a tooltip. Rapid hovering sends
// nothing until the mouse rests; an answer for a token no longer hovered is dropped; answers
// already had are shown at once.
import type { HeadsAnswer } from '../../src/protocol';
import { element, type HeadsPage, quoted, weightText } from './page';

/** How long the mouse rests on a token before its prediction is asked for. */
const REST_MS = 150;

type Prediction = NonNullable<Extract<HeadsAnswer, { kind: 'predict' }>['prediction']>;

export interface PredictionTip {
  element: HTMLElement;
  /** The hovered token's position (undefined: none) and where to show the tip, in the tip's container's pixels. */
  hover(position: number | undefined, x: number, y: number): void;
}

/** The tip of a model run's page; undefined for saved attentions and problems (no model to ask). */
export function predictionTip(page: HeadsPage): PredictionTip | undefined {
  if (page.info.source !== 'model') return undefined;
  const tip = element('div', '', { id: 'prediction-tooltip', class: 'tooltip', role: 'tooltip' });
  tip.hidden = true;
  const known = new Map<number, Prediction | null>();
  let hovered: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const show = (position: number) => {
    const prediction = known.get(position);
    tip.hidden = !prediction;
    tip.dataset.position = String(position);
    if (prediction) tip.textContent = predictionLine(page.info.tokens[position], prediction);
  };

  const ask = async (position: number) => {
    const answer = await page.ask({ kind: 'predict', position }, 'predict');
    if (answer?.kind !== 'predict') return; // a newer hover asked since, or the worker refused
    known.set(answer.position, answer.prediction);
    if (hovered === answer.position) show(answer.position);
  };

  const hover = (position: number | undefined, x: number, y: number) => {
    tip.style.left = `${x + 12}px`;
    tip.style.top = `${y + 12}px`;
    if (position === hovered) return;
    hovered = position;
    clearTimeout(timer);
    tip.hidden = true;
    if (position === undefined) return;
    if (known.has(position)) return show(position);
    timer = setTimeout(() => void ask(position), REST_MS);
  };

  return { element: tip, hover };
}

/** `after “␣cat”: ␣sat 0.31, …` or `[MASK] (7): paris 0.80, …`. */
function predictionLine(token: string, prediction: Prediction): string {
  const what = prediction.kind === 'next' ? `after ${quoted(token)}` : `${token} (${prediction.position})`;
  return `${what}: ${prediction.top.map((candidate) => `${candidate.token} ${weightText(candidate.probability)}`).join(', ')}`;
}
