import type { SamplingRequest } from '../model/samplingConfig';
import type { AttentionOptions, CausalAlignment, DType, ModelDirective, RopeLayout, ScoreFunction } from '../types';
import type { ReadIssue } from './issues';
import { readSamplingValue, samplingValueRule } from './samplingValues';
import { closest } from './suggest';

// The `attention: key=value …` line: where it may stand, and what its keys mean.

export function defaultOptions(): AttentionOptions {
  return { heads: 1, score: 'scaled_dot', dtype: 'float64' };
}

export interface Directive {
  /** Offsets of the whole directive (from `attention` to the end of its options). */
  start: number;
  end: number;
  options: AttentionOptions;
  /** Offsets of each option as written (the whole `key=value` word), by its key. */
  optionSpans: Record<string, { start: number; end: number }>;
  /** `model="models/gpt2" text="…"`: the problem is a whole-model run, not matrices. */
  model?: ModelDirective;
  issues: ReadIssue[];
}

// `attention:` at the start of a line, after any comment marker (`#`, `//`, `%`, `;`, `--`,
// `<!--`, `/*`, `*`), Markdown quote or list marker, or a JSON key's quote/brace/comma.
const DIRECTIVE = /[ \t]*(?:(?:#+|\/\/+|%+|;+|--|<!--|\/\*+|\*|>|[-+]|\{|,)[ \t]*)*(["']?)(attention)\1[ \t]*:[ \t]*/iy;

const KEYS = [
  'heads', 'kv_heads', 'scale', 'score', 'sigma', 'causal', 'dtype', 'pe', 'grad', 'residual', 'name',
  'rope', 'rope_layout', 'temperature', 'softcap', 'alibi', 'window', 'prefix', 'sinks', 'decode',
  'model', 'text', 'ids', 'image', 'target', 'target_ids', 'generate', 'chat', 'src_lang', 'tgt_lang', 'sample', 'top_k', 'top_p', 'seed',
] as const;
type Key = (typeof KEYS)[number];

const KEY_ALIASES: Record<string, Key> = {
  heads: 'heads',
  num_heads: 'heads',
  n_heads: 'heads',
  nheads: 'heads',
  kv_heads: 'kv_heads',
  num_kv_heads: 'kv_heads',
  n_kv_heads: 'kv_heads',
  kvheads: 'kv_heads',
  scale: 'scale',
  score: 'score',
  scoring: 'score',
  sigma: 'sigma',
  causal: 'causal',
  is_causal: 'causal',
  dtype: 'dtype',
  pe: 'pe',
  positional: 'pe',
  grad: 'grad',
  grads: 'grad',
  gradients: 'grad',
  backward: 'grad',
  residual: 'residual',
  name: 'name',
  title: 'name',
  rope: 'rope',
  rotary: 'rope',
  rope_theta: 'rope',
  rope_layout: 'rope_layout',
  temperature: 'temperature',
  temp: 'temperature',
  softcap: 'softcap',
  logit_softcap: 'softcap',
  softcapping: 'softcap',
  alibi: 'alibi',
  window: 'window',
  sliding_window: 'window',
  prefix: 'prefix',
  sinks: 'sinks',
  sink: 'sinks',
  decode: 'decode',
  model: 'model',
  text: 'text',
  ids: 'ids',
  input_ids: 'ids',
  image: 'image',
  target: 'target',
  target_text: 'target',
  target_ids: 'target_ids',
  decoder_input_ids: 'target_ids',
  generate: 'generate',
  max_new_tokens: 'generate',
  chat: 'chat',
  src_lang: 'src_lang',
  source_lang: 'src_lang',
  tgt_lang: 'tgt_lang',
  target_lang: 'tgt_lang',
  sample: 'sample',
  do_sample: 'sample',
  top_k: 'top_k',
  topk: 'top_k',
  top_p: 'top_p',
  topp: 'top_p',
  seed: 'seed',
};

/** A generation's sampling values (`temperature` is one on a model directive; on matrices it scales the scores). */
const SAMPLING_KEYS = ['temperature', 'top_k', 'top_p', 'seed'] as const;

/** The three ways to give an encoder–decoder model's target: only one may be written (`generate`
 * also continues a causal model's text). */
const TARGET_KEYS = ['target', 'target_ids', 'generate'] as const;

/** A multilingual translation model's languages (mBART's codes, `en_XX`). */
const LANGUAGE_KEYS = ['src_lang', 'tgt_lang'] as const;

const SCORES: Record<string, ScoreFunction> = {
  scaled_dot: 'scaled_dot',
  scaled: 'scaled_dot',
  scaled_dot_product: 'scaled_dot',
  sdpa: 'scaled_dot',
  dot: 'dot',
  general: 'general',
  luong: 'general',
  bilinear: 'general',
  additive: 'additive',
  bahdanau: 'additive',
  concat: 'additive',
  gaussian: 'gaussian',
  rbf: 'gaussian',
};

const DTYPES: Record<string, DType> = {
  float64: 'float64',
  double: 'float64',
  fp64: 'float64',
  f64: 'float64',
  float32: 'float32',
  float: 'float32',
  single: 'float32',
  fp32: 'float32',
  f32: 'float32',
};

const CAUSAL: Record<string, CausalAlignment | false> = {
  true: 'top-left',
  yes: 'top-left',
  '1': 'top-left',
  'top-left': 'top-left',
  top_left: 'top-left',
  topleft: 'top-left',
  'bottom-right': 'bottom-right',
  bottom_right: 'bottom-right',
  bottomright: 'bottom-right',
  false: false,
  no: false,
  '0': false,
};

const ROPE_LAYOUTS: Record<string, RopeLayout> = {
  half: 'half',
  rotate_half: 'half',
  neox: 'half',
  llama: 'half',
  interleaved: 'interleaved',
  gptj: 'interleaved',
  pairs: 'interleaved',
};

/** RoPE's base when `rope` is written bare (RoFormer, Llama 1–2). */
export const DEFAULT_ROPE_BASE = 10000;

const BOOLEAN: Record<string, boolean> = { true: true, yes: true, on: true, '1': true, false: false, no: false, off: false, '0': false };
const PE: Record<string, boolean> = { sinusoidal: true, sin: true, sine: true, true: true, none: false, false: false, off: false };

/**
 * Every directive in the text, in order. Found by searching for the word (fast even in a 50 MB
 * file), then checking its line with the pattern above.
 */
export function findDirectives(text: string): Directive[] {
  const found: Directive[] = [];
  let from = 0;
  for (let at = text.indexOf('ttention', from); at > 0; at = text.indexOf('ttention', from)) {
    from = at + 8;
    const initial = text.charCodeAt(at - 1);
    if (initial !== 97 && initial !== 65) continue; // a / A
    // Only a short prefix (comment markers) may stand before the word on its line.
    let lineStart = at - 1;
    while (lineStart > 0 && at - lineStart < 48 && text.charCodeAt(lineStart - 1) !== 10) lineStart--;
    if (lineStart > 0 && text.charCodeAt(lineStart - 1) !== 10) continue;
    DIRECTIVE.lastIndex = lineStart;
    const match = DIRECTIVE.exec(text);
    if (!match) continue;
    const bodyStart = lineStart + match[0].length;
    const lineEnd = boundedLineEnd(text, bodyStart);
    const nameStart = lineStart + match[0].lastIndexOf(match[2]) - match[1].length;
    if (lineEnd === -1) {
      // Too long to be read: said at its place when it starts as options do, else prose or data.
      const tooLong = tooLongDirective(text, nameStart, bodyStart);
      if (tooLong) {
        found.push(tooLong);
        from = tooLong.end;
      }
      continue;
    }
    const directive = readDirective(text, nameStart, bodyStart, lineEnd);
    if (directive) {
      found.push(directive);
      from = lineEnd;
    }
  }
  return found;
}

/** Longest directive body read; a longer line is prose or data, not options. A model directive's
 * ids or text run to thousands of characters (1024 GPT-2 ids are about 6 KB): at 1000, a note with
 * 512 ids was silently no problem at all. */
const MAX_DIRECTIVE = 2 ** 16;
/** The most target tokens a directive's `generate` asks for (a model's positions limit it further: the run says so). */
const MAX_GENERATE = 4096;

/**
 * A directive line over MAX_DIRECTIVE characters whose first words read as options (an issue of
 * 45: it used to be skipped without a word, its problem then missing). It starts a problem of its
 * own with its options unread, and an error from `attention` to the end of the limit that says
 * the limit; undefined when its start is prose.
 */
function tooLongDirective(text: string, start: number, bodyStart: number): Directive | undefined {
  const window = readDirective(text, start, bodyStart, bodyStart + MAX_DIRECTIVE);
  if (!window) return undefined;
  const newline = text.indexOf('\n', bodyStart);
  const lineEnd = newline === -1 ? text.length : newline;
  const length = lineEnd - bodyStart;
  return {
    start,
    end: lineEnd,
    options: defaultOptions(),
    optionSpans: {},
    issues: [
      {
        start,
        end: bodyStart + MAX_DIRECTIVE,
        severity: 'error',
        code: 'directive-too-long',
        message: `This \`attention:\` line's options are ${length.toLocaleString('en-US')} characters long; a directive is read up to ${MAX_DIRECTIVE.toLocaleString('en-US')} (64 KiB), so none of them was read. Shorten it: for a model, fewer ids or a shorter text.`,
      },
    ],
  };
}

/** End of the line starting a directive body, or -1 when the line is longer than a directive. */
function boundedLineEnd(text: string, from: number): number {
  const limit = Math.min(text.length, from + MAX_DIRECTIVE);
  for (let at = from; at < limit; at++) if (text.charCodeAt(at) === 10) return at;
  return limit === text.length ? limit : -1;
}

interface Word {
  text: string;
  start: number;
  end: number;
}

/** Splits `heads=2, name="My example" causal` into words, keeping quoted values whole. */
function splitWords(text: string, start: number, end: number): Word[] {
  const words: Word[] = [];
  let at = start;
  while (at < end) {
    const code = text.charCodeAt(at);
    if (code === 32 || code === 9 || code === 13 || code === 44 || code === 59) {
      at++;
      continue;
    }
    const wordStart = at;
    while (at < end) {
      const c = text.charCodeAt(at);
      if (c === 32 || c === 9 || c === 13 || c === 44 || c === 59) break;
      if (c === 34 || c === 39) {
        const close = text.indexOf(text[at], at + 1);
        at = close === -1 || close >= end ? end : close + 1;
      } else at++;
    }
    words.push({ text: text.slice(wordStart, at), start: wordStart, end: at });
  }
  return words;
}

/** The end of the directive's options: before a closing comment, or a JSON string's closing quote. */
function bodyEnd(text: string, start: number, lineEnd: number, quote: string | undefined): number {
  let end = lineEnd;
  const line = text.slice(start, lineEnd);
  for (const closer of ['-->', '*/']) {
    const at = line.indexOf(closer);
    if (at !== -1) end = Math.min(end, start + at);
  }
  while (end > start && /\s/.test(text[end - 1])) end--;
  if (quote !== undefined) {
    // The options end at the string's closing quote (other JSON keys may follow on the line).
    const close = line.indexOf(quote);
    if (close !== -1) end = Math.min(end, start + close);
  }
  return end;
}

function readDirective(text: string, start: number, bodyStart: number, lineEnd: number): Directive | undefined {
  // JSON: "attention": "heads=2 causal"
  const quote = text[bodyStart] === '"' || text[bodyStart] === "'" ? text[bodyStart] : undefined;
  const from = quote === undefined ? bodyStart : bodyStart + 1;
  const end = bodyEnd(text, from, lineEnd, quote);
  const words = splitWords(text, from, end);
  // Prose such as "Attention: this matters" is not a directive: the first word must be an option.
  if (words.length > 0) {
    const first = words[0].text;
    const key = (first.includes('=') ? first.slice(0, first.indexOf('=')) : first).toLowerCase();
    if (!first.includes('=') && !(key in KEY_ALIASES)) return undefined;
  }
  const options = defaultOptions();
  const issues: ReadIssue[] = [];
  const optionSpans: Record<string, { start: number; end: number }> = {};
  const model: Partial<ModelDirective> = {};
  const sampling: SamplingRequest = {};
  for (const word of words) {
    const key = applyWord(word, options, model, sampling, issues);
    if (key) optionSpans[key] = { start: word.start, end: word.end };
  }
  const directive: Directive = { start, end: Math.max(end, bodyStart), options, optionSpans, issues };
  if (model.path !== undefined) {
    issues.push(...samplingIssues(optionSpans, model, options, sampling));
    directive.model = { ...model, path: model.path };
  } else if (optionSpans.text || optionSpans.ids || optionSpans.image || optionSpans.chat || optionSpans.sample || [...TARGET_KEYS, ...LANGUAGE_KEYS].some((key) => optionSpans[key])) {
    const span = optionSpans.text ?? optionSpans.ids ?? optionSpans.image ?? [...TARGET_KEYS, ...LANGUAGE_KEYS].map((key) => optionSpans[key]).find(Boolean) ?? optionSpans.chat ?? optionSpans.sample;
    issues.push({ ...span, severity: 'error', code: 'model-missing', message: '`text`, `ids`, `target`, `target_ids`, `generate`, `chat`, `sample`, `src_lang`, `tgt_lang` and `image` are the input of a model: add `model="path/to/model-folder"` (a folder with config.json, relative to this file).' });
  } else {
    // top_k, top_p and seed are a generation's alone (temperature also scales a matrix problem's scores).
    for (const key of ['top_k', 'top_p', 'seed'] as const) {
      if (optionSpans[key]) issues.push({ ...optionSpans[key], severity: 'error', code: 'model-missing', message: `\`${key}\` is a sampling value of a model's generation: add \`model="path/to/model-folder"\`, \`generate=N\` and \`sample\`.` });
    }
  }
  if (model.image !== undefined && (model.generate !== undefined || model.chat)) {
    issues.push({ ...(optionSpans.generate ?? optionSpans.chat), severity: 'error', code: 'bad-option-value', message: 'A picture is classified, not continued: `generate` and `chat` need a `text` or `ids`.' });
  }
  if (model.chat && model.text === undefined && model.path !== undefined) {
    issues.push({ ...optionSpans.chat, severity: 'error', code: 'bad-option-value', message: '`chat` sends a `text` through the model\'s chat template: add `text="…"`.' });
  }
  issues.push(...targetIssues(optionSpans, model), ...languageIssues(optionSpans, model));
  return directive;
}

/** A language where it cannot apply: a source language beside source ids (read as given), a
 * target language beside target ids (the decoder's input as given), either beside a picture. */
function languageIssues(spans: Record<string, { start: number; end: number }>, model: Partial<ModelDirective>): ReadIssue[] {
  if (model.path === undefined) return [];
  const issue = (key: string, message: string): ReadIssue => ({ ...spans[key], severity: 'error', code: 'bad-option-value', message });
  const issues: ReadIssue[] = [];
  for (const key of LANGUAGE_KEYS) {
    if (!spans[key]) continue;
    if (model.image !== undefined) issues.push(issue(key, `\`${key}\` is a translation model's language: a picture has none.`));
    else if (key === 'src_lang' && model.text === undefined) issues.push(issue(key, '`src_lang` places its code around a source text: give `text="…"` (`ids` are read as given).'));
    else if (key === 'tgt_lang' && model.target && 'ids' in model.target) issues.push(issue(key, '`tgt_lang` places its code in a `target` text or starts `generate=N`: `target_ids` are the decoder\'s input as given.'));
  }
  return issues;
}

/**
 * A model directive's sampling: `sample` takes the values written beside it (`temperature` among
 * them, then not an attention option); a value without `sample`, or `sample` without `generate`,
 * is an error at its word.
 */
function samplingIssues(spans: Record<string, { start: number; end: number }>, model: Partial<ModelDirective>, options: AttentionOptions, sampling: SamplingRequest): ReadIssue[] {
  if (options.temperature !== undefined) {
    sampling.temperature = options.temperature;
    delete options.temperature;
  }
  const issue = (key: string, message: string): ReadIssue => ({ ...spans[key], severity: 'error', code: 'bad-option-value', message });
  if (!spans.sample || !model.sample) {
    return SAMPLING_KEYS.filter((key) => spans[key]).map((key) => issue(key, `\`${key}\` is a sampling value: add \`sample\` to draw the tokens (without it the most probable token is taken).`));
  }
  model.sample = sampling;
  return model.generate === undefined ? [issue('sample', '`sample` draws the tokens `generate=N` writes: add `generate=N`.')] : [];
}

/** An encoder–decoder target given twice, or without a source to translate: at the target's place. */
function targetIssues(spans: Record<string, { start: number; end: number }>, model: Partial<ModelDirective>): ReadIssue[] {
  const given = TARGET_KEYS.filter((key) => spans[key]);
  if (given.length === 0 || model.path === undefined) return [];
  const issue = (key: string, message: string): ReadIssue => ({ ...spans[key], severity: 'error', code: 'bad-option-value', message });
  if (given.length > 1) {
    return given.slice(1).map((key) => issue(key, `\`${key}\` and \`${given[0]}\` both give the target: keep one (\`target="…"\` its text, \`target_ids="…"\` the decoder's input ids, or \`generate=N\`).`));
  }
  // An explicit target (text or ids) is an encoder–decoder model's alone: it needs a source, not a picture.
  if (given[0] === 'generate') return [];
  if (model.image !== undefined) return [issue(given[0], `\`${given[0]}\` is the target of an encoder–decoder model, which reads text, not a picture: give its source as \`text="…"\` or \`ids="…"\`.`)];
  if (model.text === undefined && model.ids === undefined) return [issue(given[0], `\`${given[0]}\` is the target of an encoder–decoder model: give its source too, \`text="…"\` or \`ids="…"\`.`)];
  return [];
}

/** Applies one `key=value` word; returns its key when the key is known. */
function applyWord(word: Word, options: AttentionOptions, model: Partial<ModelDirective>, sampling: SamplingRequest, issues: ReadIssue[]): Key | undefined {
  const equals = word.text.indexOf('=');
  const rawKey = equals === -1 ? word.text : word.text.slice(0, equals);
  const rawValue = equals === -1 ? undefined : unquote(word.text.slice(equals + 1));
  const key = KEY_ALIASES[rawKey.toLowerCase()];
  const keyEnd = word.start + rawKey.length;
  if (!key) {
    const guess = closest(rawKey, Object.keys(KEY_ALIASES));
    issues.push({
      start: word.start,
      end: keyEnd,
      severity: 'error',
      code: 'unknown-option',
      message: `Unknown option \`${rawKey}\`. Options: ${KEYS.join(', ')}.`,
      ...(guess ? { suggestion: `did you mean \`${guess}\`?` } : {}),
    });
    return undefined;
  }
  const bad = (message: string, suggestion?: string): void => {
    issues.push({
      start: equals === -1 ? word.start : keyEnd + 1,
      end: word.end,
      severity: 'error',
      code: 'bad-option-value',
      message,
      ...(suggestion ? { suggestion } : {}),
    });
  };
  const choose = <T>(table: Record<string, T>, what: string): T | undefined => {
    const value = (rawValue ?? '').toLowerCase();
    if (value in table) return table[value];
    const guess = closest(value, Object.keys(table));
    bad(`\`${rawValue ?? ''}\` is not a valid ${what}: use ${Object.keys(table).join(', ')}.`, guess ? `did you mean \`${guess}\`?` : undefined);
    return undefined;
  };
  const flag = (): boolean | undefined => (rawValue === undefined ? true : choose(BOOLEAN, `value for \`${rawKey}\``));
  switch (key) {
    case 'heads':
    case 'kv_heads': {
      const count = positiveInteger(rawValue);
      if (count === undefined) {
        bad(`\`${rawKey}\` must be a whole number of heads from 1 to 1024, e.g. \`${rawKey}=2\`.`);
      } else if (key === 'heads') options.heads = count;
      else options.kvHeads = count;
      return key;
    }
    case 'scale': {
      if (rawValue !== undefined && /^(none|default|auto)$/i.test(rawValue)) {
        delete options.scale;
        return key;
      }
      const scale = scaleValue(rawValue);
      if (scale === undefined) bad('`scale` must be a finite number such as `scale=0.5`, `scale=1/sqrt(2)` or `scale=none` (1/√d_k).');
      else options.scale = scale;
      return key;
    }
    case 'sigma': {
      const sigma = scaleValue(rawValue);
      if (sigma === undefined || !(sigma > 0)) bad('`sigma` (the gaussian score width) must be a positive number, e.g. `sigma=1`.');
      else options.sigma = sigma;
      return key;
    }
    case 'score': {
      const score = choose(SCORES, 'score function');
      if (score) options.score = score;
      return key;
    }
    case 'dtype': {
      const dtype = choose(DTYPES, 'dtype');
      if (dtype) options.dtype = dtype;
      return key;
    }
    case 'causal': {
      const causal = rawValue === undefined ? 'top-left' : choose(CAUSAL, 'causal alignment');
      if (causal) options.causal = causal;
      else if (causal === false) delete options.causal;
      return key;
    }
    case 'pe': {
      const pe = choose(PE, 'positional encoding');
      if (pe !== undefined) options.sinusoidalPE = pe;
      return key;
    }
    case 'grad': {
      const on = flag();
      if (on !== undefined) options.gradients = on;
      return key;
    }
    case 'residual': {
      const on = flag();
      if (on !== undefined) options.residual = on;
      return key;
    }
    case 'name': {
      if (!rawValue) bad('`name` needs a value, e.g. `name="My example"`.');
      else options.name = rawValue;
      return key;
    }
    case 'rope': {
      // A number is a base (`rope=0` is a bad base, not "off"); words switch it.
      if (rawValue !== undefined && /^(false|no|off|none)$/i.test(rawValue)) delete options.rope;
      else {
        const base = rawValue === undefined || /^(true|yes|on)$/i.test(rawValue) ? DEFAULT_ROPE_BASE : scaleValue(rawValue);
        if (base === undefined || !(base > 1)) bad('`rope` takes a base above 1 (default 10000), e.g. `rope` or `rope=500000`.');
        else options.rope = base;
      }
      return key;
    }
    case 'rope_layout': {
      const layout = choose(ROPE_LAYOUTS, 'RoPE pair layout');
      if (layout) options.ropeLayout = layout;
      return key;
    }
    case 'temperature':
    case 'softcap': {
      const value = scaleValue(rawValue);
      if (value === undefined || !(value > 0)) bad(`\`${rawKey}\` must be a positive number, e.g. \`${rawKey}=${key === 'softcap' ? 50 : 0.7}\`.`);
      else if (key === 'softcap') options.softcap = value;
      else options.temperature = value;
      return key;
    }
    case 'window':
    case 'prefix':
    case 'sinks': {
      const count = positiveCount(rawValue);
      if (count === undefined) bad(`\`${rawKey}\` must be a whole number of tokens from 1, e.g. \`${rawKey}=${key === 'window' ? 4 : 2}\`.`);
      else options[key] = count;
      return key;
    }
    case 'alibi':
    case 'decode': {
      const on = flag();
      if (on === true) options[key] = true;
      else if (on === false) delete options[key];
      return key;
    }
    case 'model': {
      if (!rawValue) bad('`model` needs a folder, e.g. `model="models/gpt2"` (relative to this file).');
      else model.path = rawValue;
      return key;
    }
    case 'text': {
      if (rawValue === undefined) bad('`text` needs a value in quotes, e.g. `text="The cat sat on the mat"`.');
      else model.text = rawValue;
      return key;
    }
    case 'image': {
      if (!rawValue) bad('`image` needs a picture file, e.g. `image="cat.png"` (relative to this file).');
      else model.image = rawValue;
      return key;
    }
    case 'chat': {
      if (flag()) model.chat = true;
      return key;
    }
    case 'sample': {
      if (flag()) model.sample = {};
      return key;
    }
    case 'top_k':
    case 'top_p':
    case 'seed': {
      const value = rawValue === undefined ? undefined : readSamplingValue(key, rawValue);
      const { must, example } = samplingValueRule(key);
      if (value === undefined) bad(`\`${rawKey}\` must be ${must}, e.g. \`${rawKey}=${example}\`.`);
      else sampling[key === 'top_k' ? 'topK' : key === 'top_p' ? 'topP' : 'seed'] = value;
      return key;
    }
    case 'ids': {
      const ids = tokenIds(rawValue);
      if (!ids) bad('`ids` takes token ids separated by commas or spaces, in quotes, e.g. `ids="464, 3797, 3332"`.');
      else model.ids = ids;
      return key;
    }
    case 'target': {
      if (!rawValue) bad('`target` needs the target text in quotes, e.g. `target="Das Haus ist klein."` (or `generate=20` to let the model write it).');
      else model.target ??= { text: rawValue };
      return key;
    }
    case 'target_ids': {
      const ids = tokenIds(rawValue);
      if (!ids) bad(`\`${rawKey}\` takes the decoder's input ids (decoder_start_token_id first) separated by commas or spaces, in quotes, e.g. \`${rawKey}="0, 3822, 1056"\`.`);
      else model.target ??= { ids };
      return key;
    }
    case 'src_lang':
    case 'tgt_lang': {
      if (!rawValue || !/^[A-Za-z][\w-]*$/.test(rawValue)) bad(`\`${rawKey}\` is a language code of the model's tokenizer, e.g. \`${rawKey}="${key === 'src_lang' ? 'en_XX' : 'de_DE'}"\`.`);
      else model.languages = { ...model.languages, [key === 'src_lang' ? 'source' : 'target']: rawValue };
      return key;
    }
    case 'generate': {
      const count = positiveCount(rawValue);
      if (count === undefined || count > MAX_GENERATE) bad(`\`${rawKey}\` is how many tokens to generate (a text's continuation, or an encoder–decoder model's target), a whole number from 1 to ${MAX_GENERATE}, e.g. \`${rawKey}=20\`.`);
      else model.generate = count;
      return key;
    }
  }
}

/** `"464, 3797 3332"` → [464, 3797, 3332]; undefined when any part is not a whole number. */
function tokenIds(value: string | undefined): number[] | undefined {
  const parts = value?.trim().split(/[\s,]+/).filter((part) => part !== '');
  if (!parts || parts.length === 0 || !parts.every((part) => /^\d{1,9}$/.test(part))) return undefined;
  return parts.map(Number);
}

function unquote(value: string): string {
  const first = value[0];
  if ((first === '"' || first === "'") && value.length >= 2 && value.endsWith(first)) return value.slice(1, -1);
  return value;
}

function positiveInteger(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,4}$/.test(value)) return undefined;
  const count = Number(value);
  return count >= 1 && count <= 1024 ? count : undefined;
}

/** A whole number of tokens from 1 (window, prefix, sinks). */
function positiveCount(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,9}$/.test(value)) return undefined;
  const count = Number(value);
  return count >= 1 ? count : undefined;
}

/** A number, `a/b`, `1/sqrt(n)` or `sqrt(n)`. */
function scaleValue(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = String.raw`[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?`;
  const term = `(?:sqrt\\((${number})\\)|(${number}))`;
  const match = new RegExp(`^${term}(?:/${term})?$`, 'i').exec(value.replace(/\s+/g, ''));
  if (!match) return undefined;
  const read = (root?: string, plain?: string): number | undefined =>
    root !== undefined ? Math.sqrt(Number(root)) : plain !== undefined ? Number(plain) : undefined;
  const numerator = read(match[1], match[2]);
  const denominator = read(match[3], match[4]);
  const result = denominator === undefined ? numerator : (numerator ?? NaN) / denominator;
  return result !== undefined && Number.isFinite(result) ? result : undefined;
}
