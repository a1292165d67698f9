// The Variants tab: what RoPE, temperature/softcap, ALiBi, the masks and a decode step do to this
// problem's numbers (views/variantsModel.ts builds every head's with a small result; a larger
// one's come one head at a time from the worker, views/variantsOnDemand.ts, pooled to small
// overviews). Small plots of their own: these matrices are not the run's steps, so they have no
// source cell to reveal and no export key.
import type { MatrixView, VariantsAnswer, VariantsView } from '../src/protocol';
import { flops, named, num, percent } from './format';
import { type Axis, axisLabel, blockText, cellAt, type HeatmapCard, isPooled, textElement, ticks } from './heatmap';
import { colorScaleOf, type ThemeColors } from './theme';
import type { Block, ViewContext } from './views';
import { loadPlotly } from './plotlyLoader';
import { plotlyText } from './plotlyText';

export interface SmallPlot {
  id: string;
  title: string;
  reading?: string;
  view: MatrixView;
  rowTokens?: string[];
  colTokens?: string[];
  /** 'values': the colour scale; 'mask': allowed vs blocked (0); 'weights': 0…1. */
  kind: 'values' | 'mask' | 'weights';
  /** Source row (0-based) drawn with a frame, e.g. the decode step's place in the full matrix. */
  highlightRow?: number;
  /** Value shown per cell in the hover text and, when small, in the cell. */
  label: string;
}

/** A small heatmap card: title, plot (hover: query → key: value), reading. */
export function smallPlotCard(plot: SmallPlot, context: ViewContext): HeatmapCard {
  const card = document.createElement('section');
  card.className = 'card heatmap variant';
  card.id = `card-${plot.id}`;
  card.dataset.rows = String(plot.view.rows);
  card.dataset.cols = String(plot.view.cols);
  card.append(textElement('h3', '', plot.title));
  const root = document.createElement('div');
  root.className = 'plot';
  root.setAttribute('role', 'img');
  root.setAttribute('aria-label', `${plot.title}: ${plot.view.rows}×${plot.view.cols} values`);
  card.append(root);
  if (plot.reading) card.append(textElement('p', 'reading', plot.reading));
  const { view } = plot;
  if (isPooled(view)) card.append(textElement('p', 'note', `Overview of ${view.sourceRows}×${view.sourceCols}: each cell is the maximum of a ${view.rowBlock}×${view.colBlock} block (max pooling).`));
  const draw = async () => {
    const Plotly = await loadPlotly();
    await Plotly.newPlot(root, [trace(plot, context.colors, context)], layout(plot, context.colors), { displayModeBar: false, responsive: true, staticPlot: false });
  };
  return { element: card, draw };
}

function trace(plot: SmallPlot, colors: ThemeColors, context: ViewContext): object {
  const { view } = plot;
  const z: (number | null)[][] = [];
  const text: string[][] = [];
  const hover: string[][] = [];
  for (let r = 0; r < view.rows; r++) {
    z.push([]);
    text.push([]);
    hover.push([]);
    for (let c = 0; c < view.cols; c++) {
      const value = view.data[r * view.cols + c];
      z[r].push(Number.isFinite(value) ? value : null);
      text[r].push(plot.kind === 'mask' ? (value === 0 ? '✕' : '') : num(value, 2));
      const cell = cellAt(view, r, c);
      const place = cell.exact
        ? `${named('query', cell.row, plot.rowTokens)} → ${named('key', cell.col, plot.colTokens)}`
        : blockText(cell, { kind: 'query', tokens: plot.rowTokens }, { kind: 'key', tokens: plot.colTokens });
      hover[r].push(plotlyText(`${place}: ${plot.label} ${plot.kind === 'mask' ? (value === 0 ? 'blocked' : 'may attend') : num(value)}`));
    }
  }
  const small = view.rows <= 16 && view.cols <= 16;
  const base = {
    type: 'heatmap',
    z,
    customdata: hover,
    hovertemplate: '%{customdata}<extra></extra>',
    xgap: small ? 1 : 0,
    ygap: small ? 1 : 0,
    ...(small && (context.state.showNumbers || plot.kind === 'mask') ? { text, texttemplate: '%{text}', textfont: { family: colors.fontFamily, size: 10 } } : {}),
  };
  if (plot.kind === 'mask') return { ...base, zmin: 0, zmax: 1, colorscale: [[0, colors.blocked], [0.5, colors.blocked], [0.5, colors.background], [1, colors.background]], showscale: false };
  const scale = colorScaleOf(context.state.colorScale, colors);
  return { ...base, colorscale: scale, ...(plot.kind === 'weights' ? { zmin: 0, zmax: 1 } : {}), colorbar: { thickness: 10, outlinewidth: 0, tickfont: { color: colors.foreground, size: 10 } } };
}

