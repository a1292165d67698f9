// Entry of the panel's browser code, shared by the panel beside the editor, the compact bottom
// view (<body data-mode="compact">) — both inline in their page (dist/panel/main.js) — and the
// standalone HTML report (dist/webview.js, via webview/report.ts).
import { normalizeMatrixView, normalizePanelData, normalizeVariantsAnswer } from '../src/views/codec';
import { fillDeferred, viewEntries, withViews } from '../src/views/deferral';
import { withRuledNumbers } from '../src/views/derived';
import { parsePanelState, type HostToWebview, type MatrixKey, type MatrixView, type PanelData, type PanelState, type ResultView, type VariantsQuery, type ViewRef } from '../src/protocol';
import { outdatedViews, type HeatmapCard, type HeatmapContext } from './heatmap';
import { connectHost } from './host';
import { loadPlotly, plotlyIfLoaded } from './plotlyLoader';
import { themeColors, watchTheme } from './theme';
import { button, checkbox, dropdown } from './toolkit';
import { flashView, onDemandFlashView } from './flashTiling';
import { onDemandVariantsView, variantsView } from './variants';
import { checksView, compactView, gradientsView, headsView, maskView, STEP_CHOICES, stepsView, type Block, type VariantsReply, type ViewContext } from './views';

const compact = document.body.dataset.mode === 'compact';
const app = document.getElementById('app') as HTMLElement;

const DEFAULT_STATE: PanelState = {
  problemIndex: 0,
  view: 'steps',
  head: 0,
  step: 'all',
  colorScale: 'Viridis',
  showNumbers: true,
  zoom: {},
};

const pendingRegions = new Map<number, (view: MatrixView | null) => void>();
const pendingVariants = new Map<number, (reply: VariantsReply) => void>();
/** A larger result's answers, per query: a render asks the host once for each. */
const variantAnswers = new WeakMap<ResultView, Map<string, Promise<VariantsReply>>>();
let nextRequestId = 1;
let data: PanelData | undefined;
/** The host's number of the update shown, and whether views it held back are still to come. */
let shownUpdate: number | undefined;
let awaitingViews = false;
/** Bumped on every render so that a slower, older render stops drawing. */
let renderGeneration = 0;
/** When the data being rendered arrived and was decoded (ms, performance.timeOrigin + now). */
let arrival: { receivedAt: number; decodedAt: number } | undefined;
const now = () => performance.timeOrigin + performance.now();
/** The page's start, for bench/editor-latency.mjs: document created, this script running, first
 * data in, first paint (body[data-startup] once painted). */
const startup: Record<string, number> = { documentAt: performance.timeOrigin, scriptAt: now() };

const host = connectHost(receive);
let state: PanelState = { ...DEFAULT_STATE, ...(parsePanelState(host.getState()) ?? {}) };
if (host.standalone) document.body.dataset.standalone = '';

function receive(message: HostToWebview): void {
  if (message.type === 'region') {
    pendingRegions.get(message.requestId)?.(message.view && normalizeMatrixView(message.view));
    pendingRegions.delete(message.requestId);
    return;
  }
  if (message.type === 'variants') {
    const { answer, error } = message;
    pendingVariants.get(message.requestId)?.(answer ? { answer: normalizeVariantsAnswer(answer) } : { error: error ?? 'the host gave no answer' });
    pendingVariants.delete(message.requestId);
    return;
  }
  if (message.type === 'stale') {
    if (data) data = { ...data, stale: message.stale };
    showStale(message.stale);
    return;
  }
  if (message.type === 'deferredViews') {
    if (message.update !== shownUpdate || !data?.result) return; // a newer update replaced that one
    const views = message.views.flatMap(({ refs, view }) => {
      const normalized = normalizeMatrixView(view);
      return refs.map((ref) => ({ ref, view: normalized }));
    });
    data = { ...data, result: withRuledNumbers(withViews(data.result, views)) };
    awaitingViews = false;
    void render();
    return;
  }
  const receivedAt = now();
  const incoming = normalizePanelData(message.data);
  // The bytes of numbers this post carried (each shared view once, as VS Code sends it).
  const postedBytes = incoming.result ? numberBytes(incoming.result) : 0;
  // Views the host held back (off screen): the ones shown so far stand in, marked out of date.
  let heldBack = false;
  if (incoming.result) {
    const filled = fillDeferred(incoming.result, data?.result, (view) => {
      outdatedViews.add(view);
      heldBack = true;
    });
    incoming.result = withRuledNumbers(filled);
  }
  shownUpdate = message.update;
  awaitingViews = heldBack;
  requestedFor = undefined;
  arrival = { receivedAt, decodedAt: now() };
  startup.dataAt ??= receivedAt;
  if (incoming.result && startup.resultAt === undefined) {
    // The first result (a model's head: its page is made, and says it computes, before the worker answers).
    startup.resultAt = receivedAt;
    if (incoming.timing) startup.resultSentAt = incoming.timing.sentAt;
    startup.resultBytes = postedBytes;
  }
  const sameProblem = state.uri === incoming.uri && state.problemIndex === incoming.problemIndex;
  data = incoming;
  update({
    uri: incoming.uri,
    problemIndex: incoming.problemIndex,
    ...(message.focusHead !== undefined ? { head: message.focusHead } : {}),
    // Zoom regions belong to one problem's matrices; head, step and view carry over.
    ...(sameProblem ? {} : { zoom: {} }),
  });
}

