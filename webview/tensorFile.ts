// The tensor file view: a table of the file's tensors (shape, dtype, statistics) and the
// "Show attention" form (layer, X, heads). Everything is built with DOM calls from data the host
// sends; nothing from the file is ever parsed as HTML.
import type { HostToTensorView, TensorViewData, TensorViewToHost } from '../src/protocol';

interface VsCodeApi {
  postMessage(message: TensorViewToHost): void;
}
declare const acquireVsCodeApi: () => VsCodeApi;
const vscode = acquireVsCodeApi();
const app = document.getElementById('app') as HTMLElement;

function element<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, attributes: Record<string, string> = {}): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

function figure(value: number): string {
  return Number.isFinite(value) ? Number(value.toPrecision(5)).toString() : String(value);
}

function render(data: TensorViewData): void {
  app.replaceChildren();
  app.append(element('h1', data.fileName), element('p', `${data.format} · ${data.tensors.length} tensor${data.tensors.length === 1 ? '' : 's'}`, { class: 'meta' }));
  if (data.modelType) app.append(data.pictures ? pictureForm(data.modelType, data.pictures) : modelForm(data.modelType));
  if (data.attentions) {
    const heads = element('button', 'Show heads', { id: 'show-heads', title: 'Every layer × head of these saved attentions: the model view and the head view' });
    heads.addEventListener('click', () => vscode.postMessage({ type: 'showHeads' }));
    app.append(element('p', 'These look like saved attentions (layers × heads × queries × keys).'), heads);
  } else app.append(attentionForm(data));
  const table = element('table', undefined, { id: 'tensors' });
  const head = element('tr');
  for (const title of ['name', 'dtype', 'shape', 'min', 'max', 'mean', 'std']) head.append(element('th', title));
  table.append(head);
  for (const tensor of data.tensors) {
    const row = element('tr');
    const s = tensor.summary;
    const cells = [tensor.key, tensor.dtype, tensor.shape.length === 0 ? 'scalar' : tensor.shape.join('×'), figure(s.min), figure(s.max), figure(s.mean), figure(s.std)];
    cells.forEach((text, i) => row.append(element('td', text, i === 0 ? { class: 'key' } : {})));
    if (s.nan > 0) row.title = `${s.nan} NaN entries`;
    table.append(row);
  }
  app.append(table);
  if (data.metadata) {
    const list = element('dl');
    for (const [key, value] of Object.entries(data.metadata)) list.append(element('dt', key), element('dd', value));
    app.append(element('h2', 'Metadata'), list);
  }
}

function attentionForm(data: TensorViewData): HTMLElement {
  const section = element('section', undefined, { id: 'attention' });
  section.append(element('h2', 'Show attention'));
  if (data.layers.length === 0) {
    section.append(element('p', 'No attention layer found: no tensors named like q_proj/k_proj/v_proj, query/key/value, in_proj_weight, c_attn or W_Q/W_K/W_V.'));
    return section;
  }
  const layer = element('select', undefined, { id: 'layer', 'aria-label': 'Layer' });
  data.layers.forEach((candidate, i) => layer.append(element('option', candidate.prefix || '(top level)', { value: String(i) })));
  const roles = element('ul', undefined, { id: 'roles' });
  const showRoles = () => {
    roles.replaceChildren(...data.layers[Number(layer.value)].roles.map((r) => element('li', `${r.role} ← ${r.source}`)));
  };
  layer.addEventListener('change', showRoles);
  showRoles();
  const input = element('select', undefined, { id: 'input', 'aria-label': 'X' });
  for (const candidate of data.inputs) input.append(element('option', candidate.label, { value: candidate.id }));
  const heads = element('input', undefined, { id: 'heads', type: 'number', min: '1', value: String(data.heads), 'aria-label': 'Heads' });
  const button = element('button', 'Show attention', { id: 'show' });
  button.addEventListener('click', () => {
    vscode.postMessage({ type: 'showAttention', layer: Number(layer.value), input: input.value, heads: Math.max(1, Math.floor(Number(heads.value) || 1)) });
  });
  const label = (text: string, control: HTMLElement) => {
    const wrapper = element('label', text);
    wrapper.append(control);
    return wrapper;
  };
  section.append(label('Layer ', layer), roles, label('X ', input), label('Heads ', heads), button, element('div', undefined, { id: 'status', role: 'status' }));
  if (data.inputs.length === 0) button.disabled = true;
  return section;
}

/** The folder holds a whole model (config.json beside the file): run it on a text. */
function modelForm(modelType: string): HTMLElement {
  const section = element('section', undefined, { id: 'model' });
  section.append(element('h2', 'Run model'), element('p', `This folder is a ${modelType} model (config.json beside the file): run every layer on your text.`, { class: 'meta' }));
  const text = element('input', undefined, { id: 'model-text', type: 'text', value: 'The cat sat on the mat', 'aria-label': 'Text', size: '40' });
  const button = element('button', 'Run model', { id: 'run-model' });
  button.addEventListener('click', () => {
    if (text.value.trim() !== '') vscode.postMessage({ type: 'runModel', text: text.value });
  });
  const wrapper = element('label', 'Text ');
  wrapper.append(text);
  section.append(wrapper, button);
  return section;
}

/** A vision model's folder: run it on a picture in or beside the folder, or one chosen. */
function pictureForm(modelType: string, pictures: string[]): HTMLElement {
  const section = element('section', undefined, { id: 'model' });
  section.append(element('h2', 'Run model'), element('p', `This folder is a ${modelType} vision model (config.json beside the file): run every layer on a picture.`, { class: 'meta' }));
  const picture = element('select', undefined, { id: 'model-picture', 'aria-label': 'Picture' });
  pictures.forEach((name, i) => picture.append(element('option', name, { value: String(i) })));
  picture.append(element('option', 'Choose a picture…', { value: 'choose' }));
  const button = element('button', 'Run model', { id: 'run-model' });
  button.addEventListener('click', () => vscode.postMessage({ type: 'runModelOnImage', picture: picture.value === 'choose' ? null : Number(picture.value) }));
  const wrapper = element('label', 'Picture ');
  wrapper.append(picture);
  section.append(wrapper, button);
  return section;
}

function showStatus(error: string | undefined, notes: string[]): void {
  const status = document.getElementById('status') ?? app;
  const list = element('ul');
  for (const note of notes) list.append(element('li', note));
  status.replaceChildren(...(error ? [element('p', error, { class: 'error' })] : []), list);
}

window.addEventListener('message', (event: MessageEvent<HostToTensorView>) => {
  const message = event.data;
  if (message.type === 'tensors') render(message.data);
  else if (message.type === 'status') showStatus(message.error, message.notes);
});
vscode.postMessage({ type: 'ready' });
