// A generation on the heads page: the answer as it is written, token by token, with a Stop
// button; per step the 5 candidates the token was chosen from (the chosen one marked); a step
// slider (and ←/→) through the answer; and, at the step shown, the attention row it was chosen
// from in every layer × head (the row of the token before it, over every key up to it), which
// grows with the sequence. While the model writes, each step brings its own row and is painted
// the moment it arrives (its text at once, its rows at the next frame); once the run ends the
// rows of any step are asked from the worker, the head view follows the step, and a click on a
// head's row opens that head at that step step by step (the engine's decode variant).
import type { AttentionRow, GenerationInfo, GenerationStepInfo, HeadsAnswer, HeadsQuery, HeadsViewToHost } from '../../src/protocol';
import { type Decoding, decodingText } from '../../src/core/model/samplingConfig';
import { RAMP, rampIndex } from './colors';
import { element, labelled, quoted, wallClock, weightText } from './page';

/** Pixels of one head's row: its keys max-pooled across the width. */
const CELL_WIDTH = 72;
const CELL_HEIGHT = 9;
const GAP = 2;

/** What the view needs of the page once the run's stack is there. */
export interface GenerationLinks {
  ask(query: HeadsQuery, slot: string): Promise<HeadsAnswer | undefined>;
  /** The head view keeps to this query row (undefined: every row). */
  focusQuery(position: number | undefined): void;
}

export interface GenerationView {
  section: HTMLElement;
  /** A step as the worker made it, with the row it was chosen from (absent for a late page's earlier steps). */
  step(step: GenerationStepInfo, row: AttentionRow | undefined, computedAt: number): void;
  /** The run ended: its steps as kept, its rows now asked for by step. */
  finish(generation: GenerationInfo, links: GenerationLinks): void;
  /** The step shown (0-based), for the tests. */
  shown(): number | undefined;
}

