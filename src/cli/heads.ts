// `attention-lens heads FILE [--ids 1,2,3] [--attention KIND] [--json] [--layer L --head H [--top K]]`:
// saved attentions (.pt/.safetensors/.npy/.npz) read as the heads views read them — layout, tokens,
// and with --layer/--head the strongest keys of each query (the head view's lines), as text or
// JSON; of an encoder–decoder model's file, the kind chosen (cross-attention by default).
import { ATTENTION_KINDS, kindsOf, ofKind } from '../core/heads/kinds';
import { loadSavedAttentions } from '../core/heads/load';
import { headLines } from '../core/heads/pool';
import { HeadsInputError } from '../core/heads/saved';
import type { AttentionKind, AttentionStack } from '../core/heads/stack';
import { TensorReadError } from '../core/parse/tensors';
import { headsAnalysisText, stackReport } from './headsAnalysis';

export const HEADS_USAGE = `  attention-lens heads FILE [--ids 1,2,3] [--attention KIND] [--json] [--layer L --head H [--top K]]
      Saved attentions (.pt/.safetensors/.npy/.npz: [layers, heads, q, k],
      [layers, batch, heads, q, k] or one tensor per layer): the layout read and the tokens
      (metadata, tokens.json or ids with a tokenizer.json beside the file); --layer/--head
      print each query's K strongest keys (default 3) in that head. Every report carries the head
      scores and the rollout (docs/analysis.md). An encoder–decoder model's encoder_attentions,
      decoder_attentions and cross_attentions: --attention encoder|decoder|cross (default cross;
      docs/encoder-decoder.md).
  attention-lens heads (FILE --ids … | DIR --text T | DIR --ids … | MODEL.json --ids …)
                       [--compare FILE2|DIR2 | --text2 T2] [--flow] [--json]
  attention-lens heads (DIR | MODEL.json) --probe induction [--repeat R] [--seed S] [--json]
      The analyses alone: head scores, rollout, attention flow (--flow, small inputs), the
      Jensen–Shannon divergence of each head against a second run, and the induction probe
      (BOS + R random tokens twice, R = 32; MODEL.json: an attention-only model such as
      examples/13-induction-head.json).`;

/** Elements of a saved file read by default: 12 × 12 × 1024² fits. */
export const HEADS_MAX_ELEMENTS = 2 ** 28;

export interface HeadsArguments {
  file: string;
  ids?: number[];
  json: boolean;
  layer?: number;
  head?: number;
  top: number;
  attention?: AttentionKind;
}

/** A problem with the command line (exit 2) or with the input (exit 1), as one message. */
export class HeadsCommandError extends Error {
  constructor(
    message: string,
    readonly usage: boolean,
  ) {
    super(message);
  }
}

export function parseHeadsArgs(argv: string[]): HeadsArguments {
  const parsed: Partial<HeadsArguments> = { json: false, top: 3 };
  const whole = (flag: string, value: string | undefined, from: number) => {
    const n = Number(value);
    if (value === undefined || !Number.isInteger(n) || n < from) throw new HeadsCommandError(`${flag} needs a whole number from ${from}`, true);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') parsed.json = true;
    else if (arg === '--ids') {
      const text = argv[++i] ?? '';
      const ids = text.split(',').map((part) => Number(part.trim()));
      if (text.trim() === '' || !ids.every((id) => Number.isInteger(id) && id >= 0)) throw new HeadsCommandError('--ids needs token ids separated by commas, like --ids 464,3797,3332', true);
      parsed.ids = ids;
    } else if (arg === '--layer') parsed.layer = whole(arg, argv[++i], 0);
    else if (arg === '--head') parsed.head = whole(arg, argv[++i], 0);
    else if (arg === '--top') parsed.top = whole(arg, argv[++i], 1);
    else if (arg === '--attention') {
      const kind = argv[++i];
      if (!ATTENTION_KINDS.includes(kind as AttentionKind)) throw new HeadsCommandError(`--attention needs one of ${ATTENTION_KINDS.join(', ')}`, true);
      parsed.attention = kind as AttentionKind;
    }
    else if (arg.startsWith('-')) throw new HeadsCommandError(`unknown option \`${arg}\``, true);
    else if (parsed.file === undefined) parsed.file = arg;
    else throw new HeadsCommandError(`unexpected argument \`${arg}\``, true);
  }
  if (parsed.file === undefined) throw new HeadsCommandError('no FILE given', true);
  if ((parsed.layer === undefined) !== (parsed.head === undefined)) throw new HeadsCommandError('--layer and --head go together', true);
  return parsed as HeadsArguments;
}