const numberBytes = (result: ResultView): number =>
  Array.from(new Set(viewEntries(result).map(({ view }) => view.data)), (numbers) => numbers.byteLength).reduce((sum, bytes) => sum + bytes, 0);

function update(change: Partial<PanelState>): void {
  state = { ...state, ...change };
  host.setState(state);
  if (!host.standalone) host.post({ type: 'state', state });
  void render();
}

function setZoom(id: string, region: PanelState['zoom'][string] | undefined): void {
  const zoom = { ...state.zoom };
  if (region) zoom[id] = region;
  else delete zoom[id];
  state = { ...state, zoom };
  host.setState(state);
  if (!host.standalone) host.post({ type: 'state', state });
}

function heatmapContext(previousCards: Map<string, HTMLElement>): HeatmapContext {
  return {
    previousCard: (id) => previousCards.get(id),
    state,
    colors: themeColors(),
    compact,
    reveal: (matrix, head, row, col) => data && host.post({ type: 'reveal', problemIndex: data.problemIndex, head, matrix, row, col }),
    setZoom,
    requestRegion: (matrix, head, region) =>
      new Promise((resolve) => {
        if (!data) return resolve(null);
        const requestId = nextRequestId++;
        pendingRegions.set(requestId, resolve);
        host.post({ type: 'requestRegion', requestId, problemIndex: data.problemIndex, head, matrix, ...region });
      }),
    exportImage: (format, fileName, payload) =>
      host.post(format === 'png' ? { type: 'export', format, fileName, base64: payload } : { type: 'export', format, fileName, text: payload }),
    exportMatrix: (matrix, head, format) => data && host.post({ type: 'exportMatrix', format, problemIndex: data.problemIndex, head, matrix }),
  };
}

const VIEW_TABS: { view: PanelState['view']; label: string }[] = [
  { view: 'steps', label: 'Steps' },
  { view: 'heads', label: 'Heads' },
  { view: 'mask', label: 'Mask' },
  { view: 'gradients', label: 'Gradients' },
  { view: 'checks', label: 'Checks' },
  { view: 'variants', label: 'Variants' },
  { view: 'flash', label: 'FlashAttention' },
];

/** The Variants and FlashAttention tabs exist only when the result carries their data, or can ask for it. */
function tabShown(view: PanelState['view'], result: PanelData['result']): boolean {
  if (view === 'variants') return Boolean(result?.variants || result?.onDemand?.conventions.length);
  return view !== 'flash' || Boolean(result?.flash?.length || result?.onDemand);
}

function controls(current: PanelData): HTMLElement {
  const bar = document.createElement('div');
  bar.className = 'controls';
  bar.setAttribute('role', 'toolbar');
  bar.setAttribute('aria-label', 'Panel controls');
  const heads = current.result?.heads.length ?? current.options.heads;
  bar.append(
    dropdown('Problem', current.problems.map((p) => ({ value: String(p.index), label: p.label })), String(current.problemIndex), (value) =>
      host.post({ type: 'selectProblem', problemIndex: Number(value) })),
    dropdown('Head', Array.from({ length: heads }, (_, i) => ({ value: String(i), label: `Head ${i + 1}` })), String(Math.min(state.head, heads - 1)), (value) => update({ head: Number(value) })),
    dropdown('Step', STEP_CHOICES, state.step, (value) => update({ step: value as PanelState['step'], view: 'steps' })),
    dropdown('Colour scale', ['Viridis', 'Cividis', 'Blues', 'Greys', 'RdBu', 'Theme'].map((value) => ({ value, label: value })), state.colorScale, (value) => update({ colorScale: value as PanelState['colorScale'] })),
    checkbox('Numbers in cells', state.showNumbers, (checked) => update({ showNumbers: checked })),
  );
  if (!host.standalone) {
    bar.append(
      dropdown('dtype', [{ value: 'float64', label: 'float64' }, { value: 'float32', label: 'float32' }], current.result?.dtype ?? current.options.dtype, (value) => host.post({ type: 'setDtype', dtype: value as 'float64' | 'float32' })),
      button('Export HTML report', () => host.post({ type: 'exportHtml' }), { title: 'Save this problem as one self-contained HTML file' }),
    );
  }
  return bar;
}

