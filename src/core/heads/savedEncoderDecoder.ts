// Saved attentions of an encoder–decoder model (T5, BART, Marian…): what `model(...,
// output_attentions=True)` returns, `encoder_attentions` [source × source], `decoder_attentions`
// [target × target] and `cross_attentions` [target × source], each a tuple of one [batch, heads,
// q, k] tensor per layer (saved as `cross_attentions.0`, …) or stacked [layers, heads, q, k] under
// the kind's name. Each kind becomes a stack of its own, its tokens per axis, and the three are
// one run's `kinds` (stack.ts), as an encoder–decoder model run's are: the views select a kind.
// Labels: the source's from the metadata entry or tokens.json's `tokens`, `input_ids` or the ids
// given; the target's from `target_tokens` or `decoder_input_ids` — the names of the CLI's JSON.
// Other tensors of a saved outputs dict (logits, hidden states) are left out, and the notes say so.
import type { Tensor } from '../parse/tensors';
import { shapeLabel } from '../parse/tensors/tensor';
import { attentionCandidates, HeadsInputError, IDS_KEYS, isRecord, lastPart, layerStack, parseJson, readLayers, type SavedAttentions, type SavedAttentionsInput, type SavedLayers, savedStack, stringList } from './saved';
import type { AttentionKind, AttentionStack } from './stack';

/** The kinds in the order a reader meets them, with the names outputs give them. */
const KIND_NAMES: [AttentionKind, string][] = [['encoder', 'encoder_attentions'], ['decoder', 'decoder_attentions'], ['cross', 'cross_attentions']];
const KIND_TITLES: Record<AttentionKind, string> = { encoder: 'Encoder', decoder: 'Decoder', cross: 'Cross' };
const TARGET_IDS = 'decoder_input_ids';

type Axis = 'source' | 'target';

/** The kind a tensor's name says it holds: a part of its name is `encoder_attentions`, …. */
export function kindOfKey(key: string): AttentionKind | undefined {
  const parts = key.toLowerCase().split(/[./]/);
  return KIND_NAMES.find(([, name]) => parts.includes(name))?.[0];
}

/** Saved attentions, of one kind or of an encoder–decoder model's three (by their names). */
export function readSavedAttentions(input: SavedAttentionsInput): SavedAttentions {
  const candidates = attentionCandidates(input.content.tensors);
  return candidates.some((tensor) => kindOfKey(tensor.key)) ? savedEncoderDecoder(input, candidates) : savedStack(input);
}

function savedEncoderDecoder(input: SavedAttentionsInput, candidates: Tensor[]): SavedAttentions {
  const notes: string[] = [];
  const read = new Map<AttentionKind, SavedLayers>();
  for (const [kind] of KIND_NAMES) {
    const tensors = candidates.filter((tensor) => kindOfKey(tensor.key) === kind);
    if (tensors.length === 0) continue;
    const layout: string[] = [];
    read.set(kind, readLayers(tensors, layout));
    notes.push(...layout.map((line) => `${KIND_TITLES[kind]}: ${line}`));
  }
  const left = candidates.filter((tensor) => !kindOfKey(tensor.key));
  if (left.length) notes.push(`Not attentions, left out: ${left.map((tensor) => `\`${tensor.key}\``).join(', ')}.`);
  const { source, target } = lengths(read);
  const sourceLabels = axisLabels(input, 'source', source, notes);
  const targetLabels = axisLabels(input, 'target', target, notes);
  const kinds: { [K in AttentionKind]?: AttentionStack } = {};
  for (const [kind, layers] of read) {
    const queries = kind === 'encoder' ? sourceLabels : targetLabels;
    const keys = kind === 'decoder' ? targetLabels : sourceLabels;
    const stack = layerStack({ kind: 'saved', file: input.file }, layers, { tokens: queries.texts, keyTokens: keys.texts, ...(queries.ids ? { tokenIds: queries.ids } : {}) });
    kinds[kind] = Object.assign(stack, { kind, kinds });
  }
  // The run is its cross stack (the alignment), as a model run is; else the decoder's, else the encoder's.
  const stack = kinds.cross ?? kinds.decoder ?? kinds.encoder!;
  return { stack, notes };
}

/** The source and target lengths the kinds agree on, else one message naming the two that differ. */
function lengths(read: Map<AttentionKind, SavedLayers>): { source?: number; target?: number } {
  const seen: Partial<Record<Axis, { count: number; where: string }>> = {};
  const agree = (axis: Axis, count: number, where: string) => {
    const first = seen[axis];
    if (!first) seen[axis] = { count, where };
    else if (first.count !== count) throw new HeadsInputError(`The ${axis} lengths disagree: ${first.where} has ${first.count} ${axis} positions but ${where} has ${count}.`);
  };
  for (const [kind, { queryCount, keyCount, layers }] of read) {
    const { tensor } = layers[0];
    const where = `\`${tensor.key}\` (${shapeLabel(tensor.shape)})`;
    if (kind !== 'cross' && queryCount !== keyCount) throw new HeadsInputError(`${where} has ${queryCount} queries and ${keyCount} keys, but the ${kind}'s self-attention is square.`);
    agree(kind === 'encoder' ? 'source' : 'target', queryCount, where);
    agree(kind === 'decoder' ? 'target' : 'source', keyCount, where);
  }
  return { source: seen.source?.count, target: seen.target?.count };
}

