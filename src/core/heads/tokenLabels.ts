// Token labels from ids with a Hugging Face tokenizer.json — the one place that knows the
// tokenizer library, so a tokenizer module of the model work can replace it.
import { Tokenizer } from '@huggingface/tokenizers';

/** A function naming ids, from tokenizer.json's text; a message when it cannot be read. */
export function idLabeller(tokenizerJson: string): ((ids: number[]) => string[]) | string {
  try {
    const tokenizer = new Tokenizer(JSON.parse(tokenizerJson) as object, {});
    return (ids) => ids.map((id) => tokenizer.id_to_token(id) ?? `[${id}]`);
  } catch (error) {
    return `tokenizer.json could not be read: ${error instanceof Error ? error.message : String(error)}`;
  }
}
