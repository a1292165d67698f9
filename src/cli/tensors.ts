// The CLI's tensor-file commands: list what a file holds, and run attention on a checkpoint's
// layer with X from another file (`run model.safetensors --x acts.npy --layer 1 --heads 8`) or
// from the same one. Text files that name tensors (`X = np.load("acts.npy")`) are resolved
// against the files next to them.
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { readTensorFile, TENSOR_FILE, type Tensor, type TensorFile, type TensorLimits } from '../core/parse/tensors';
import { type TensorFileLoader, tensorFileLoader } from '../core/parse/tensors/resolve';
import { attentionLayers, chooseLayer, namedInput, type TensorProblem, tensorMatrix, tensorProblem } from '../core/parse/tensors/roles';
import { summarize } from '../core/parse/tensors/summary';
import { shapeLabel } from '../core/parse/tensors/tensor';

export const isTensorFile = (file: string): boolean => TENSOR_FILE.test(file);

/** Reads files named relative to `textFile`'s folder. */
export function loaderBeside(textFile: string, limits: TensorLimits): TensorFileLoader {
  const folder = dirname(resolve(textFile));
  return tensorFileLoader((file) => readFile(isAbsolute(file) ? file : resolve(folder, file)), limits);
}

export async function loadTensorFile(file: string, limits: TensorLimits): Promise<TensorFile> {
  return readTensorFile(file, await readFile(file), limits);
}

/** `tensors FILE`: one line per tensor, then the attention layers found. */
export function listTensors(file: string, content: TensorFile): string {
  const lines = [`${file}: ${content.format}, ${content.tensors.length} tensor${content.tensors.length === 1 ? '' : 's'}`];
  for (const tensor of content.tensors) {
    const s = summarize(tensor);
    const figures = tensor.data.length === 0 ? 'empty' : `min ${fmt(s.min)} max ${fmt(s.max)} mean ${fmt(s.mean)} std ${fmt(s.std)}${s.nan ? ` nan ${s.nan}` : ''}`;
    lines.push(`  ${tensor.key}  ${tensor.dtype} ${shapeLabel(tensor.shape)}  ${figures}`);
  }
  const layers = attentionLayers(content.tensors);
  if (layers.length > 0) lines.push(`attention layers: ${layers.map((layer, i) => `${i} (${layer.prefix || 'top level'})`).join(', ')}`);
  for (const [key, value] of Object.entries(content.metadata ?? {})) lines.push(`metadata ${key}: ${value}`);
  return `${lines.join('\n')}\n`;
}

/** `tensors FILE --json`: what the listing says, as one object. */
export function tensorListing(content: TensorFile): object {
  return {
    format: content.format,
    tensors: content.tensors.map((tensor) => ({ key: tensor.key, dtype: tensor.dtype, shape: tensor.shape, ...summarize(tensor) })),
    layers: attentionLayers(content.tensors).map((layer) => layer.prefix),
    metadata: content.metadata ?? {},
  };
}

function fmt(value: number): string {
  return Number.isFinite(value) ? Number(value.toPrecision(5)).toString() : String(value);
}

export interface TensorRunChoice {
  /** A tensor file (its only tensor, or `file.npz:key`), or a key of the model file. */
  x?: string;
  layer?: string;
  heads?: number;
}

/** The problem `run MODEL --x …` asks for, or why there is none. */
export async function checkpointProblem(file: string, model: TensorFile, choice: TensorRunChoice, limits: TensorLimits): Promise<TensorProblem | string> {
  const layer = chooseLayer(attentionLayers(model.tensors), choice.layer);
  if (typeof layer === 'string') return layer;
  const x = await pickInput(file, model, choice.x, limits);
  if (typeof x === 'string') return x;
  const matrix = tensorMatrix(x.tensor);
  if (typeof matrix === 'string') return matrix;
  return tensorProblem({ file, tensors: model.tensors, layer, X: { matrix, name: x.name, source: { kind: 'tensor', file: x.file, key: x.tensor.key } }, heads: choice.heads });
}

async function pickInput(file: string, model: TensorFile, choice: string | undefined, limits: TensorLimits): Promise<{ tensor: Tensor; file: string; name: string } | string> {
  if (choice === undefined) {
    const named = namedInput(model.tensors);
    return named ? { tensor: named, file, name: named.key } : `Which X? ${file} has no tensor named X, inputs, embeddings or hidden_states: pass --x ACTS.npy (or --x FILE.npz:KEY, or --x KEY of this file).`;
  }
  const own = model.tensors.find((tensor) => tensor.key === choice);
  if (own) return { tensor: own, file, name: own.key };
  const colon = /^(.*\.(?:npz|safetensors|pt|pth|bin|ckpt)):(.+)$/.exec(choice);
  const xFile = colon ? colon[1] : choice;
  if (!isTensorFile(xFile)) return `--x ${choice}: neither a tensor of ${file} nor a tensor file.`;
  const content = await loadTensorFile(xFile, limits);
  const key = colon?.[2];
  const tensor = key === undefined ? (content.tensors.length === 1 ? content.tensors[0] : undefined) : content.tensors.find((t) => t.key === key);
  if (!tensor) return `--x ${choice}: ${xFile} holds ${content.tensors.map((t) => t.key).join(', ')}; name one as --x ${xFile}:KEY.`;
  return { tensor, file: xFile, name: key ?? xFile.split('/').pop() ?? xFile };
}
