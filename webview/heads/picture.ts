// The heads page's "Picture" tab for a vision model's run: the picture the model saw with its
// patch grid, and over it, as a translucent heatmap, one head's attention from the class token (or
// any token chosen: a click on a patch picks it), or the rollout from it; an opacity control, the
// classifier's top 5 labels, and the overlay exported as PNG. The weights come from the worker as
// the head view's do (a `head` query, or the `scores` query's rollout).
import type { HeadsAnswer, HostToHeadsView, PictureInfo } from '../../src/protocol';
import { canvasExport, fileStem } from './exportImage';
import { overlayColor, pictureCanvas } from './overlay';
import { element } from './page';
import type { HeadsPageContext, HeadsPlugin } from './plugin';

const HEAD_REQUEST = 44_001;
const ROLLOUT_REQUEST = 44_002;
/** The picture's longer side on screen, CSS pixels. */
const SHOWN = 448;

let receiver: ((message: HostToHeadsView) => boolean) | undefined;

export const picturePlugin: HeadsPlugin = {
  id: 'picture',
  title: 'Picture',
  shows: (info) => info.picture !== undefined,
  mount,
  receive: (message) => receiver?.(message) ?? false,
};

/** The weights of one query row over the patches only, [rows·cols], from an n-long row. */
export function patchWeights(row: ArrayLike<number>, picture: PictureInfo): Float64Array {
  const [rows, cols] = picture.grid;
  return Float64Array.from({ length: rows * cols }, (_, i) => row[picture.prefix + i]);
}

