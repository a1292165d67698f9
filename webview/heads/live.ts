// The model view and the head view while a model writes: drawn from the prompt's attention (sent
// once, after the prompt's forward) and each step's row (sent with its token), which the page
// holds in a LiveStack and pools itself, so they grow by a row a token with nothing sent again.
// A token's text reaches the screen first; the view shown catches up in the frame after (several
// steps arriving meanwhile are drawn at once), the other when it is shown. When the run ends, the page's usual views over the run's
// stack replace these (main.ts).
import type { AttentionRow, GenerationStepInfo, HeadsAnswer, PromptAttention, StackInfo } from '../../src/protocol';
import { LiveStack } from '../../src/views/liveStack';
import { gridView } from './grid';
import { headView } from './headView';
import { element, type HeadsPage } from './page';

export interface LiveViews {
  element: HTMLElement;
  /** A step: its row (of the token it read) and the token it chose. */
  add(step: GenerationStepInfo, row: AttentionRow): void;
}

export function liveViews(attention: PromptAttention & { weights: Float32Array }, prompt: string[], status: (text: string) => void): LiveViews {
  const stack = new LiveStack(attention, prompt, { kind: 'model', architecture: '', folder: '' });
  /** The candidates of each step by the query that chose it: the head view's hover on a token tells them. */
  const predictions = new Map<number, GenerationStepInfo['candidates']>();
  const info: StackInfo = { title: 'generating', source: 'model', tokens: stack.tokens, keyTokens: stack.tokens, layerCount: stack.layerCount, headCount: stack.headCount, queryCount: stack.queryCount, keyCount: stack.keyCount, notes: [] };
  const page: HeadsPage = {
    info,
    post: () => undefined,
    ask: async (query): Promise<HeadsAnswer | undefined> => (query.kind === 'predict' ? { kind: 'predict', position: query.position, prediction: predictions.get(query.position) ?? null } : stack.answer(query)),
    openHead: () => status('A head opens once the answer is written.'),
    status,
  };
  const grid = gridView(page);
  const lines = headView(page);
  const section = element('section', undefined, { id: 'heads-live', 'aria-label': 'The model view and head view as the answer grows' });
  const tabs = element('nav', undefined, { role: 'tablist', class: 'tabs' });
  /** Each view's rows when it was last drawn: a hidden view is drawn when shown, not at each token. */
  const drawnAt = new Map<HTMLElement, number>();
  const draw = (view: HTMLElement) => {
    if (drawnAt.get(view) === stack.queryCount) return;
    drawnAt.set(view, stack.queryCount);
    if (view === grid.section) grid.refresh();
    else lines.grow();
  };
  const select = (shown: HTMLElement) => {
    for (const view of [grid.section, lines.section]) view.hidden = view !== shown;
    draw(shown);
    for (const button of tabs.querySelectorAll('button')) button.setAttribute('aria-selected', String(button.getAttribute('aria-controls') === shown.id));
  };
  for (const [title, view] of [['Model view', grid.section], ['Head view', lines.section]] as const) {
    const button = element('button', title, { role: 'tab', 'aria-controls': view.id, id: `tab-${view.id}` });
    button.addEventListener('click', () => select(view));
    tabs.append(button);
  }
  section.append(element('p', 'Every layer and head over the text so far, a row more with each token; head scores, rollout and opening a head wait for the end of the answer.', { class: 'meta' }), tabs, grid.section, lines.section);
  // Each view asked for its first picture as it was made.
  drawnAt.set(grid.section, stack.queryCount).set(lines.section, stack.queryCount);
  select(grid.section);

  let drawing = false;
  return {
    element: section,
    add(step, row) {
      stack.add(row, step.token);
      predictions.set(row.position, step.candidates);
      info.queryCount = info.keyCount = stack.queryCount;
      if (drawing) return;
      drawing = true;
      // After the frame that shows the token: the views are drawn in the turn after it.
      requestAnimationFrame(() =>
        setTimeout(() => {
          drawing = false;
          draw(grid.section.hidden ? lines.section : grid.section);
        }),
      );
    },
  };
}
