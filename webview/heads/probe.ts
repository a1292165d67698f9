// The induction probe tab of a model run's heads page: one click runs the same model on BOS and R
// random tokens repeated twice (seeded), and a new heads page opens on that run with its heads
// ranked by induction score (TransformerLens's standard test, with no code).
import type { HeadsPlugin } from './plugin';
import { element, labelled } from './page';

/** As core/heads/probe.ts: R random tokens by default, and the largest R the page offers. */
const DEFAULT_REPEAT = 32;
const MAX_REPEAT = 1024;

export const probePlugin: HeadsPlugin = {
  id: 'probe',
  title: 'Induction probe',
  mount(section, { info, post }) {
    section.append(
      element('p', 'Runs this model on its BOS token and R random tokens, then the same R tokens again. On the second copy an induction head attends from each token to the token that followed its first occurrence; the heads are then ranked by induction score (see the Head scores tab of the page it opens).', { class: 'meta' }),
    );
    if (info.source !== 'model') {
      section.append(element('p', 'The probe runs a model: open a model run (Attention: Run Model on Text…) and use this tab there.', { id: 'probe-unavailable' }));
      return;
    }
    const repeat = element('input', undefined, { id: 'probe-repeat', type: 'number', min: '1', max: String(MAX_REPEAT), value: String(DEFAULT_REPEAT) });
    const seed = element('input', undefined, { id: 'probe-seed', type: 'number', min: '0', value: '0' });
    const run = element('button', 'Run the probe', { id: 'probe-run' });
    run.addEventListener('click', () => {
      const whole = (input: HTMLInputElement, fallback: number, max: number) => Math.min(max, Math.max(Number(input.min), Math.floor(Number(input.value)) || fallback));
      post({ type: 'probe', repeat: whole(repeat, DEFAULT_REPEAT, MAX_REPEAT), seed: whole(seed, 0, 2 ** 31 - 1) });
    });
    const controls = element('div', undefined, { class: 'controls' });
    controls.append(labelled('R (repeated tokens) ', repeat), labelled('Seed ', seed), run);
    section.append(controls);
  },
};