function layout(plot: SmallPlot, colors: ThemeColors): object {
  const { view } = plot;
  const font = { family: colors.fontFamily, color: colors.foreground, size: 11 };
  const axis = { showgrid: false, zeroline: false, ticks: '', tickfont: font };
  const labels = (count: number, start: number, block: number, labelled: Axis) => (isPooled(view) ? ticks(count, start, block, labelled) : {
    tickvals: Array.from({ length: count }, (_, i) => i),
    ticktext: Array.from({ length: count }, (_, i) => plotlyText(axisLabel(labelled, start + i))),
  });
  const shapes = plot.highlightRow === undefined ? [] : [{
    type: 'rect', xref: 'x', yref: 'y', x0: -0.5, x1: view.cols - 0.5,
    y0: Math.floor((plot.highlightRow - view.rowStart) / view.rowBlock) - 0.5, y1: Math.floor((plot.highlightRow - view.rowStart) / view.rowBlock) + 0.5,
    line: { color: colors.accent, width: 3 },
  }];
  return {
    height: Math.max(160, Math.min(420, view.rows * 28 + 80)),
    margin: { l: 70, r: 10, t: 40, b: 10 },
    paper_bgcolor: 'rgba(0,0,0,0)',
    plot_bgcolor: colors.muted,
    font,
    xaxis: { ...axis, ...labels(view.cols, view.colStart, view.colBlock, { kind: 'key', tokens: plot.colTokens }), side: 'top' },
    yaxis: { ...axis, ...labels(view.rows, view.rowStart, view.rowBlock, { kind: 'query', tokens: plot.rowTokens }), autorange: 'reversed' },
    shapes,
  };
}

/** Largest |value| of a view (finite entries). */
function largestMagnitude(view: MatrixView): number {
  let max = 0;
  for (const x of view.data) if (Number.isFinite(x)) max = Math.max(max, Math.abs(x));
  return max;
}

/** The head shown: the one picked, within the result's heads. */
export const shownHead = (context: ViewContext): number => Math.min(context.state.head, context.result.heads.length - 1);

/** A small result's Variants tab: every head's views came with it. */
export function variantsView(context: ViewContext): Block[] {
  const variants = context.result.variants as VariantsView;
  const h = shownHead(context);
  const { scores, scaled, weights } = context.result.heads[h];
  return variantBlocks(context, variants, h, variants.heads[h] ?? {}, { scores, scaled, weights });
}

/** A larger result's Variants tab: the shown head's views, asked for when the tab is drawn. */
export function onDemandVariantsView(context: ViewContext): Block[] {
  const h = shownHead(context);
  return [onDemandBlock(context, { kind: 'variants', head: h }, (answer) => {
    const { variants, steps } = answer as Extract<VariantsAnswer, { kind: 'variants' }>;
    const head = context.result.heads[h];
    return variantBlocks(context, variants, h, variants.heads[0], { scores: steps.scores ?? head.scores, scaled: steps.scaled ?? head.scaled, weights: steps.weights ?? head.weights });
  })];
}

/**
 * A block that asks the host for `query`'s answer when drawn, says so meanwhile, and then holds
 * what `blocks` makes of it (drawn in turn), or the reason there is none.
 */
export function onDemandBlock(context: ViewContext, query: Parameters<ViewContext['requestVariants']>[0], blocks: (answer: VariantsAnswer) => Block[]): HeatmapCard {
  const element = document.createElement('div');
  element.className = 'on-demand';
  element.id = `on-demand-${query.kind}`;
  element.setAttribute('aria-busy', 'true');
  element.append(textElement('p', 'message', query.kind === 'variants' ? `Computing head ${query.head + 1}’s views…` : 'Computing the walk…'));
  const draw = async () => {
    const reply = await context.requestVariants(query);
    element.removeAttribute('aria-busy');
    if ('error' in reply) {
      element.replaceChildren(textElement('p', 'message', `No view: ${reply.error}`));
      element.dataset.error = '';
      return;
    }
    const made = blocks(reply.answer);
    element.replaceChildren(...made.map((block) => (block instanceof HTMLElement ? block : block.element)));
    for (const block of made) if (!(block instanceof HTMLElement)) await block.draw();
  };
  return { element, draw };
}

