// The language codes of a multilingual translation model's tokenizer (mBART and mBART-50: `en_XX`,
// `de_DE`, … as special tokens) and where they go, as transformers' tokenizers and modeling_mbart.py
// put them:
//   mBART-50 (MBart50Tokenizer): the source is `[src_lang] X </s>`; the labels `[tgt_lang] X </s>`;
//     the decoder starts at decoder_start_token_id (</s>) and generation forces the target's code
//     as the first token (forced_bos_token_id);
//   mBART (MBartTokenizer): the source is `X </s> [src_lang]`; the labels `X </s> [tgt_lang]`, which
//     shift_tokens_right turns into the decoder's input `[tgt_lang] X </s>`: the decoder starts at
//     the target's code (no single decoder_start_token_id).
// Plain data in, ids out: no file reading here (tokenizer.ts reads the files).

/** Where a tokenizer puts a language code: before the text (mBART-50) or after its </s> (mBART). */
export type LanguagePlacement = 'before' | 'after';

export interface LanguageCodes {
  /** The codes the vocabulary has, in id order, each with its id. */
  codes: { code: string; id: number }[];
  placement: LanguagePlacement;
  /** tokenizer_config.json's src_lang / tgt_lang: what the tokenizer was saved for. */
  defaultSource?: string;
  defaultTarget?: string;
}

/** fairseq's language codes as mBART's tokenizers list them: two letters, `_`, two capitals or XX. */
const CODE = /^[a-z]{2}_[A-Z]{2}$/;

/**
 * The language codes of a tokenizer.json (its added special tokens) and tokenizer_config.json, or
 * undefined when it has none. The placement is the tokenizer class's (MBart50Tokenizer: before,
 * MBartTokenizer: after), else where the saved post-processor put its code.
 */
export function languageCodesOf(tokenizer: Record<string, unknown>, config: Record<string, unknown>): LanguageCodes | undefined {
  const added = Array.isArray(tokenizer.added_tokens) ? (tokenizer.added_tokens as { id?: unknown; content?: unknown; special?: unknown }[]) : [];
  const codes = added
    .filter((token) => token.special === true && typeof token.content === 'string' && CODE.test(token.content) && typeof token.id === 'number')
    .map((token) => ({ code: token.content as string, id: token.id as number }))
    .sort((a, b) => a.id - b.id);
  if (codes.length === 0) return undefined;
  const placement = placementOfClass(config.tokenizer_class) ?? placementOfTemplate(tokenizer.post_processor, new Set(codes.map(({ code }) => code)));
  if (!placement) return undefined;
  const named = (value: unknown) => (typeof value === 'string' && codes.some(({ code }) => code === value) ? value : undefined);
  const defaultSource = named(config.src_lang);
  const defaultTarget = named(config.tgt_lang);
  return { codes, placement, ...(defaultSource ? { defaultSource } : {}), ...(defaultTarget ? { defaultTarget } : {}) };
}

function placementOfClass(name: unknown): LanguagePlacement | undefined {
  if (typeof name !== 'string') return undefined;
  if (/^MBart50Tokenizer(Fast)?$/.test(name)) return 'before';
  if (/^MBartTokenizer(Fast)?$/.test(name)) return 'after';
  return undefined;
}

/** Where a TemplateProcessing's single template has a language code: first (before) or last (after). */
function placementOfTemplate(processor: unknown, codes: Set<string>): LanguagePlacement | undefined {
  const single = (processor as { single?: unknown } | null)?.single;
  if (!Array.isArray(single) || single.length === 0) return undefined;
  const code = (piece: unknown) => codes.has((piece as { SpecialToken?: { id?: string } }).SpecialToken?.id ?? '');
  if (code(single[0])) return 'before';
  if (code(single[single.length - 1])) return 'after';
  return undefined;
}

/** The id of `code`; a RangeError listing every code the tokenizer has when it has no such one. */
export function languageId(languages: LanguageCodes, code: string, what: 'source' | 'target'): number {
  const found = languages.codes.find((entry) => entry.code === code);
  if (!found) throw new RangeError(`no ${what} language "${code}": this tokenizer's are ${languages.codes.map((entry) => entry.code).join(', ')}`);
  return found.id;
}

/** A text's ids (its tokens alone, no special tokens) with its language code and </s> placed as the tokenizer places them. */
export function withLanguage(languages: LanguageCodes, textIds: readonly number[], code: number, eos: number): number[] {
  return languages.placement === 'before' ? [code, ...textIds, eos] : [...textIds, eos, code];
}

/**
 * The decoder's input for a target text in language `code`: mBART-50's decoder_start_token_id, then
 * the labels `[code] X </s>`; mBART's `[code] X </s>` (its labels `X </s> [code]` shifted right).
 */
export function targetWithLanguage(languages: LanguageCodes, textIds: readonly number[], code: number, eos: number, decoderStart: number): number[] {
  return languages.placement === 'before' ? [decoderStart, code, ...textIds, eos] : [code, ...textIds, eos];
}

/** Generation in language `code`: mBART-50 starts at decoder_start_token_id and forces the code as the first token; mBART starts at the code. */
export function generationStart(languages: LanguageCodes, code: number, decoderStart: number): { start: number; forced?: number } {
  return languages.placement === 'before' ? { start: decoderStart, forced: code } : { start: code };
}
