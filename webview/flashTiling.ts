// The FlashAttention tab: the online softmax walked tile by tile on the chosen head of this
// problem (core/engine/flash.ts), whatever its score function. A grid of the Lq×Lk products shows which tiles are done, which one is
// being folded in and which are to come; a table gives, per query of the tile, the running
// maximum m, the running sum l, the factor e^(m_old − m_new) that rescales what was kept, and the
// output so far. The last step's output is the engine's. A small result carries every walk; a
// larger one's walk covers one query tile, the one picked, asked for from the worker (its grid
// is drawn a tile per cell).
import type { FlashView, VariantsAnswer } from '../src/protocol';
import { bytes, named, num } from './format';
import { textElement } from './heatmap';
import { button, dropdown } from './toolkit';
import type { Block, ViewContext } from './views';
import { loadPlotly } from './plotlyLoader';
import { onDemandBlock, shownHead } from './variants';

/** The walk (tile size), query tile and step on screen; kept across re-renders of the same problem. */
const position = { walk: 0, queryTile: 0, step: 0 };

/** −∞ may arrive as null through JSON (a standalone report): a row that has seen no key yet. */
const value = (x: number | null): string => num(x === null ? -Infinity : x);

/** The products a walk's grid covers, and how many a grid cell stands for (a tile side, or 1). */
interface Grid {
  queries: number;
  keys: number;
  unit: number;
}

/** A larger result's walk: tile size and query tile picked here, the walk computed on demand. */
export function onDemandFlashView(context: ViewContext): Block[] {
  const head = shownHead(context);
  const { tileSides, queries, keys } = context.result.onDemand!;
  position.walk = Math.min(position.walk, tileSides.length - 1);
  const holder = document.createElement('div');
  holder.id = 'flash-holder';
  const load = async (): Promise<void> => {
    const tileSide = tileSides[position.walk];
    const tiles = Math.ceil(queries / tileSide);
    position.queryTile = Math.min(position.queryTile, tiles - 1);
    const queryTile = position.queryTile;
    const pick = [
      dropdown('Tile', tileSides.map((side, i) => ({ value: String(i), label: `${side}×${side}` })), String(position.walk), (chosen) => {
        position.walk = Number(chosen);
        position.step = 0;
        void load();
      }),
      dropdown('Query tile', Array.from({ length: tiles }, (_, t) => ({ value: String(t), label: `${t + 1}: queries ${t * tileSide + 1}–${Math.min(queries, (t + 1) * tileSide)}` })), String(queryTile), (chosen) => {
        position.queryTile = Number(chosen);
        position.step = 0;
        void load();
      }),
    ];
    const block = onDemandBlock(context, { kind: 'flash', head, tileSide, queryTile }, (answer) => {
      const { walk } = answer as Extract<VariantsAnswer, { kind: 'flash' }>;
      const note = `Query tile ${queryTile + 1} of ${tiles}: a walk covers one tile of queries (each walks the same way), its steps one per tile of keys.`;
      return [walkCard(context, head, () => walk, { queries, keys, unit: tileSide }, pick, note)];
    });
    holder.replaceChildren(block.element);
    await block.draw();
  };
  return [{ element: holder, draw: load }];
}

export function flashView(context: ViewContext): Block[] {
  const head = shownHead(context);
  const walks = (context.result.flash as FlashView[][])[head];
  position.walk = Math.min(position.walk, walks.length - 1);
  const queries = walks[0].steps.at(-1)?.queryEnd ?? 0;
  const keys = walks[0].steps.at(-1)?.keyEnd ?? 0;
  let show: () => Promise<void> = async () => {};
  const pick = [dropdown('Tile', walks.map((walk, i) => ({ value: String(i), label: `${walk.tileRows}×${walk.tileCols}` })), String(position.walk), (chosen) => {
    position.walk = Number(chosen);
    position.step = 0;
    void show();
  })];
  const card = walkCard(context, head, () => walks[position.walk], { queries, keys, unit: 1 }, pick);
  show = card.draw;
  return [card];
}