/** The control bar and tabs of the last render, by what they show: an update that changes only
 * numbers keeps them (rebuilding ~10 toolkit elements costs more than redrawing a small plot). */
const kept = new Map<string, HTMLElement>();
function keep(kind: string, key: unknown, build: () => HTMLElement): HTMLElement {
  const id = `${kind}:${JSON.stringify(key)}`;
  const element = kept.get(id) ?? build();
  for (const old of kept.keys()) if (old.startsWith(`${kind}:`)) kept.delete(old);
  kept.set(id, element);
  return element;
}

/** The views this result has (the Variants and FlashAttention tabs only for the problems they explain). */
function shownTabs(current: PanelData): typeof VIEW_TABS {
  return VIEW_TABS.filter((t) => tabShown(t.view, current.result));
}

function tabs(current: PanelData): HTMLElement {
  const nav = document.createElement('nav');
  nav.className = 'tabs';
  nav.setAttribute('aria-label', 'Views');
  for (const tab of shownTabs(current)) {
    const tabButton = button(tab.label, () => update({ view: tab.view }), { primary: state.view === tab.view, pressed: state.view === tab.view });
    tabButton.dataset.view = tab.view;
    nav.append(tabButton);
  }
  return nav;
}

function header(current: PanelData): HTMLElement {
  const head = document.createElement('header');
  const title = document.createElement('h2');
  title.textContent = current.title;
  const meta = document.createElement('p');
  meta.className = 'meta';
  const result = current.result;
  meta.textContent = [current.fileName, result ? `${result.dtype}, ${result.heads.length} head${result.heads.length === 1 ? '' : 's'}, computed in ${result.elapsedMs.toFixed(1)} ms` : '']
    .filter(Boolean).join(' · ');
  head.append(title, meta);
  for (const warning of result?.warnings ?? []) {
    const line = document.createElement('p');
    line.className = 'warning';
    line.setAttribute('role', 'status');
    line.textContent = `⚠ ${warning}`;
    head.append(line);
  }
  return head;
}

/** Marks the panel out of date (body[data-stale], a status line) or current again. The last good
 * result stays readable; panel.css dims it only if the state lasts (no flash while typing). */
function showStale(reason: string | undefined): void {
  const line = document.getElementById('stale');
  if (reason === undefined) {
    delete document.body.dataset.stale;
    line?.remove();
    return;
  }
  document.body.dataset.stale = '';
  const text = `Out of date: ${reason} The last good result is shown.`;
  if (line) {
    line.textContent = text;
    return;
  }
  const status = document.createElement('p');
  status.id = 'stale';
  status.className = 'stale';
  status.setAttribute('role', 'status');
  status.textContent = text;
  app.querySelector('header')?.append(status);
}

function blocksOf(context: ViewContext): Block[] {
  if (compact) return compactView(context);
  switch (state.view) {
    case 'heads':
      return headsView(context);
    case 'mask':
      return maskView(context);
    case 'gradients':
      return gradientsView(context);
    case 'checks':
      return checksView(context);
    case 'variants':
      if (context.result.variants) return variantsView(context);
      if (context.result.onDemand?.conventions.length) return onDemandVariantsView(context);
      return stepsView(context);
    case 'flash':
      if (context.result.flash?.length) return flashView(context);
      if (context.result.onDemand) return onDemandFlashView(context);
      return stepsView(context);
    default:
      return stepsView(context);
  }
}

/** The answer to `query` about the result `shown` shows, asked for once per result. */
function requestVariants(shown: PanelData, query: VariantsQuery): Promise<VariantsReply> {
  const result = shown.result!;
  let answers = variantAnswers.get(result);
  if (!answers) variantAnswers.set(result, (answers = new Map()));
  const key = JSON.stringify(query);
  let reply = answers.get(key);
  if (!reply) {
    const requestId = nextRequestId++;
    reply = new Promise((resolve) => pendingVariants.set(requestId, resolve));
    answers.set(key, reply);
    host.post({ type: 'requestVariants', requestId, problemIndex: shown.problemIndex, query });
  }
  return reply;
}

