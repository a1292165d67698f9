// The alignment view of an encoder–decoder run: the target × source map of its cross-attention,
// one head's or the mean of a layer's heads (the picture of a translation's alignment), with the
// tokens on both axes, the weight on hover and PNG/SVG exports (headMap.ts draws it). Whatever
// kind the page shows, this tab asks for cross-attention; the worker computes each map.
import type { HostToHeadsView, MatrixView } from '../../src/protocol';
import { headMap } from './headMap';
import { infoOfKind } from './kinds';
import { element, labelled } from './page';
import type { HeadsPageContext, HeadsPlugin } from './plugin';

/** Request ids of this tab: far above the page's own, which count from 1, and apart from the scores tab's. */
const ALIGNMENT_REQUEST = 1_000_101;

function mountAlignment(section: HTMLElement, context: HeadsPageContext): void {
  const info = infoOfKind(context.info, 'cross');
  const layer = element('select', undefined, { id: 'alignment-layer', 'aria-label': 'Layer' });
  for (let l = 0; l < info.layerCount; l++) layer.append(element('option', `Layer ${l}`, { value: String(l) }));
  // The last layer first: its cross-attention is usually the sharpest alignment.
  layer.value = String(info.layerCount - 1);
  const head = element('select', undefined, { id: 'alignment-head', 'aria-label': 'Head' });
  head.append(element('option', `Mean of the ${info.headCount} heads`, { value: 'mean' }));
  for (let h = 0; h < info.headCount; h++) head.append(element('option', `Head ${h}`, { value: String(h) }));
  const status = element('p', 'Computing the alignment…', { class: 'meta', id: 'alignment-status', role: 'status' });
  const map = element('div', undefined, { id: 'alignment-out' });
  const controls = element('div', undefined, { class: 'controls' });
  controls.append(labelled('Layer ', layer), labelled('Heads ', head));
  section.append(
    element('p', 'Which source token each target token attends to through cross-attention: rows are the target (the decoder’s input), columns the source (the encoder’s tokens); each row sums to 1.', { class: 'meta' }),
    controls,
    status,
    map,
  );
  /** The map asked for last: an answer to an older question is not drawn. */
  let asked = { layer: 0, head: 'mean' as number | 'mean' };
  const ask = () => {
    asked = { layer: Number(layer.value), head: head.value === 'mean' ? 'mean' : Number(head.value) };
    status.textContent = 'Computing the alignment…';
    const query = asked.head === 'mean' ? { kind: 'layerMean' as const, layer: asked.layer, attention: 'cross' as const } : { kind: 'head' as const, layer: asked.layer, head: asked.head, attention: 'cross' as const };
    context.post({ type: 'query', requestId: ALIGNMENT_REQUEST, query });
  };
  const draw = (at: number, which: number | 'mean', view: MatrixView) => {
    if (at !== asked.layer || which !== asked.head) return;
    map.replaceChildren(headMap(info, at, which, view, context.post, 'alignment'));
    status.textContent = `Cross-attention of layer ${at}, ${which === 'mean' ? `the mean of its ${info.headCount} heads` : `head ${which}`}.`;
  };
  receiver = (message: HostToHeadsView) => {
    if (message.type === 'error' && message.requestId === ALIGNMENT_REQUEST) {
      status.replaceChildren(element('span', message.message, { class: 'error' }));
      return true;
    }
    if (message.type !== 'answer' || message.requestId !== ALIGNMENT_REQUEST) return false;
    const { answer } = message;
    if (answer.kind === 'layerMean') draw(answer.layer, 'mean', answer.view);
    else if (answer.kind === 'head') draw(answer.layer, answer.head, answer.view);
    return true;
  };
  layer.addEventListener('change', ask);
  head.addEventListener('change', ask);
  ask();
}

/** The shown page's handler (a new page mounts the tab again and replaces it). */
let receiver: ((message: HostToHeadsView) => boolean) | undefined;

export const alignmentPlugin: HeadsPlugin = {
  id: 'alignment',
  title: 'Alignment',
  shows: (info) => info.kinds?.some((kind) => kind.kind === 'cross') ?? false,
  mount: mountAlignment,
  receive: (message) => receiver?.(message) ?? false,
};