/** The walk's card: `pick` chooses the walk, `walkNow` gives the one chosen. */
function walkCard(context: ViewContext, head: number, walkNow: () => FlashView, { queries, keys, unit }: Grid, pick: HTMLElement[], note?: string): { element: HTMLElement; draw(): Promise<void> } {
  const { data } = context;
  const card = document.createElement('section');
  card.className = 'card flash';
  card.id = 'flash-walk';
  const grid = document.createElement('div');
  grid.className = 'plot';
  grid.setAttribute('role', 'img');
  const stepText = textElement('p', 'reading');
  stepText.id = 'flash-step';
  stepText.setAttribute('aria-live', 'polite');
  const table = document.createElement('div');
  table.className = 'table-scroll';
  const summary = textElement('p', 'reading');
  summary.id = 'flash-summary';
  const slider = Object.assign(document.createElement('input'), { type: 'range', min: '0', value: '0' });
  slider.setAttribute('aria-label', 'Step of the walk');
  slider.id = 'flash-slider';

  const show = async () => {
    const walk = walkNow();
    position.step = Math.max(0, Math.min(position.step, walk.steps.length - 1));
    slider.max = String(walk.steps.length - 1);
    slider.value = String(position.step);
    const step = walk.steps[position.step];
    const last = position.step === walk.steps.length - 1;
    stepText.textContent = `Step ${position.step + 1} of ${walk.steps.length}: queries ${step.queryStart + 1}–${step.queryEnd} take keys ${step.keyStart + 1}–${step.keyEnd}` +
      (last ? ' — the last tile: O / l is the output.' : '.') + ' Blue: this tile; grey: folded in; blank: to come.';
    summary.textContent = `Tiles of ${walk.tileRows}×${walk.tileCols}: at most ${bytes(walk.tileBytes)} live at once instead of ${bytes(walk.fullBytes)} for one ${queries}×${keys} matrix. ` +
      `The walk ends in the engine’s output (largest difference ${num(walk.maxDifference, 3)}).`;
    table.replaceChildren(stepTable(step, data.tokens));
    const Plotly = await loadPlotly();
    await Plotly.newPlot(grid, [gridTrace(walk, position.step, { queries, keys, unit }, context)], gridLayout({ queries, keys, unit }, context), { displayModeBar: false, responsive: true });
  };
  slider.addEventListener('input', () => {
    position.step = Number(slider.value);
    void show();
  });
  const controls = document.createElement('div');
  controls.className = 'controls';
  controls.append(
    ...pick,
    button('◀ Step', () => {
      position.step--;
      void show();
    }, { title: 'Previous tile' }),
    slider,
    button('Step ▶', () => {
      position.step++;
      void show();
    }, { title: 'Next tile' }),
  );
  card.append(
    textElement('h3', '', `FlashAttention: the online softmax, tile by tile (head ${head + 1})`),
    textElement('p', 'formula', 'per key tile: m′ = max(m, max s) · l ← e^(m − m′)·l + Σ e^(s − m′) · O ← e^(m − m′)·O + e^(s − m′)·V · at the end O / l'),
    controls,
    ...(note ? [textElement('p', 'note', note)] : []),
    stepText,
    grid,
    table,
    summary,
  );
  return { element: card, draw: show };
}

/** 0 to come, 1 done, 2 the tile of this step; a cell per `unit`×`unit` products. */
function gridTrace(walk: FlashView, current: number, { queries, keys, unit }: Grid, context: ViewContext): object {
  const z = Array.from({ length: Math.ceil(queries / unit) }, () => new Array<number>(Math.ceil(keys / unit)).fill(0));
  walk.steps.forEach((step, index) => {
    if (index > current) return;
    for (let i = Math.floor(step.queryStart / unit); i < Math.ceil(step.queryEnd / unit); i++) {
      for (let j = Math.floor(step.keyStart / unit); j < Math.ceil(step.keyEnd / unit); j++) z[i][j] = index === current ? 2 : 1;
    }
  });
  const { colors } = context;
  return {
    type: 'heatmap',
    z,
    zmin: 0,
    zmax: 2,
    xgap: 1,
    ygap: 1,
    hoverinfo: 'none',
    showscale: false,
    colorscale: [[0, colors.background], [0.33, colors.background], [0.33, colors.muted], [0.67, colors.muted], [0.67, colors.accent], [1, colors.accent]],
  };
}

function gridLayout({ queries, keys, unit }: Grid, context: ViewContext): object {
  const font = { family: context.colors.fontFamily, color: context.colors.foreground, size: 11 };
  const rows = Math.ceil(queries / unit);
  const axis = { showgrid: false, zeroline: false, ticks: '', tickfont: font, showticklabels: unit === 1 && Math.max(queries, keys) <= 32 };
  const tiles = unit === 1 ? '' : ` (a cell per tile of ${unit})`;
  return {
    height: Math.max(140, Math.min(360, rows * 22 + 60)),
    margin: { l: 50, r: 10, t: 30, b: 10 },
    paper_bgcolor: 'rgba(0,0,0,0)',
    font,
    xaxis: { ...axis, side: 'top', title: { text: `keys${tiles}`, font } },
    yaxis: { ...axis, autorange: 'reversed', title: { text: `queries${tiles}`, font } },
  };
}

function stepTable(step: FlashView['steps'][number], tokens?: string[]): HTMLElement {
  const table = document.createElement('table');
  table.id = 'flash-table';
  table.createCaption().textContent = `After keys ${step.keyStart + 1}–${step.keyEnd}`;
  const head = table.createTHead().insertRow();
  for (const text of ['query', 'running max m', 'running sum l', 'rescale e^(m_old − m_new)', 'output so far O / l']) {
    head.append(Object.assign(document.createElement('th'), { scope: 'col', textContent: text }));
  }
  const body = table.createTBody();
  step.rowMax.forEach((m, r) => {
    const tr = body.insertRow();
    tr.append(Object.assign(document.createElement('th'), { scope: 'row', textContent: named('query', step.queryStart + r, tokens) }));
    for (const text of [value(m), num(step.rowSum[r]), num(step.rescale[r]), `[${step.partial[r].map((x) => num(x)).join(', ')}]`]) {
      tr.append(Object.assign(document.createElement('td'), { textContent: text }));
    }
  });
  return table;
}