/** The toolkit's elements, then plotly (plotlyLoader), load once a result is on screen, never before. */
let heavyPartsRequested = false;
function loadHeavyPartsAfterPaint(): void {
  if (heavyPartsRequested) return;
  heavyPartsRequested = true;
  requestAnimationFrame(() => setTimeout(() => void loadPlotly()));
}

/** The next frame shows what was just inserted: the first paint, and the first paint of a result. */
function stampStartup(): void {
  const first = startup.paintedAt === undefined && !document.body.dataset.startup;
  const firstResult = startup.resultAt !== undefined && startup.resultPaintedAt === undefined && document.body.dataset.resultPainting === undefined;
  if (!first && !firstResult) return;
  if (first) document.body.dataset.startup = '';
  if (firstResult) document.body.dataset.resultPainting = '';
  requestAnimationFrame(() => {
    if (first) startup.paintedAt = now();
    if (firstResult) startup.resultPaintedAt = now();
    document.body.dataset.startup = JSON.stringify(startup);
  });
}

async function render(): Promise<void> {
  const generation = ++renderGeneration;
  const current = data;
  if (!current) return;
  // The cards of this render take over the plots of the last one with the same ids (updated in
  // place by Plotly.react): no blank frame, and zoom, scroll and open tables stay.
  const previousCards = new Map(Array.from(app.querySelectorAll<HTMLElement>('section.card.heatmap'), (card) => [card.id, card]));
  const scrolled = window.scrollY;
  const content = document.createElement('div');
  content.className = 'content';
  content.id = 'content';
  const { head, step, colorScale, showNumbers, view } = state;
  const controlsKey = [current.problems, current.problemIndex, current.result?.heads.length ?? current.options.heads, current.result?.dtype ?? current.options.dtype, head, step, colorScale, showNumbers];
  const parts: HTMLElement[] = compact
    ? [content]
    : [header(current), keep('controls', controlsKey, () => controls(current)), keep('tabs', [view, shownTabs(current).map((tab) => tab.view)], () => tabs(current)), content];
  if (!current.result) {
    const message = document.createElement('p');
    message.className = 'message';
    message.textContent = current.message ?? 'No result yet.';
    content.append(message);
    if (!host.standalone && current.problems.length > 0 && !current.computing) {
      content.append(button('Run attention', () => host.post({ type: 'run', problemIndex: current.problemIndex }), { primary: true }));
    }
    replaceContent(parts, previousCards, scrolled);
    showStale(undefined);
    document.body.dataset.rendered = String(generation);
    stampStartup();
    // Nothing to plot yet: the heavy parts wait for a result. In code-server every webview of the
    // window shares one thread, and a page made ahead of a click (src/panel/index.ts) evaluating
    // plotly's 4.8 MB would hold up the heads page's hovers beside it.
    return;
  }
  const context: ViewContext = {
    ...heatmapContext(previousCards),
    data: current,
    result: current.result,
    openHeadSteps: (head) => update({ head, view: 'steps', step: 'all' }),
    requestVariants: (query) => requestVariants(current, query),
  };
  const blocks = blocksOf(context);
  for (const block of blocks) content.append(block instanceof HTMLElement ? block : block.element);
  replaceContent(parts, previousCards, scrolled);
  showStale(current.stale);
  document.body.dataset.painted = String(generation);
  stampStartup();
  loadHeavyPartsAfterPaint();
  // Every heatmap shows its new numbers in the next frame (the previews); plotly then redraws the
  // plots, those on screen first (an update of a long Steps view is mostly off screen), one per
  // task, so that the next keystroke's data, arriving meanwhile, stops this render instead of
  // queueing behind it. (Plotly.react settles in microtasks: without the yields the browser would
  // handle nothing else until every plot was drawn.)
  const visibleAt = await nextFrame();
  const cards = blocks.filter((block): block is HeatmapCard => !(block instanceof HTMLElement));
  // The host holds back the next update's views of the cards off screen: it learns which are on
  // screen as soon as they are laid out, not after plotly (still loading on a new page) has drawn.
  if (generation === renderGeneration) reportOnScreen(cards.map((card) => card.element));
  const onScreen = cards.filter((card) => isOnScreen(card.element));
  for (const card of [...onScreen, ...cards.filter((card) => !onScreen.includes(card))]) {
    if (generation !== renderGeneration) return;
    await card.draw();
    await nextTask();
  }
  if (generation !== renderGeneration) return;
  if (arrival && current.timing) {
    // Where this update's time went (bench/editor-latency.mjs reads it): written once per update.
    const drawnAt = now();
    document.body.dataset.timing = JSON.stringify({ ...current.timing, ...arrival, visibleAt, drawnAt });
    arrival = undefined;
  }
  if (awaitingViews) {
    document.body.dataset.outdated = '';
    askForHeldBackViews(outdatedOnScreen(cards.map((card) => card.element)));
    return;
  }
  delete document.body.dataset.outdated;
  // Tests and the benchmarks wait for this marker: every heatmap of this render is drawn, with
  // the numbers of the update shown.
  document.body.dataset.rendered = String(generation);
  if (current.timing) document.body.dataset.complete = JSON.stringify({ sentAt: current.timing.sentAt, completeAt: now() });
}

