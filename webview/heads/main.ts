// The heads page: the model view (every layer × head) and the head view (lines between tokens)
// of one AttentionStack, and the views other modules add (plugins.ts). The page holds no weights:
// it asks the host for what it draws (a pooled grid, top-k lines, one opened head), which the
// worker computes. Everything is built with DOM calls; nothing from a file is parsed as HTML.
import { quantity } from '../../src/core/words';
import type { HostToHeadsView, PromptAttention, StackInfo } from '../../src/protocol';
import { fileStem, gridSvg, linesSvg, pngBase64 } from './exportImage';
import { type GenerationView, generationView } from './generation';
import { gridView } from './grid';
import { headMap } from './headMap';
import { headView } from './headView';
import { type LiveViews, liveViews } from './live';
import { askingKind, infoOfKind, kindSelector, postingKind } from './kinds';
import { connect, element, type HeadsPage, wallClock } from './page';
import { HEADS_PLUGINS } from './plugins';

const app = document.getElementById('app') as HTMLElement;
const host = connect(receive);
/** A generation's view: made when the worker starts generating, kept when the run's stack arrives. */
let generation: GenerationView | undefined;
/** The prompt's tokens and, once its attention came, the model view and head view growing with the answer until the run's stack replaces them. */
let generatingPrompt: string[] = [];
let live: LiveViews | undefined;

function receive(message: HostToHeadsView): void {
  if (HEADS_PLUGINS.some((plugin) => plugin.receive?.(message))) return;
  if (message.type === 'stack') {
    // When the stack's description arrived (a model run's end, seen from the page): bench/heads.mjs.
    document.body.dataset.stackAt = String(wallClock());
    // The run's own views replace the live ones.
    live = undefined;
    show(message.info);
  }
  else if (message.type === 'generating') {
    generation = generationView(message.prompt, message.maxNewTokens, host.post, message.decoding);
    generatingPrompt = message.prompt;
    live = undefined;
    app.replaceChildren(generation.section, element('p', '', { class: 'meta', id: 'heads-status' }));
  } else if (message.type === 'generationPrompt') showLive(message.attention);
  else if (message.type === 'generationStep') {
    generation?.step(message.step, message.row, message.computedAt);
    if (message.row) live?.add(message.step, message.row);
  }
  else if (message.type === 'opening') {
    // Before the first step the page says what runs; after, the answer under way says it.
    if (!generation) status(message.text);
  }
  else if (message.type === 'exportReport') void reportWhenDrawn();
  else if (message.type === 'error') status(message.message, true);
}

/** The views that grow with the answer, from the prompt's attention; a prompt too long to send says when they come instead. */
function showLive(attention: PromptAttention): void {
  if (!generation) return;
  const { weights } = attention;
  if (!weights) {
    generation.section.after(element('p', `The prompt's ${attention.queries + 1} tokens are too many to draw every head as the answer grows: the model view and head view come when it is written.`, { class: 'meta', id: 'heads-live-note' }));
    return;
  }
  live = liveViews({ ...attention, weights }, generatingPrompt, (text) => status(text));
  generation.section.after(live.element);
}

/** Export Results from the palette: the report once the model view is drawn (the page may still
 * be reading or pooling when it is asked), or why not after a minute. */
