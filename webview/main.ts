// Entry of the panel's browser code (dist/webview.js), shared by the panel beside the editor,
// the compact bottom view (<body data-mode="compact">) and the standalone HTML report.
import { normalizeMatrixView, normalizePanelData } from '../src/panel/codec';
import { parsePanelState, type HostToWebview, type MatrixView, type PanelData, type PanelState } from '../src/protocol';
import Plotly from 'plotly.js-dist-min';
import type { HeatmapContext } from './heatmap';
import { connectHost } from './host';
import { themeColors, watchTheme } from './theme';
import { button, checkbox, dropdown } from './toolkit';
import { flashView } from './flashTiling';
import { variantsView } from './variants';
import { checksView, compactView, gradientsView, headsView, maskView, STEP_CHOICES, stepsView, type Block, type ViewContext } from './views';

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
let nextRequestId = 1;
let data: PanelData | undefined;
/** Bumped on every render so that a slower, older render stops drawing. */
let renderGeneration = 0;

const host = connectHost(receive);
let state: PanelState = { ...DEFAULT_STATE, ...(parsePanelState(host.getState()) ?? {}) };
if (host.standalone) document.body.dataset.standalone = '';

function receive(message: HostToWebview): void {
  if (message.type === 'region') {
    pendingRegions.get(message.requestId)?.(message.view && normalizeMatrixView(message.view));
    pendingRegions.delete(message.requestId);
    return;
  }
  const incoming = normalizePanelData(message.data);
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

function heatmapContext(): HeatmapContext {
  return {
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

/** The Variants and FlashAttention tabs exist only when the result carries their data. */
function tabShown(view: PanelState['view'], result: PanelData['result']): boolean {
  return (view !== 'variants' || Boolean(result?.variants)) && (view !== 'flash' || Boolean(result?.flash?.length));
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

function tabs(current: PanelData): HTMLElement {
  const nav = document.createElement('nav');
  nav.className = 'tabs';
  nav.setAttribute('aria-label', 'Views');
  for (const tab of VIEW_TABS.filter((t) => tabShown(t.view, current.result))) {
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
      return stepsView(context);
    case 'flash':
      if (context.result.flash?.length) return flashView(context);
      return stepsView(context);
    default:
      return stepsView(context);
  }
}

async function render(): Promise<void> {
  const generation = ++renderGeneration;
  const current = data;
  if (!current) return;
  for (const plot of app.querySelectorAll<HTMLElement>('.js-plotly-plot')) Plotly.purge(plot);
  app.replaceChildren();
  if (!compact) app.append(header(current), controls(current), tabs(current));
  const content = document.createElement('div');
  content.className = 'content';
  content.id = 'content';
  app.append(content);
  if (!current.result) {
    const message = document.createElement('p');
    message.className = 'message';
    message.textContent = current.message ?? 'No result yet.';
    content.append(message);
    if (!host.standalone && current.problems.length > 0) {
      content.append(button('Run attention', () => host.post({ type: 'run', problemIndex: current.problemIndex }), { primary: true }));
    }
    document.body.dataset.rendered = String(generation);
    return;
  }
  const context: ViewContext = {
    ...heatmapContext(),
    data: current,
    result: current.result,
    openHeadSteps: (head) => update({ head, view: 'steps', step: 'all' }),
  };
  const blocks = blocksOf(context);
  for (const block of blocks) content.append(block instanceof HTMLElement ? block : block.element);
  for (const block of blocks) {
    if (generation !== renderGeneration) return;
    if (!(block instanceof HTMLElement)) await block.draw();
  }
  // Tests and the benchmark wait for this marker: every heatmap of this render is drawn.
  if (generation === renderGeneration) document.body.dataset.rendered = String(generation);
}

watchTheme(() => void render());
host.post({ type: 'ready' });