function mount(section: HTMLElement, context: HeadsPageContext): void {
  const picture = context.info.picture as PictureInfo;
  const { info } = context;
  const [rows, cols] = picture.grid;
  const n = info.queryCount;
  const controls = element('div', undefined, { class: 'controls' });
  const mode = element('select', undefined, { id: 'picture-mode', 'aria-label': 'What is laid over the picture' });
  mode.append(element('option', 'one head', { value: 'head' }), element('option', 'rollout', { value: 'rollout' }));
  const layer = element('select', undefined, { id: 'picture-layer', 'aria-label': 'Layer' });
  for (let l = 0; l < info.layerCount; l++) layer.append(element('option', `L${l}`, { value: String(l) }));
  const head = element('select', undefined, { id: 'picture-head', 'aria-label': 'Head' });
  for (let h = 0; h < info.headCount; h++) head.append(element('option', `H${h}`, { value: String(h) }));
  const from = element('select', undefined, { id: 'picture-query', 'aria-label': 'Attention from' });
  info.tokens.forEach((token, i) => from.append(element('option', token, { value: String(i) })));
  const opacity = element('input', undefined, { id: 'picture-opacity', type: 'range', min: '0', max: '1', step: '0.05', value: '0.6', 'aria-label': 'Overlay opacity' });
  const exportButton = element('button', 'Export PNG', { id: 'picture-export' });
  controls.append(element('label', 'Show '), mode, layer, head, element('label', ' from '), from, element('label', ' opacity '), opacity, exportButton);
  const scale = SHOWN / Math.max(picture.width, picture.height);
  const canvas = element('canvas', undefined, { id: 'picture-canvas', width: String(Math.round(picture.width * scale)), height: String(Math.round(picture.height * scale)) });
  const tip = element('p', '', { id: 'picture-tip', class: 'meta' });
  const status = element('p', '', { id: 'picture-status', class: 'meta' });
  const labels = element('ol', undefined, { id: 'picture-labels' });
  for (const { label, probability } of picture.labels) labels.append(element('li', `${label} — ${(100 * probability).toFixed(1)}%`));
  section.append(controls, canvas, tip, status, ...(picture.labels.length ? [element('h2', 'Top labels'), labels] : []));

  // The picture itself, once, at its own size; drawn scaled under each overlay.
  const source = pictureCanvas(picture);

  let weights: Float64Array | undefined;
  let rollout: Float32Array | Float64Array | undefined;
  // A patch covers patchSize pixels of the picture (the convolution drops a remainder past the last whole patch).
  const cellW = picture.patchSize * (canvas.width / picture.width);
  const cellH = picture.patchSize * (canvas.height / picture.height);

  const draw = () => {
    const g = canvas.getContext('2d')!;
    g.imageSmoothingEnabled = true;
    g.drawImage(source, 0, 0, canvas.width, canvas.height);
    if (weights) {
      let max = 0;
      for (const w of weights) max = Math.max(max, w);
      const alpha = Number(opacity.value);
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          const [red, green, blue, a] = overlayColor(weights[r * cols + c], max, alpha);
          g.fillStyle = `rgba(${red}, ${green}, ${blue}, ${a.toFixed(3)})`;
          g.fillRect(c * cellW, r * cellH, cellW, cellH);
        }
      }
    }
    // The patch grid.
    g.strokeStyle = 'rgba(255, 255, 255, 0.35)';
    g.lineWidth = 1;
    g.beginPath();
    for (let r = 1; r <= rows; r++) {
      g.moveTo(0, r * cellH);
      g.lineTo(cols * cellW, r * cellH);
    }
    for (let c = 1; c <= cols; c++) {
      g.moveTo(c * cellW, 0);
      g.lineTo(c * cellW, rows * cellH);
    }
    g.stroke();
    const q = Number(from.value);
    if (q >= picture.prefix) {
      const p = q - picture.prefix;
      g.strokeStyle = '#ff2d55';
      g.lineWidth = 2;
      g.strokeRect((p % cols) * cellW + 1, Math.floor(p / cols) * cellH + 1, cellW - 2, cellH - 2);
    }
    canvas.setAttribute('data-painted', `${mode.value}:${layer.value}:${head.value}:${from.value}`);
  };

  const ask = () => {
    const q = Number(from.value);
    if (mode.value === 'rollout') {
      if (rollout) {
        weights = patchWeights(rollout.subarray(q * n, (q + 1) * n), picture);
        status.textContent = `Rollout from ${info.tokens[q]}: the attention rollout of every layer (the head scores' rollout, docs/analysis.md).`;
        draw();
      } else {
        status.textContent = 'Computing the rollout…';
        context.post({ type: 'query', requestId: ROLLOUT_REQUEST, query: { kind: 'scores' } });
      }
      return;
    }
    status.textContent = `L${layer.value} H${head.value} from ${info.tokens[q]}…`;
    context.post({ type: 'query', requestId: HEAD_REQUEST, query: { kind: 'head', layer: Number(layer.value), head: Number(head.value) } });
  };
  let headAnswer: Extract<HeadsAnswer, { kind: 'head' }> | undefined;
  const showHead = () => {
    if (!headAnswer) return;
    const view = headAnswer.view;
    const q = Number(from.value);
    if (view.rowBlock !== 1 || view.colBlock !== 1 || view.rowStart !== 0 || view.colStart !== 0 || view.cols !== n) {
      status.textContent = `L${headAnswer.layer} H${headAnswer.head} came pooled (${view.rowBlock}×${view.colBlock} blocks): the overlay needs every weight.`;
      weights = undefined;
    } else {
      weights = patchWeights(view.data.subarray(q * n, (q + 1) * n), picture);
      status.textContent = `L${headAnswer.layer} H${headAnswer.head}: attention from ${info.tokens[q]} to each patch (colour scaled to this row's largest patch weight).`;
    }
    draw();
  };
  receiver = (message) => {
    if (message.type === 'error' && (message.requestId === HEAD_REQUEST || message.requestId === ROLLOUT_REQUEST)) {
      status.textContent = message.message;
      return true;
    }
    if (message.type !== 'answer') return false;
    if (message.requestId === HEAD_REQUEST && message.answer.kind === 'head') {
      headAnswer = message.answer;
      if (mode.value === 'head' && String(headAnswer.layer) === layer.value && String(headAnswer.head) === head.value) showHead();
      return true;
    }
    if (message.requestId === ROLLOUT_REQUEST && message.answer.kind === 'scores') {
      rollout = message.answer.rollout ?? undefined;
      if (mode.value === 'rollout') ask();
      return true;
    }
    return false;
  };
  for (const control of [mode, layer, head]) control.addEventListener('change', ask);
  mode.addEventListener('change', () => {
    layer.disabled = head.disabled = mode.value === 'rollout';
  });
  from.addEventListener('change', () => (mode.value === 'rollout' || !headAnswer ? ask() : showHead()));
  opacity.addEventListener('input', draw);
  const patchAt = (event: MouseEvent): number | undefined => {
    const box = canvas.getBoundingClientRect();
    const c = Math.floor(((event.clientX - box.left) / box.width) * (canvas.width / cellW));
    const r = Math.floor(((event.clientY - box.top) / box.height) * (canvas.height / cellH));
    return r >= 0 && r < rows && c >= 0 && c < cols ? r * cols + c : undefined;
  };
  canvas.addEventListener('mousemove', (event) => {
    const p = patchAt(event);
    if (p === undefined) return;
    tip.textContent = `${info.tokens[picture.prefix + p]}${weights ? `: ${weights[p].toFixed(4)}` : ''}`;
  });
  canvas.addEventListener('click', (event) => {
    const p = patchAt(event);
    if (p === undefined) return;
    from.value = String(picture.prefix + p);
    from.dispatchEvent(new Event('change'));
  });
  exportButton.addEventListener('click', () => {
    const what = mode.value === 'rollout' ? 'rollout' : `L${layer.value}-H${head.value}`;
    context.post(canvasExport(canvas, 'png', `${fileStem(info.title)}-${what}-overlay.png`, `${info.title}: ${what} from ${info.tokens[Number(from.value)]}`));
  });
  draw();
  ask();
}