/** The command's output; throws HeadsCommandError for the user's mistakes. */
export async function runHeads(args: HeadsArguments): Promise<string> {
  let loaded;
  try {
    loaded = loadSavedAttentions(args.file, { maxElements: HEADS_MAX_ELEMENTS }, args.ids);
  } catch (error) {
    if (error instanceof HeadsInputError || error instanceof TensorReadError) throw new HeadsCommandError(error.message, false);
    const code = (error as NodeJS.ErrnoException).code;
    if (code) throw new HeadsCommandError(`cannot read ${args.file}: ${code}`, false);
    throw error;
  }
  const { notes } = loaded;
  const kinds = kindsOf(loaded.stack);
  if (args.attention && !kinds.includes(args.attention)) throw new HeadsCommandError(`--attention ${args.attention}: ${kinds.length ? `the file has ${kinds.join(', ')} attentions` : 'the file holds one kind of attention, not named encoder_attentions, decoder_attentions or cross_attentions'}`, false);
  const stack = ofKind(loaded.stack, args.attention);
  const kind = stack.kind ? { attention: stack.kind, kinds } : {};
  const lines = args.layer === undefined ? undefined : strongestKeys(stack, args.layer, args.head!, args.top);
  // Head scores and rollout (issue 27, src/cli/headsAnalysis.ts) are part of every report.
  const analysis = await stackReport(stack);
  if (args.json) {
    const { layerCount, headCount, queryCount, keyCount, tokens, keyTokens, tokenIds } = stack;
    return `${JSON.stringify({ file: args.file, ...kind, layers: layerCount, heads: headCount, queries: queryCount, keys: keyCount, tokens, keyTokens, ...(tokenIds ? { tokenIds } : {}), notes, ...(lines ? { strongestKeys: lines } : {}), ...analysis })}\n`;
  }
  const out = [`${args.file}: ${stack.layerCount} layers × ${stack.headCount} heads, ${stack.queryCount} queries × ${stack.keyCount} keys`];
  if (stack.kind) out.push(`attention: ${stack.kind} (the file has ${kinds.join(', ')}: --attention chooses)`);
  for (const note of notes) out.push(`note: ${note}`);
  out.push(`tokens: ${stack.tokens.map((token) => JSON.stringify(token)).join(' ')}`);
  if (stack.keyTokens.join('\n') !== stack.tokens.join('\n')) out.push(`key tokens: ${stack.keyTokens.map((token) => JSON.stringify(token)).join(' ')}`);
  if (lines) {
    out.push(`layer ${args.layer} head ${args.head}: the ${lines.k} strongest keys of each query`);
    lines.rows.forEach((row, query) => out.push(`  ${query} ${JSON.stringify(stack.tokens[query])} → ${row.map(({ key, weight }) => `${JSON.stringify(stack.keyTokens[key])} (${key}) ${weight.toFixed(4)}`).join(', ')}`));
  }
  return `${out.join('\n')}\n${headsAnalysisText(analysis)}`;
}

function strongestKeys(stack: AttentionStack, layer: number, head: number, top: number) {
  if (layer >= stack.layerCount) throw new HeadsCommandError(`--layer ${layer}: the file has layers 0–${stack.layerCount - 1}`, false);
  if (head >= stack.headCount) throw new HeadsCommandError(`--head ${head}: the file has heads 0–${stack.headCount - 1}`, false);
  const { k, keys, weights } = headLines(stack, layer, [head], top);
  const rows = Array.from({ length: stack.queryCount }, (_, query) =>
    Array.from({ length: k }, (_, r) => ({ key: keys[query * k + r], weight: weights[query * k + r] })));
  return { layer, head, k, rows };
}