async function reportWhenDrawn(): Promise<void> {
  for (let waited = 0; waited < 60_000; waited += 100) {
    const button = document.getElementById('heads-report');
    if (button && document.querySelector('#grid-canvas[data-painted]')) return button.click();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  host.post({ type: 'reportFailed', message: 'The heads page has no model view yet: export again once it shows.' });
}

function status(text: string, error = false): void {
  const line = document.getElementById('heads-status');
  if (!line) {
    app.replaceChildren(element('p', text, { class: error ? 'error' : 'message', id: 'heads-status' }));
    return;
  }
  line.textContent = text;
  line.className = error ? 'error' : 'meta';
}

/** The tab shown last: a new kind's page opens on it. */
let shownTab: string | undefined;

/** The page of `kind` of the run (its one kind when it has one); the selector shows the page of another. */
function show(run: StackInfo, kind = run.kind): void {
  const info = infoOfKind(run, kind);
  const page: HeadsPage = {
    info,
    post: (message) => host.post(postingKind(message, kind)),
    ask: (query, slot) => host.ask(askingKind(query, kind), slot),
    openHead: (layer, head) => void openHead(layer, head),
    status: (text) => status(text),
  };
  const header = element('header');
  header.append(
    element('h1', info.title),
    element('p', `${quantity(info.layerCount, 'layer')} × ${quantity(info.headCount, 'head')} · ${info.queryCount} queries × ${info.keyCount} keys`, { class: 'meta' }),
  );
  const kinds = kindSelector(run, kind, (next) => show(run, next));
  if (kinds) header.append(kinds);
  if (info.notes.length) {
    const notes = element('ul', undefined, { class: 'meta', id: 'heads-notes' });
    for (const note of info.notes) notes.append(element('li', note));
    header.append(notes);
  }
  const grid = gridView(page);
  const lines = headView(page);
  const opened = element('div', undefined, { id: 'heads-opened' });
  const tabs = element('nav', undefined, { role: 'tablist', class: 'tabs' });
  const sections: HTMLElement[] = [grid.section, lines.section];
  const tab = (title: string, section: HTMLElement) => {
    const button = element('button', title, { role: 'tab', 'aria-controls': section.id, id: `tab-${section.id}` });
    button.addEventListener('click', () => select(section));
    tabs.append(button);
  };
  /** The analyses' views, mounted when their tab is first shown (see below). */
  const unmounted = new Map<HTMLElement, () => void>();
  const select = (section: HTMLElement) => {
    shownTab = section.id;
    unmounted.get(section)?.();
    unmounted.delete(section);
    for (const other of sections) other.hidden = other !== section;
    for (const button of tabs.querySelectorAll('button')) button.setAttribute('aria-selected', String(button.getAttribute('aria-controls') === section.id));
  };
  tab('Model view', grid.section);
  tab('Head view', lines.section);
  // The analyses' views, each in its own section of #heads-analysis, mounted when first shown:
  // the head scores ask the worker to analyse every head on mounting (seconds for 12 × 12 heads
  // at 1024 tokens), and a click on a head, asked for meanwhile, waited behind them (28 s).
  const analysis = element('div', undefined, { id: 'heads-analysis' });
  for (const plugin of HEADS_PLUGINS) {
    if (plugin.shows && !plugin.shows(info)) continue;
    const section = element('section', undefined, { id: `heads-${plugin.id}` });
    sections.push(section);
    analysis.append(section);
    tab(plugin.title, section);
    unmounted.set(section, () => plugin.mount(section, { info, post: page.post, openHead: page.openHead }));
  }
  const exports = element('div', undefined, { class: 'controls', id: 'heads-export' });
  const exportButton = (label: string, format: 'png' | 'svg') => {
    const button = element('button', label, { 'data-export': format });
    button.addEventListener('click', () => {
      const gridShown = !grid.section.hidden;
      const base = `${fileStem(info.title)}-${gridShown ? 'model-view' : 'head-view'}`;
      const canvas = gridShown ? grid.canvas : lines.canvas;
      if (format === 'png') host.post({ type: 'export', format, fileName: `${base}.png`, base64: pngBase64(canvas) });
      else host.post({ type: 'export', format, fileName: `${base}.svg`, text: gridShown ? gridSvg(canvas, info.title) : linesSvg(info, lines.drawnLines(), info.title) });
    });
    exports.append(button);
  };
  exportButton('PNG', 'png');
  exportButton('SVG', 'svg');
  // The standalone report: the model view as drawn (whichever tab shows), with its legend.
  const report = element('button', 'HTML report', { id: 'heads-report', title: 'One HTML file with the model view that opens offline' });
  report.addEventListener('click', () => {
    if (!grid.drawn()) {
      host.post({ type: 'reportFailed', message: 'The model view has not been drawn yet: export again once it shows.' });
      return status('The model view has not been drawn yet.');
    }
    const { width, height } = grid.cssSize();
    const fileName = `${fileStem(info.title)}-heads.html`;
    page.post({ type: 'report', fileName, base64: pngBase64(grid.canvas), width, height, legend: grid.legend() });
  });
  exports.append(report);
  // A generated run: its answer on top, step by step; the head view follows the step shown.
  const generated = info.generation;
  if (generated && !generation) generation = generationView(info.tokens.slice(0, generated.promptLength), generated.steps.length, host.post);
  app.replaceChildren(header, ...(generated && generation ? [generation.section] : []), tabs, exports, element('p', '', { id: 'heads-status', class: 'meta', role: 'status' }), grid.section, lines.section, analysis, opened);
  select(sections.find((section) => section.id === shownTab) ?? grid.section);
  if (generated && generation) generation.finish(generated, { ask: (query, slot) => host.ask(query, slot), focusQuery: (query) => lines.focus(query) });

  /** Clicks on heads so far: only the latest one's opening goes on to the host. */
  let openings = 0;

  /**
   * Every head opens here, its heatmap from the weights the worker already holds; a problem's or a
   * model run's then opens step by step in the attention panel too (the host's). That panel is
   * asked for only once this heatmap is drawn: a new panel's page takes a second or more to load
   * and, started at the same time, would hold up the heatmap a person is looking for.
   */
  async function openHead(layer: number, head: number): Promise<void> {
    const opening = ++openings;
    status(`Opening layer ${layer} · head ${head}…`);
    const answer = await page.ask({ kind: 'head', layer, head }, 'head');
    if (answer?.kind === 'head') {
      opened.replaceChildren(headMap(info, answer.layer, answer.head, answer.view, page.post));
      status(`Layer ${layer} · head ${head} opened below${info.source === 'saved' ? '' : '; step by step in the attention panel'}.`);
      opened.scrollIntoView({ block: 'nearest' });
    }
    // A failed answer was said in the status line; the step-by-step panel says its own.
    if (opening === openings && info.source !== 'saved') page.post({ type: 'openHead', layer, head });
  }
}

host.post({ type: 'ready' });
