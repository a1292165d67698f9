// Attentions saved from anywhere (someone's PyTorch run, `outputs.attentions`) → AttentionStack.
// A file holds one tensor [layers, heads, q, k] or [layers, batch, heads, q, k], or one tensor per
// layer, [heads, q, k] or [batch, heads, q, k], named with its layer's number (`attentions.3`,
// `layers.3.attn`, or `3` for a saved tuple/list, as the torch reader names its items). Of a batch
// the first item is shown, and the notes say so. Token labels come from the file's metadata, a
// tokens.json beside it, or ids; the checks refuse what is not attention weights with one message.
import type { Tensor, TensorFile } from '../parse/tensors';
import { shapeLabel } from '../parse/tensors/tensor';
import type { AttentionStack, StackSource } from './stack';

/** Why a file cannot be shown as attentions: one message for the user. */
export class HeadsInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HeadsInputError';
  }
}

export interface SavedAttentionsInput {
  /** The file's name, for messages and the stack's source. */
  file: string;
  content: TensorFile;
  /** Token ids given by the user (they win over an `input_ids` tensor in the file). */
  ids?: number[];
  /** A tokens.json beside the file, parsed. */
  sidecarTokens?: unknown;
  /** Labels of ids, from a tokenizer.json beside the file. */
  labelIds?: (ids: number[]) => string[];
}

export interface SavedAttentions {
  stack: AttentionStack;
  /** How the file was read: its layout, the batch item shown, where the labels came from. */
  notes: string[];
}

/** Row sums further than this from 1 are not softmax weights (float16 files round to ~1e-3). */
const ROW_SUM_TOLERANCE = 1e-2;
export const IDS_KEYS = new Set(['input_ids', 'ids', 'token_ids']);

export interface Layer {
  tensor: Tensor;
  /** Elements before this layer's batch item 0 in tensor.data. */
  offset: number;
}

/** The tensors that may hold attentions: all but ids, of rank 3 or more. */
export function attentionCandidates(tensors: readonly Tensor[]): Tensor[] {
  return tensors.filter((tensor) => !IDS_KEYS.has(lastPart(tensor.key)) && tensor.shape.length >= 3);
}

/** Whether a file looks like saved attentions (by shapes alone: the rows are checked on opening). */
export function looksLikeAttentions(tensors: readonly Tensor[]): boolean {
  const candidates = attentionCandidates(tensors);
  return candidates.length > 0 && candidates.every((tensor) => tensor.shape.length <= 5);
}

export function savedStack(input: SavedAttentionsInput): SavedAttentions {
  const { file, content } = input;
  const notes: string[] = [];
  const candidates = attentionCandidates(content.tensors);
  if (candidates.length === 0) {
    throw new HeadsInputError(`${file} holds no attentions: expected a tensor [layers, heads, q, k] or [layers, batch, heads, q, k], or one [heads, q, k] tensor per layer.`);
  }
  const layers = readLayers(candidates, notes);
  const { tokens, keyTokens, tokenIds } = labels(input, layers.queryCount, layers.keyCount, notes);
  return { stack: layerStack({ kind: 'saved', file }, layers, { tokens, keyTokens, tokenIds }), notes };
}

/** The layers of a file's (or one kind's) attention tensors, their rows checked. */
export interface SavedLayers {
  layers: Layer[];
  headCount: number;
  queryCount: number;
  keyCount: number;
  lowerTriangular: boolean;
}

/** One tensor holding every layer, or one per layer (a single tensor with a layer number in its
 * name is one layer's, as a one-layer model's saved tuple is); rows checked. */
export function readLayers(candidates: Tensor[], notes: string[]): SavedLayers {
  const one = candidates.length === 1 && layerNumber(candidates[0].key) === undefined;
  const { layers, headCount, queryCount, keyCount } = one ? stacked(candidates[0], notes) : perLayer(candidates, notes);
  return { layers, headCount, queryCount, keyCount, lowerTriangular: checkRows(layers, headCount, queryCount, keyCount) };
}

/** A stack over read layers, with its labels. */
export function layerStack(source: StackSource, read: SavedLayers, labels: { tokens: string[]; keyTokens: string[]; tokenIds?: number[] }): AttentionStack {
  const { layers, headCount, queryCount, keyCount, lowerTriangular } = read;
  const size = queryCount * keyCount;
  return {
    source,
    tokens: labels.tokens,
    keyTokens: labels.keyTokens,
    ...(labels.tokenIds ? { tokenIds: labels.tokenIds } : {}),
    layerCount: layers.length,
    headCount,
    queryCount,
    keyCount,
    ...(lowerTriangular ? { lowerTriangular } : {}),
    weights(layer, head) {
      const { tensor, offset } = layers[layer];
      const start = offset + head * size;
      return tensor.data.subarray(start, start + size);
    },
  };
}

