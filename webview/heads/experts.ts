// The Experts tab of a mixture-of-experts model run's heads page: the routing the forward recorded
// (StackInfo.routing), as a layers × tokens grid coloured by each token's top expert — hover for the
// token, the layer, its experts and their weights — and per expert how many tokens chose it, over
// all layers or one. Drawn from the numbers already in the page; nothing is asked of the worker.
import type { RoutingInfo, StackInfo } from '../../src/protocol';
import { headColor } from './colors';
import { element, labelled, quoted, weightText } from './page';
import type { HeadsPlugin } from './plugin';

const ROW_HEIGHT = 18;
const LABEL_WIDTH = 44;
const MIN_CELL = 3;
const MAX_CELL = 28;
const DENSE_COLOR = '#80808040';

export const expertsPlugin: HeadsPlugin = {
  id: 'experts',
  title: 'Experts',
  shows: (info) => info.routing !== undefined,
  mount(section, { info }) {
    const routing = info.routing!;
    const n = info.queryCount;
    const layers = routing.layers.length;
    section.append(
      element('p', `Each token's experts per layer, as the forward routed it: ${routing.topK} of ${routing.experts} experts per token; each cell is coloured by the token's top expert. Hover a cell for its experts and weights (each weight as it multiplies that expert's output).`, { class: 'meta' }),
    );
    const cell = Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor((Math.max(320, (section.ownerDocument.body.clientWidth || 900) - 80) - LABEL_WIDTH) / Math.max(1, n))));
    const width = LABEL_WIDTH + cell * n;
    const height = ROW_HEIGHT * layers;
    const canvas = element('canvas', undefined, { id: 'experts-canvas', role: 'img', 'aria-label': `Top expert of each of ${n} tokens in each of ${layers} layers` });
    const scale = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round(height * scale);
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
    const context = canvas.getContext('2d')!;
    context.scale(scale, scale);
    context.font = '11px sans-serif';
    context.textBaseline = 'middle';
    routing.layers.forEach((layer, l) => {
      context.fillStyle = getComputedStyle(section).color || '#888';
      context.fillText(`L${l}`, 4, l * ROW_HEIGHT + ROW_HEIGHT / 2);
      layer.forEach((pairs, t) => {
        context.fillStyle = pairs.length ? headColor(pairs[0][0]) : DENSE_COLOR;
        context.fillRect(LABEL_WIDTH + t * cell, l * ROW_HEIGHT + 1, Math.max(1, cell - (cell > 6 ? 1 : 0)), ROW_HEIGHT - 2);
      });
    });
    canvas.dataset.painted = String(layers * n);
    const tooltip = element('div', '', { id: 'experts-tooltip', class: 'tooltip', role: 'tooltip' });
    tooltip.hidden = true;
    const wrapper = element('div', undefined, { class: 'canvas-wrapper' });
    wrapper.append(canvas, tooltip);
    canvas.addEventListener('mousemove', (event) => {
      const box = canvas.getBoundingClientRect();
      const text = routingText(info, routing, Math.floor((event.clientY - box.top) / ROW_HEIGHT), Math.floor((event.clientX - box.left - LABEL_WIDTH) / cell));
      tooltip.textContent = text ?? '';
      tooltip.hidden = text === undefined;
      tooltip.style.left = `${event.clientX - box.left + 12}px`;
      tooltip.style.top = `${event.clientY - box.top + 12}px`;
    });
    canvas.addEventListener('mouseleave', () => (tooltip.hidden = true));

    const layerChoice = element('select', undefined, { id: 'experts-layer' });
    layerChoice.append(element('option', 'all layers', { value: 'all' }));
    routing.layers.forEach((layer, l) => layer[0]?.length && layerChoice.append(element('option', `layer ${l}`, { value: String(l) })));
    const counts = element('table', undefined, { id: 'experts-counts', class: 'scores' });
    const fill = () => {
      const chosen = layerChoice.value === 'all' ? routing.layers : [routing.layers[Number(layerChoice.value)]];
      const { any, top } = expertCounts(routing.experts, chosen);
      const most = Math.max(1, ...any);
      const head = element('tr');
      for (const title of ['expert', 'tokens that chose it', 'as their top expert', '']) head.append(element('th', title));
      counts.replaceChildren(head);
      any.forEach((count, e) => {
        const row = element('tr', undefined, { 'data-expert': String(e) });
        const swatch = element('span', '', { class: 'swatch' });
        swatch.style.background = headColor(e);
        swatch.style.display = 'inline-block';
        swatch.style.width = swatch.style.height = '10px';
        swatch.style.marginRight = '4px';
        const name = element('td');
        name.append(swatch, `E${e}`);
        const bar = element('div');
        bar.style.background = headColor(e);
        bar.style.height = '8px';
        bar.style.width = `${Math.round((120 * count) / most)}px`;
        const barCell = element('td');
        barCell.append(bar);
        row.append(name, element('td', String(count), { class: 'count' }), element('td', String(top[e])), barCell);
        counts.append(row);
      });
    };
    layerChoice.addEventListener('change', fill);
    fill();
    const controls = element('div', undefined, { class: 'controls' });
    controls.append(labelled('Tokens per expert in ', layerChoice));
    section.append(wrapper, controls, counts);
  },
};

/** The hover text of layer `l`, position `t`; undefined outside the grid. */
export function routingText(info: StackInfo, routing: RoutingInfo, l: number, t: number): string | undefined {
  if (!(l >= 0 && l < routing.layers.length && t >= 0 && t < info.queryCount)) return undefined;
  const pairs = routing.layers[l][t];
  const where = `${quoted(info.tokens[t])} (${t}) · layer ${l}: `;
  return pairs.length ? where + pairs.map(([e, w]) => `E${e} ${weightText(w)}`).join(', ') : `${where}dense MLP (no experts)`;
}

/** Per expert: tokens that chose it among their top-k, and as their top expert, over the given layers. */
export function expertCounts(experts: number, layers: [number, number][][][]): { any: number[]; top: number[] } {
  const any = new Array<number>(experts).fill(0);
  const top = new Array<number>(experts).fill(0);
  for (const layer of layers) {
    for (const pairs of layer) {
      pairs.forEach(([e], k) => {
        any[e]++;
        if (k === 0) top[e]++;
      });
    }
  }
  return { any, top };
}