/** The head's own steps the variant views stand beside. */
type HeadSteps = Pick<ViewContext['result']['heads'][number], 'scores' | 'scaled' | 'weights'>;

function variantBlocks(context: ViewContext, variants: VariantsView, h: number, mine: VariantsView['heads'][number], head: HeadSteps): Block[] {
  const { data } = context;
  const rowTokens = data.tokens;
  const colTokens = data.keyTokens ?? data.tokens;
  const headLabel = context.result.heads.length > 1 ? ` (head ${h + 1})` : '';
  const blocks: Block[] = [];
  const list = textElement('ul', 'conventions');
  list.id = 'variant-conventions';
  for (const line of variants.conventions) list.append(textElement('li', '', line));
  blocks.push(textElement('h3', '', 'Variants in this run'), list);
  const plot = (id: string, title: string, view: MatrixView, label: string, reading?: string, kind: SmallPlot['kind'] = 'values') =>
    smallPlotCard({ id, title, view, label, reading, kind, rowTokens, colTokens }, context);
  if (mine.unrotatedScores) {
    blocks.push(
      plot(`v${h + 1}-before-rope`, `Scores before RoPE: Q·Kᵀ${headLabel}`, mine.unrotatedScores, 'score', 'The same Q and K, unturned: a score depends on the tokens alone.'),
      plot(`v${h + 1}-after-rope`, `Scores after RoPE: RoPE(Q)·RoPE(K)ᵀ${headLabel}`, head.scores, 'score', 'Each query and key turned by its position: a score now depends on the tokens and on how far apart they are.'),
    );
  }
  if (mine.uncapped) {
    const cap = largestMagnitude(head.scaled);
    blocks.push(
      plot(`v${h + 1}-before-cap`, `Before the softcap: scale·S / T${headLabel}`, mine.uncapped, 'score', `Largest |score| ${num(largestMagnitude(mine.uncapped))}.`),
      plot(`v${h + 1}-after-cap`, `After the softcap: C·tanh(s / C)${headLabel}`, head.scaled, 'score', `Largest |score| ${num(cap)}: no score leaves (−C, C); small ones pass almost unchanged.`),
    );
  }
  if (mine.alibi) {
    blocks.push(plot(`v${h + 1}-alibi`, `ALiBi bias −m·|i − j|, m = ${num(mine.alibi.slope, 6)}${headLabel}`, mine.alibi.bias, 'bias', 'Added to the scores after the softcap: the farther the key, the lower its score, more steeply for a larger slope.'));
  }
  if (variants.mask) {
    const m = variants.mask;
    blocks.push(plot('v-mask', 'The mask’s structure (✕ = blocked)', m.visible, 'key', undefined, 'mask'));
    const savings = document.createElement('table');
    savings.className = 'checks';
    savings.id = 'mask-savings';
    savings.createCaption().textContent = 'What the mask lets a kernel skip';
    const rows: [string, string][] = [
      ['Blocked share of the Lq×Lk products', percent(m.blockedShare)],
      ['FLOPs saved (QKᵀ, softmax and A·V of blocked entries, all heads)', `${flops(m.flopsSaved)} of ${flops(context.result.checks.flops)}`],
      [`Tiles of ${m.blockSize}×${m.blockSize} skipped whole (FlexAttention’s block sparsity; it uses 128)`, percent(m.skippedBlocksShare)],
    ];
    for (const [label, value] of rows) {
      const tr = savings.insertRow();
      tr.append(Object.assign(document.createElement('th'), { scope: 'row', textContent: label }), Object.assign(document.createElement('td'), { textContent: value }));
    }
    blocks.push(savings);
  }
  if (variants.decode && mine.decodeFull) {
    const d = variants.decode;
    blocks.push(
      smallPlotCard({ id: 'v-decode-full', title: `The full causal run’s weights${headLabel}`, view: mine.decodeFull, label: 'weight', kind: 'weights', rowTokens: colTokens, colTokens, highlightRow: d.row, reading: `Row ${d.row + 1} is the decode step.` }, context),
      smallPlotCard({ id: 'v-decode-step', title: `The decode step: one query against the cache${headLabel}`, view: head.weights, label: 'weight', kind: 'weights', rowTokens, colTokens, reading: `Equal to row ${d.row + 1} of the full run: the outputs differ by at most ${num(d.maxDifference, 3)}.` }, context),
    );
  }
  return blocks;
}