/** One axis's labels: texts (positions when none are known) and ids when known. */
function axisLabels(input: SavedAttentionsInput, axis: Axis, count: number | undefined, notes: string[]): { texts: string[]; ids?: number[] } {
  if (count === undefined) return { texts: [] };
  const entry = axis === 'source' ? 'tokens' : 'target_tokens';
  const title = axis === 'source' ? 'Source tokens' : 'Target tokens';
  const checked = (texts: string[], where: string) => {
    if (texts.length !== count) throw new HeadsInputError(`${where} names ${texts.length} tokens but the ${axis} has ${count} positions.`);
    return texts;
  };
  let texts: string[] | undefined;
  const metadata = input.content.metadata?.[entry];
  const sidecar = input.sidecarTokens;
  if (metadata !== undefined) {
    texts = checked(stringList(parseJson(metadata), `The metadata entry \`${entry}\``), `The metadata entry \`${entry}\``);
    notes.push(`${title}: the file's metadata.`);
  } else if (sidecar !== undefined && (axis === 'source' || isRecord(sidecar))) {
    // A bare list in tokens.json is the source's, as `tokens` is in the CLI's JSON.
    const value = isRecord(sidecar) ? sidecar[entry] : sidecar;
    if (value !== undefined) {
      texts = checked(stringList(value, `tokens.json's \`${entry}\``), `tokens.json's \`${entry}\``);
      notes.push(`${title}: tokens.json beside the file.`);
    }
  }
  const idsTensor = input.content.tensors.find((tensor) => (axis === 'source' ? IDS_KEYS.has(lastPart(tensor.key)) : lastPart(tensor.key) === TARGET_IDS));
  const given = axis === 'source' ? input.ids : undefined;
  let ids: number[] | undefined;
  if (given || idsTensor) {
    // A batch of ids [batch, n]: item 0's, as for the attentions.
    ids = given ?? Array.from(idsTensor!.data.subarray(0, idsTensor!.shape[idsTensor!.shape.length - 1] ?? idsTensor!.data.length));
    const where = given ? 'the ids given' : `\`${idsTensor!.key}\``;
    if (ids.length !== count) throw new HeadsInputError(`There ${ids.length === 1 ? 'is 1 id' : `are ${ids.length} ids`} (${where}) but the ${axis} has ${count} positions.`);
    if (!texts) {
      const named = input.labelIds?.(ids);
      texts = named ?? ids.map(String);
      notes.push(named ? `${title}: ${where}, named by tokenizer.json.` : `${title}: ${where} (no tokenizer.json beside the file to name them).`);
    }
  }
  if (!texts) notes.push(`${title}: positions 0…${count - 1} (no \`${entry}\` in the metadata or tokens.json, no ${axis === 'source' ? '`input_ids`' : `\`${TARGET_IDS}\``}).`);
  return { texts: texts ?? Array.from({ length: count }, (_, i) => String(i)), ...(ids ? { ids } : {}) };
}