/** One tensor holding every layer. */
function stacked(tensor: Tensor, notes: string[]) {
  const shape = tensor.shape;
  const where = `\`${tensor.key}\` (${shapeLabel(shape)})`;
  if (shape.length === 3) {
    notes.push(`${where}: one layer, [heads, q, k].`);
    return { layers: [{ tensor, offset: 0 }], headCount: shape[0], queryCount: shape[1], keyCount: shape[2] };
  }
  if (shape.length !== 4 && shape.length !== 5) throw new HeadsInputError(`${named(tensor)} is ${shapeLabel(shape)}: attentions are [layers, heads, q, k] or [layers, batch, heads, q, k].`);
  const [layerCount, ...rest] = shape;
  const batch = shape.length === 5 ? rest.shift()! : 1;
  const [headCount, queryCount, keyCount] = rest;
  const perLayerSize = batch * headCount * queryCount * keyCount;
  notes.push(shape.length === 5 ? `${where}: [layers, batch, heads, q, k]${batchNote(batch)}` : `${where}: [layers, heads, q, k].`);
  const layers = Array.from({ length: layerCount }, (_, l) => ({ tensor, offset: l * perLayerSize }));
  return { layers, headCount, queryCount, keyCount };
}

/** One tensor per layer, ordered by the layer number in its name. */
function perLayer(candidates: Tensor[], notes: string[]) {
  const numbered = candidates.map((tensor) => ({ tensor, number: layerNumber(tensor.key) }));
  const unnumbered = numbered.find((entry) => entry.number === undefined);
  if (unnumbered) throw new HeadsInputError(`${named(unnumbered.tensor)} has no layer number in its name; name per-layer attentions like \`attentions.0\`, \`layers.0.attn\` or save a tuple/list.`);
  numbered.sort((a, b) => a.number! - b.number!);
  const first = numbered[0].tensor;
  for (const { tensor } of numbered) {
    if (tensor.shape.length !== 3 && tensor.shape.length !== 4) throw new HeadsInputError(`${named(tensor)} is ${shapeLabel(tensor.shape)}: a layer's attentions are [heads, q, k] or [batch, heads, q, k].`);
    if (shapeLabel(tensor.shape) !== shapeLabel(first.shape)) {
      throw new HeadsInputError(`The layers' shapes disagree: \`${tensor.key}\` is ${shapeLabel(tensor.shape)} but \`${first.key}\` is ${shapeLabel(first.shape)}.`);
    }
  }
  const shape = first.shape;
  const [headCount, queryCount, keyCount] = shape.slice(-3);
  notes.push(`${numbered.length} tensors, one per layer (\`${first.key}\` … \`${numbered[numbered.length - 1].tensor.key}\`), each ${shapeLabel(shape)}: ${shape.length === 4 ? `[batch, heads, q, k]${batchNote(shape[0])}` : '[heads, q, k].'}`);
  return { layers: numbered.map(({ tensor }) => ({ tensor, offset: 0 })), headCount, queryCount, keyCount };
}

function batchNote(batch: number): string {
  return batch > 1 ? `; of the batch of ${batch}, item 0 is shown.` : '.';
}

/** The layer's number in a name: its first whole part (`attentions.3` → 3, `3` → 3). */
function layerNumber(key: string): number | undefined {
  const part = key.split(/[./]/).find((piece) => /^\d+$/.test(piece));
  return part === undefined ? undefined : Number(part);
}

export function lastPart(key: string): string {
  return key.slice(key.lastIndexOf('.') + 1).toLowerCase();
}

function named(tensor: Tensor): string {
  return `\`${tensor.key}\``;
}

/**
 * Weights in [0, 1] whose rows sum to 1 (or 0: a fully masked row), else one message. Returns
 * whether every head is square with no weight past its diagonal (causal attention): the head
 * analyses then read only the lower triangles. Known for nothing extra: each row's part past the
 * diagonal is summed apart, and weights ≥ 0 sum to 0 only when all are 0.
 */
function checkRows(layers: Layer[], headCount: number, queryCount: number, keyCount: number): boolean {
  let lowerTriangular = queryCount === keyCount;
  const row = { sum: 0, low: 0 };
  layers.forEach(({ tensor, offset }, layer) => {
    const data = tensor.data;
    for (let head = 0; head < headCount; head++) {
      for (let query = 0; query < queryCount; query++) {
        const start = offset + (head * queryCount + query) * keyCount;
        const diagonal = start + Math.min(query, keyCount - 1);
        sumAndLeast(data, start, diagonal + 1, row);
        const { sum, low: lowBefore } = row;
        sumAndLeast(data, diagonal + 1, start + keyCount, row);
        const past = row.sum;
        const low = Math.min(lowBefore, row.low);
        if (past !== 0) lowerTriangular = false;
        const total = sum + past;
        if (!(low >= 0) || !(Math.abs(total - 1) <= ROW_SUM_TOLERANCE || total === 0)) {
          const where = `layer ${layer} head ${head} query ${query} (\`${tensor.key}\`)`;
          const what = Number.isNaN(total) ? 'holds NaN' : low < 0 ? `has a negative weight (${Number(low.toPrecision(4))})` : `sums to ${Number(total.toPrecision(6))}, not 1`;
          throw new HeadsInputError(`${where} ${what}: these are not attention weights; they may be pre-softmax scores (save the weights after softmax, as output_attentions=True gives them).`);
        }
      }
    }
  });
  return lowerTriangular;
}