/** `decoding`: how the tokens are chosen, when the run said so as it began (a page made from a finished run says it at `finish`). */
export function generationView(prompt: string[], maxNewTokens: number, post: (message: HeadsViewToHost) => void, decoding?: Decoding): GenerationView {
  const section = element('section', undefined, { id: 'generation', 'aria-label': 'Generation' });
  const text = element('p', undefined, { id: 'generation-text', class: 'generation-text' });
  for (const token of prompt) text.append(element('span', readable(token), { class: 'prompt' }));
  const stop = element('button', 'Stop', { id: 'generation-stop', title: 'Stop generating: what was written so far stays' });
  const state = element('span', `Generating up to ${maxNewTokens} tokens…`, { id: 'generation-state', class: 'meta', role: 'status' });
  const slider = element('input', undefined, { id: 'generation-step', type: 'range', min: '0', max: '0', value: '0', 'aria-label': 'Step' });
  slider.disabled = true;
  const stepLabel = element('span', '', { id: 'generation-step-label', class: 'meta' });
  /** How the tokens are chosen (greedy or sampled, with which values from where). */
  const decodingLine = element('p', decoding ? decodingText(decoding) : '', { id: 'generation-decoding', class: 'meta' });
  const candidates = element('ol', undefined, { id: 'generation-candidates', class: 'candidates', 'aria-label': 'Candidates of the step shown' });
  const rowsCaption = element('p', '', { id: 'generation-rows-caption', class: 'meta' });
  const rows = element('canvas', undefined, { id: 'generation-rows', 'aria-label': 'The attention row of the step shown, in every layer × head' });
  const rowsWrap = element('div', undefined, { class: 'canvas-wrapper' });
  const rowsTip = element('div', '', { id: 'generation-rows-tip', class: 'tooltip', role: 'tooltip' });
  rowsTip.hidden = true;
  rowsWrap.append(rows, rowsTip);
  const tip = element('div', '', { id: 'generation-tip', class: 'tooltip', role: 'tooltip' });
  tip.hidden = true;
  const textWrap = element('div', undefined, { class: 'canvas-wrapper generation-text-wrap' });
  textWrap.append(text, tip);
  const controls = element('div', undefined, { class: 'controls' });
  controls.append(stop, state, labelled('Step ', slider), stepLabel);
  section.append(textWrap, controls, decodingLine, candidates, rowsCaption, rowsWrap);

  const steps: GenerationStepInfo[] = [];
  /** Each token's label by position, prompt then generated (the captions name keys by it). */
  const tokens = [...prompt];
  /** The rows had, by query position: live steps bring theirs; after the run, asked for. */
  const rowsHad = new Map<number, AttentionRow>();
  let links: GenerationLinks | undefined;
  let current: number | undefined;
  /** While the slider is at the newest step, it moves on with each new one. */
  let following = true;
  let painting = false;
  /** Milliseconds from each step's computation to its token painted (bench/heads.mjs reads them). */
  const latencies: number[] = [];

  stop.addEventListener('click', () => {
    stop.disabled = true;
    state.textContent = 'Stopping after this step…';
    post({ type: 'stopGeneration' });
  });
  slider.addEventListener('input', () => show(Number(slider.value)));
  section.ownerDocument.addEventListener('keydown', (event) => {
    if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
    const target = event.target as HTMLElement | null;
    // Arrows on another view are its own (the model view's canvas moves between heads); the slider moves itself.
    if (target && target !== section.ownerDocument.body && !section.contains(target)) return;
    if (current === undefined || target === slider) return;
    show(Math.max(0, Math.min(steps.length - 1, current + (event.key === 'ArrowLeft' ? -1 : 1))));
    event.preventDefault();
  });
  text.addEventListener('mousemove', (event) => {
    const span = (event.target as HTMLElement).closest<HTMLElement>('span[data-step]');
    if (!span) return void (tip.hidden = true);
    const step = steps[Number(span.dataset.step)];
    tip.textContent = `step ${step.index}: ${candidateLine(step)}`;
    tip.style.left = `${span.offsetLeft}px`;
    tip.style.top = `${span.offsetTop + span.offsetHeight + 4}px`;
    tip.hidden = false;
  });
  text.addEventListener('mouseleave', () => (tip.hidden = true));
  text.addEventListener('click', (event) => {
    const span = (event.target as HTMLElement).closest<HTMLElement>('span[data-step]');
    if (span) show(Number(span.dataset.step));
  });
  rows.addEventListener('mousemove', (event) => {
    const cell = cellAt(event.offsetX, event.offsetY);
    rowsTip.hidden = !cell;
    if (!cell) return;
    rowsTip.textContent = `L${cell.layer} H${cell.head}: ${strongestKeys(cell.layer, cell.head)}${links ? ' · click: this head at this step, step by step' : ''}`;
    rowsTip.style.left = `${event.offsetX + 12}px`;
    rowsTip.style.top = `${event.offsetY + 12}px`;
  });
  rows.addEventListener('mouseleave', () => (rowsTip.hidden = true));
  rows.addEventListener('click', (event) => {
    const cell = cellAt(event.offsetX, event.offsetY);
    if (cell && links && current !== undefined) post({ type: 'openHead', layer: cell.layer, head: cell.head, step: current });
  });

  const rowOf = (index: number) => rowsHad.get(steps[index].position - 1);

  function cellAt(x: number, y: number): { layer: number; head: number } | undefined {
    const row = current === undefined ? undefined : rowOf(current);
    if (!row) return undefined;
    const head = Math.floor(x / (CELL_WIDTH + GAP));
    const layer = Math.floor(y / (CELL_HEIGHT + GAP));
    return head < row.heads && layer < row.layers ? { layer, head } : undefined;
  }

  /** The 3 keys the head weighs most at the step shown. */
  function strongestKeys(layer: number, head: number): string {
    const row = rowOf(current as number) as AttentionRow;
    const at = (layer * row.heads + head) * row.keys;
    const order = Array.from({ length: row.keys }, (_, key) => key).sort((a, b) => row.weights[at + b] - row.weights[at + a]);
    return order
      .slice(0, 3)
      .map((key) => `${quoted(tokens[key] ?? `#${key}`)} (${key}) ${weightText(row.weights[at + key])}`)
      .join(', ');
  }

  function paintRows(): void {
    painting = false;
    const row = current === undefined ? undefined : rowOf(current);
    if (!row) {
      rowsCaption.textContent = links ? 'Asking the worker for this step’s rows…' : '';
      return;
    }
    rows.width = row.heads * (CELL_WIDTH + GAP);
    rows.height = row.layers * (CELL_HEIGHT + GAP);
    const context = rows.getContext('2d') as CanvasRenderingContext2D;
    const image = context.createImageData(rows.width, rows.height);
    for (let layer = 0; layer < row.layers; layer++) {
      for (let head = 0; head < row.heads; head++) {
        const at = (layer * row.heads + head) * row.keys;
        let top = 0;
        for (let key = 0; key < row.keys; key++) top = Math.max(top, row.weights[at + key]);
        for (let x = 0; x < CELL_WIDTH; x++) {
          // Each pixel column: the largest weight of its keys (a key wider than a pixel repeats).
          const from = Math.floor((x * row.keys) / CELL_WIDTH);
          const to = Math.max(from + 1, Math.floor(((x + 1) * row.keys) / CELL_WIDTH));
          let value = 0;
          for (let key = from; key < to; key++) value = Math.max(value, row.weights[at + key]);
          const colour = rampIndex(value, top);
          for (let y = 0; y < CELL_HEIGHT; y++) {
            const pixel = ((layer * (CELL_HEIGHT + GAP) + y) * rows.width + head * (CELL_WIDTH + GAP) + x) * 4;
            image.data[pixel] = RAMP[colour];
            image.data[pixel + 1] = RAMP[colour + 1];
            image.data[pixel + 2] = RAMP[colour + 2];
            image.data[pixel + 3] = 255;
          }
        }
      }
    }
    context.putImageData(image, 0, 0);
    rows.dataset.position = String(row.position);
    rows.dataset.keys = String(row.keys);
    rowsCaption.textContent = `Step ${current}: the row of ${quoted(tokens[row.position])} (${row.position}) that chose ${quoted(steps[current as number].token)}, over its ${row.keys} keys, in every layer (down) × head (across); each head's row scaled to its largest weight.`;
  }

  function paintCandidates(step: GenerationStepInfo): void {
    const items = step.candidates.top.map((candidate) => {
      const chosen = candidate.id === step.id;
      const item = element('li', `${chosen ? '✓ ' : ''}${quoted(candidate.token)} ${weightText(candidate.probability)}`, chosen ? { 'data-chosen': 'true', class: 'chosen' } : {});
      const bar = element('span', undefined, { class: 'bar' });
      bar.style.width = `${Math.round(candidate.probability * 100)}px`;
      item.prepend(bar);
      return item;
    });
    // A sampled token may lie outside the 5 most probable.
    if (!step.candidates.top.some((candidate) => candidate.id === step.id)) items.push(element('li', `✓ ${quoted(step.token)} (sampled, outside the top 5)`, { 'data-chosen': 'true', class: 'chosen' }));
    candidates.replaceChildren(...items);
  }

  /** Shows step `index`: its token marked, its candidates, its rows (asked for when not had). */
  function show(index: number, fromLive = false): void {
    if (!steps[index]) return;
    if (!fromLive) following = index === steps.length - 1 && !links;
    current = index;
    slider.value = String(index);
    const step = steps[index];
    stepLabel.textContent = `${index + 1} / ${steps.length}: ${quoted(step.token)} at position ${step.position}`;
    for (const marked of text.querySelectorAll('.shown')) marked.classList.remove('shown');
    text.querySelector(`span[data-step="${index}"]`)?.classList.add('shown');
    paintCandidates(step);
    const query = step.position - 1;
    links?.focusQuery(query);
    if (!rowsHad.has(query) && links) void askRow(query);
    if (!painting) {
      painting = true;
      requestAnimationFrame(paintRows);
    }
  }

  async function askRow(query: number): Promise<void> {
    const answer = await links?.ask({ kind: 'row', position: query }, 'generation-row');
    if (answer?.kind !== 'row') return;
    rowsHad.set(answer.row.position, answer.row);
    if (current !== undefined && steps[current].position - 1 === answer.row.position) paintRows();
  }

  function addStep(step: GenerationStepInfo, row: AttentionRow | undefined): void {
    steps[step.index] = step;
    tokens[step.position] = step.token;
    if (row) rowsHad.set(row.position, row);
    const span = element('span', readable(step.token), { class: 'generated', 'data-step': String(step.index) });
    text.append(span);
    slider.max = String(steps.length - 1);
    slider.disabled = false;
  }

  return {
    section,
    step(step, row, computedAt) {
      addStep(step, row);
      state.textContent = `Generating: ${steps.length} of at most ${maxNewTokens} tokens…`;
      if (following) show(step.index, true);
      // The token is in the page now; the frame that paints it is the next one.
      requestAnimationFrame(() => {
        latencies.push(wallClock() - computedAt);
        section.dataset.latencies = latencies.map((ms) => ms.toFixed(1)).join(' ');
        section.dataset.painted = String(steps.length);
      });
    },
    finish(generation, given) {
      links = given;
      // A page that opened late, or missed steps, takes them all from the run.
      for (const step of generation.steps) if (!steps[step.index]) addStep(step, undefined);
      stop.remove();
      const why = generation.stoppedBy === 'eos' ? 'the model ended its answer' : generation.stoppedBy === 'length' ? `${generation.steps.length} tokens, as asked` : 'stopped';
      state.textContent = `Generated ${generation.steps.length} tokens after a ${generation.promptLength}-token prompt (${why}). Move through the answer with the slider or ←/→; click a head’s row to open it at that step, step by step.`;
      decodingLine.textContent = decodingText(generation.decoding);
      section.dataset.finished = generation.stoppedBy;
      if (steps.length > 0) show(current ?? steps.length - 1);
    },
    shown: () => current,
  };
}

/** `“␣cat” 0.31, ✓“␣dog” 0.22, …`: the candidates, the chosen one marked. */
function candidateLine(step: GenerationStepInfo): string {
  const line = step.candidates.top.map((candidate) => `${candidate.id === step.id ? '✓' : ''}${quoted(candidate.token)} ${weightText(candidate.probability)}`);
  if (!step.candidates.top.some((candidate) => candidate.id === step.id)) line.push(`✓${quoted(step.token)} (sampled)`);
  return line.join(', ');
}

/** A token's label as text to read: the marks that make a space, newline or tab visible in labels (tokenizer.ts) turned back. */
function readable(label: string): string {
  return label.replace(/␣/g, ' ').replace(/↵/g, '\n').replace(/⇥/g, '\t');
}
