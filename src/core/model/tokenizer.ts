// The model's own tokenizer, by Hugging Face's JavaScript tokenizers reading tokenizer.json (and
// tokenizer_config.json): the special tokens (BOS, CLS/SEP) are added as its post-processor says.
// Labels are made readable: a byte-level token is decoded to its text, a SentencePiece ▁ is a
// space, and then a space shows as ␣, a newline as ↵ and a tab as ⇥; special tokens stay as written.
import { Tokenizer } from '@huggingface/tokenizers';
import { type LanguageCodes, languageCodesOf } from './languages';
import { ModelFileError, type ModelFiles, readText } from './weights';

export interface Encoded {
  ids: number[];
  tokens: string[];
}

/**
 * The tokenizers built last, by the text of their files. A model is often run again (another text,
 * the induction probe, a comparison, an edited note), and building GPT-2's tokenizer from its
 * 1.3 MB tokenizer.json costs 0.35–0.5 s of CPU, reading the file a few milliseconds. Keyed by the
 * text itself, an edited tokenizer.json is never answered from the cache.
 */
const built: { files: string; tokenizer: ModelTokenizer }[] = [];
const KEPT_TOKENIZERS = 2;

export class ModelTokenizer {
  private constructor(
    private readonly tokenizer: Tokenizer,
    private readonly byteLevel: boolean,
    private readonly special: Set<number>,
    /** A multilingual translation model's language codes (mBART, mBART-50), if the tokenizer has them. */
    readonly languages: LanguageCodes | undefined,
  ) {}

  /** The folder's tokenizer, or undefined when it has no tokenizer.json. */
  static async open(files: ModelFiles): Promise<ModelTokenizer | undefined> {
    const text = await readText(files, 'tokenizer.json');
    if (text === undefined) return undefined;
    const config = await readText(files, 'tokenizer_config.json');
    const key = `${text}\u0000${config ?? ''}`;
    const cached = built.find((entry) => entry.files === key);
    if (cached) return cached.tokenizer;
    const tokenizer = ModelTokenizer.build(text, config);
    built.unshift({ files: key, tokenizer });
    built.length = Math.min(built.length, KEPT_TOKENIZERS);
    return tokenizer;
  }

  private static build(text: string, config: string | undefined): ModelTokenizer {
    let json: Record<string, unknown>;
    let configJson: Record<string, unknown>;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
      configJson = config === undefined ? {} : (JSON.parse(config) as Record<string, unknown>);
    } catch (error) {
      throw new ModelFileError(`the tokenizer files are not JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    let tokenizer: Tokenizer;
    try {
      tokenizer = new Tokenizer(json, configJson);
    } catch (error) {
      throw new ModelFileError(`tokenizer.json cannot be read (${error instanceof Error ? error.message : String(error)}); give token ids with --ids instead`);
    }
    const special = new Set([...tokenizer.get_added_tokens_decoder().values()].filter((t) => t.special).map((t) => t.id));
    return new ModelTokenizer(tokenizer, mentionsByteLevel(json.decoder) || mentionsByteLevel(json.pre_tokenizer), special, languageCodesOf(json, configJson));
  }

  /**
   * The text's ids, with the special tokens the post-processor adds (BOS, CLS/SEP) unless told
   * otherwise: a rendered chat template has written its own.
   */
  encode(text: string, { addSpecialTokens = true }: { addSpecialTokens?: boolean } = {}): Encoded {
    const { ids } = this.tokenizer.encode(text, { add_special_tokens: addSpecialTokens });
    return { ids, tokens: ids.map((id) => this.label(id)) };
  }

  /** A token as the views show it. */
  label(id: number): string {
    const token = this.tokenizer.id_to_token(id);
    if (token === undefined) return `#${id}`;
    if (this.special.has(id)) return token;
    const text = this.byteLevel ? this.tokenizer.decode([id], { skip_special_tokens: false, clean_up_tokenization_spaces: false }) : token.replace(/▁/g, ' ');
    return visible(text);
  }

  /** Ids decoded to their text as written, special tokens included (a generated answer). */
  text(ids: readonly number[]): string {
    return this.tokenizer.decode([...ids], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  /** The id of a token written as text (`[MASK]`), if the vocabulary has it. */
  idOf(token: string): number | undefined {
    return this.tokenizer.token_to_id(token);
  }
}

/** Spaces, newlines and tabs made visible. */
export function visible(text: string): string {
  return text.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥');
}

/** Whether a decoder or pre-tokenizer (possibly a Sequence) is ByteLevel. */
function mentionsByteLevel(part: unknown): boolean {
  if (typeof part !== 'object' || part === null) return false;
  const { type, decoders, pretokenizers } = part as { type?: unknown; decoders?: unknown[]; pretokenizers?: unknown[] };
  if (type === 'ByteLevel') return true;
  return [...(decoders ?? []), ...(pretokenizers ?? [])].some(mentionsByteLevel);
}