/** The heatmaps on screen, as last told to the host (it holds back the others' large views). */
let reportedOnScreen = '';
function reportOnScreen(cards: HTMLElement[]): void {
  if (host.standalone || shownUpdate === undefined) return;
  const views: ViewRef[] = cards
    // The variant cards show no matrix of the result: nothing of theirs is held back.
    .filter((card) => card.dataset.key !== undefined && isOnScreen(card))
    .map((card) => ({ head: Number(card.dataset.head) || 0, key: card.dataset.key as MatrixKey }));
  const report = JSON.stringify([shownUpdate, views]);
  if (report === reportedOnScreen) return;
  reportedOnScreen = report;
  host.post({ type: 'onScreen', update: shownUpdate, views });
}

/** How long after an update the views it held back are asked for, unless a newer update came:
 * typing on, the next keystroke's on-screen views must not queue behind megabytes off screen. */
const HELD_BACK_DELAY_MS = 400;
let requestedFor: number | undefined;
let heldBackTimer: ReturnType<typeof setTimeout> | undefined;
function askForHeldBackViews(atOnce: boolean): void {
  clearTimeout(heldBackTimer);
  const ask = () => {
    if (!awaitingViews || shownUpdate === undefined || requestedFor === shownUpdate) return;
    requestedFor = shownUpdate;
    host.post({ type: 'requestDeferred', update: shownUpdate });
  };
  if (atOnce) ask();
  else heldBackTimer = setTimeout(ask, HELD_BACK_DELAY_MS);
}

/** Whether a card showing numbers the host held back is on screen (they are asked for at once). */
const outdatedOnScreen = (cards: HTMLElement[]): boolean => cards.some((card) => card.hasAttribute('data-outdated') && isOnScreen(card));

// Scrolling tells the host what is on screen now, and brings an out-of-date card's numbers at once.
let scrollTimer: ReturnType<typeof setTimeout> | undefined;
window.addEventListener('scroll', () => {
  clearTimeout(scrollTimer);
  scrollTimer = setTimeout(() => {
    const cards = Array.from(app.querySelectorAll<HTMLElement>('section.card.heatmap'));
    reportOnScreen(cards);
    if (outdatedOnScreen(cards)) askForHeldBackViews(true);
  }, 100);
}, { passive: true });

/** Resolves in the next animation frame (the one that paints what is drawn so far), with its time;
 * a page that paints no frames (hidden) goes on after 100 ms. */
function nextFrame(): Promise<number> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(fallback);
      resolve(now());
    };
    const fallback = setTimeout(done, 100);
    requestAnimationFrame(done);
  });
}

/** Lets the browser handle what is waiting (input, the host's next message) before going on. */
function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function isOnScreen(element: HTMLElement): boolean {
  const box = element.getBoundingClientRect();
  return box.bottom > 0 && box.top < window.innerHeight;
}

/** Swaps the panel's content in one step, keeps the scroll position and frees replaced plots. */
function replaceContent(parts: HTMLElement[], previousCards: Map<string, HTMLElement>, scrolled: number): void {
  const adopted = new Set(parts.flatMap((part) => Array.from(part.querySelectorAll<HTMLElement>('.js-plotly-plot'))));
  const Plotly = plotlyIfLoaded();
  for (const card of previousCards.values()) {
    for (const plot of card.querySelectorAll<HTMLElement>('.js-plotly-plot')) if (!adopted.has(plot)) Plotly?.purge(plot);
  }
  app.replaceChildren(...parts);
  window.scrollTo(0, scrolled);
}

watchTheme(() => void render());
host.post({ type: 'ready' });
