// A chat model's prompt: the user's message rendered through the folder's own chat template, as
// transformers' `apply_chat_template([{role: 'user', content}], add_generation_prompt=True,
// tokenize=False)` renders it. The template is Jinja; Hugging Face's JavaScript Jinja renders it
// with the settings transformers gives jinja2 (trim_blocks, lstrip_blocks, raise_exception,
// strftime_now, a tojson that does not escape HTML). Its scope holds what transformers passes:
// `messages`, `tools` and `documents` (none), `add_generation_prompt`, and the tokenizer's named
// special tokens as text (`bos_token`, `eos_token`, …, `additional_special_tokens`).
import { Template } from '@huggingface/jinja';
import { ModelTokenizer } from './tokenizer';
import { ModelFileError, type ModelFiles, readText } from './weights';

/** transformers' SPECIAL_TOKENS_ATTRIBUTES: the special tokens a template sees by name. */
const NAMED_SPECIAL_TOKENS = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'] as const;

/** The text a chat model is given for one user message, ending where the assistant's answer begins. */
export async function applyChatTemplate(files: ModelFiles, userMessage: string): Promise<string> {
  const config = await tokenizerConfig(files);
  const source = (await readText(files, 'chat_template.jinja')) ?? chosenTemplate(files, config.chat_template);
  let template: Template;
  try {
    template = new Template(source);
  } catch (error) {
    throw new ModelFileError(`${files.folder}: the chat template cannot be read: ${messageOf(error)}`);
  }
  try {
    return template.render({
      messages: [{ role: 'user', content: userMessage }],
      tools: null,
      documents: null,
      add_generation_prompt: true,
      ...specialTokens(config),
    });
  } catch (error) {
    throw new ModelFileError(`${files.folder}: the chat template fails: ${messageOf(error)}`);
  }
}

/**
 * The token ids of a chat prompt. The template writes the special tokens (BOS included) itself, so
 * the tokenizer adds none, as transformers' `apply_chat_template(..., tokenize=True)` does.
 */
export async function chatPromptIds(files: ModelFiles, userMessage: string): Promise<number[]> {
  const text = await applyChatTemplate(files, userMessage);
  const tokenizer = await ModelTokenizer.open(files);
  if (!tokenizer) throw new ModelFileError(`${files.folder} has no tokenizer.json to encode the chat prompt with`);
  return tokenizer.encode(text, { addSpecialTokens: false }).ids;
}

async function tokenizerConfig(files: ModelFiles): Promise<Record<string, unknown>> {
  const text = await readText(files, 'tokenizer_config.json');
  if (text === undefined) return {};
  try {
    const json = JSON.parse(text) as unknown;
    return typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
  } catch (error) {
    throw new ModelFileError(`${files.folder}: tokenizer_config.json is not JSON (${messageOf(error)})`);
  }
}

/**
 * The template to render: `chat_template` is one string, or a list of named templates of which
 * transformers takes the one named "default" when it is given no name (and no tools).
 */
function chosenTemplate(files: ModelFiles, chatTemplate: unknown): string {
  if (typeof chatTemplate === 'string') return chatTemplate;
  if (Array.isArray(chatTemplate)) {
    const named = chatTemplate.filter((entry): entry is { name: string; template: string } => typeof entry?.name === 'string' && typeof entry?.template === 'string');
    const chosen = named.find((entry) => entry.name === 'default');
    if (chosen) return chosen.template;
    throw new ModelFileError(`${files.folder}: tokenizer_config.json has several chat templates (${named.map((entry) => entry.name).join(', ')}) and none named "default"`);
  }
  throw new ModelFileError(`${files.folder} has no chat template (no chat_template in tokenizer_config.json, no chat_template.jinja): it is not a chat model; give the text as it is`);
}

/** The named special tokens as text: a token is written as a string or as an AddedToken object. */
function specialTokens(config: Record<string, unknown>): Record<string, string | string[]> {
  const tokens: Record<string, string | string[]> = {};
  for (const name of NAMED_SPECIAL_TOKENS) {
    const text = tokenText(config[name]);
    if (text !== undefined) tokens[name] = text;
  }
  const additional = config.additional_special_tokens;
  if (Array.isArray(additional)) tokens.additional_special_tokens = additional.map(tokenText).filter((text): text is string => text !== undefined);
  return tokens;
}

function tokenText(token: unknown): string | undefined {
  if (typeof token === 'string') return token;
  if (typeof token === 'object' && token !== null && typeof (token as { content?: unknown }).content === 'string') return (token as { content: string }).content;
  return undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