/**
 * The sum and the least of data[from, to), in one pass with two of each running: with one, each
 * add waited on the last (a 12 × 12 × 1024² file's 151 M weights took 450–700 ms of CPU).
 * NaN is never the least; the sum finds it.
 */
function sumAndLeast(data: Float32Array | Float64Array, from: number, to: number, out: { sum: number; low: number }): void {
  let a = 0;
  let b = 0;
  let lowA = Infinity;
  let lowB = Infinity;
  let at = from;
  for (; at + 1 < to; at += 2) {
    const x = data[at];
    const y = data[at + 1];
    a += x;
    b += y;
    if (x < lowA) lowA = x;
    if (y < lowB) lowB = y;
  }
  if (at < to) {
    const x = data[at];
    a += x;
    if (x < lowA) lowA = x;
  }
  out.sum = a + b;
  out.low = lowA < lowB ? lowA : lowB;
}

/** Query and key labels, and the ids when known. */
function labels(input: SavedAttentionsInput, queryCount: number, keyCount: number, notes: string[]): { tokens: string[]; keyTokens: string[]; tokenIds?: number[] } {
  const fromIds = (ids: number[], where: string) => {
    if (ids.length !== queryCount && ids.length !== keyCount) {
      throw new HeadsInputError(`There ${ids.length === 1 ? 'is 1 id' : `are ${ids.length} ids`} (${where}) but the attentions have ${queryCount} quer${queryCount === 1 ? 'y' : 'ies'}${keyCount === queryCount ? '' : ` and ${keyCount} keys`}.`);
    }
    const named = input.labelIds?.(ids);
    notes.push(named ? `Tokens: ${where}, named by tokenizer.json.` : `Tokens: ${where} (no tokenizer.json beside the file to name them).`);
    return { texts: named ?? ids.map(String), ids };
  };
  let texts: string[] | undefined;
  let ids: number[] | undefined;
  const metadata = input.content.metadata?.tokens;
  if (metadata !== undefined) {
    texts = stringList(parseJson(metadata), 'the metadata entry `tokens`');
    notes.push('Tokens: the file\'s metadata.');
  } else if (input.sidecarTokens !== undefined) {
    texts = stringList(input.sidecarTokens, 'tokens.json');
    notes.push('Tokens: tokens.json beside the file.');
  }
  const idsTensor = input.content.tensors.find((tensor) => IDS_KEYS.has(lastPart(tensor.key)));
  if (input.ids || idsTensor) {
    // A batch of ids [batch, n]: item 0's, as for the attentions.
    const given = input.ids ?? Array.from(idsTensor!.data.subarray(0, idsTensor!.shape[idsTensor!.shape.length - 1] ?? idsTensor!.data.length));
    const made = fromIds(given, input.ids ? 'the ids given' : `\`${idsTensor!.key}\``);
    ids = made.ids;
    texts ??= made.texts;
  }
  if (texts && texts.length !== queryCount && texts.length !== keyCount) {
    throw new HeadsInputError(`The tokens name ${texts.length} tokens but the attentions have ${queryCount} queries${keyCount === queryCount ? '' : ` and ${keyCount} keys`}.`);
  }
  if (!texts) notes.push(`Tokens: positions 0…${Math.max(queryCount, keyCount) - 1} (no tokens in the metadata, no tokens.json, no ids).`);
  const positions = (count: number) => Array.from({ length: count }, (_, i) => String(i));
  // Decoding with a cache: the queries are the last tokens of the keys'.
  const keyTokens = texts && texts.length === keyCount ? texts : positions(keyCount);
  const tokens = texts ? (texts.length === queryCount ? texts : texts.slice(keyCount - queryCount)) : positions(queryCount);
  const tokenIds = ids && ids.length === queryCount ? ids : undefined;
  return { tokens, keyTokens, ...(tokenIds ? { tokenIds } : {}) };
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function stringList(value: unknown, where: string): string[] {
  const list = isRecord(value) && Array.isArray(value.tokens) ? value.tokens : value;
  if (!Array.isArray(list) || !list.every((item) => typeof item === 'string')) throw new HeadsInputError(`${where} is not a list of token strings (["The", " cat", …]).`);
  return list;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
