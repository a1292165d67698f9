// Reading and rewriting the `attention: key=value …` directive text, for Set Options (which edits
// one key) and for the dtype setting (which applies only when the directive names no dtype).
// The core's reader interprets directives; this only finds and replaces their words.

export interface DirectiveWord {
  key: string;
  value?: string;
  start: number; // offsets in the directive's text
  end: number;
}

/** Keys that mean the same option (the first is the one written). */
const ALIASES: string[][] = [
  ['grad', 'gradients'],
  ['kv_heads', 'kvheads', 'kv-heads'],
  ['rope', 'rotary', 'rope_theta'],
  ['temperature', 'temp'],
  ['softcap', 'logit_softcap', 'softcapping'],
  ['window', 'sliding_window'],
  ['sinks', 'sink'],
];

function sameKey(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x === y || ALIASES.some((group) => group.includes(x) && group.includes(y));
}

/** Where the words after `attention:` start and end in `text`: up to a comment closer, or in
 * JSON (`"attention": "heads=2"`) up to the string's closing quote. */
export function argumentSpan(text: string): { start: number; end: number; inJsonString: boolean } | undefined {
  const match = /attention("?)\s*:\s*("?)/i.exec(text);
  if (!match) return undefined;
  const start = match.index + match[0].length;
  const inJsonString = match[1] === '"' && match[2] === '"';
  if (inJsonString) {
    const close = text.indexOf('"', start);
    return { start, end: close === -1 ? text.length : close, inJsonString };
  }
  const lineEnd = text.indexOf('\n', start);
  let end = lineEnd === -1 ? text.length : lineEnd;
  const closer = /(-->|\*\/)\s*$/.exec(text.slice(start, end));
  if (closer) end = start + closer.index;
  return { start, end, inJsonString };
}

/** The words of a directive: `heads=2`, `causal`, `name="two words"`. */
export function directiveWords(text: string): DirectiveWord[] {
  const span = argumentSpan(text);
  if (!span) return [];
  const words: DirectiveWord[] = [];
  let at = span.start;
  while (at < span.end) {
    while (at < span.end && /\s/.test(text[at])) at++;
    if (at >= span.end) break;
    const start = at;
    let quote: string | undefined;
    while (at < span.end && (quote || !/\s/.test(text[at]))) {
      const char = text[at];
      if (quote && char === quote) quote = undefined;
      else if (!quote && (char === '"' || char === "'")) quote = char;
      at++;
    }
    const word = text.slice(start, at);
    const equals = word.indexOf('=');
    words.push(
      equals === -1
        ? { key: word, start, end: at }
        : { key: word.slice(0, equals), value: word.slice(equals + 1), start, end: at },
    );
  }
  return words;
}

export function hasDirectiveKey(text: string, key: string): boolean {
  return directiveWords(text).some((word) => sameKey(word.key, key));
}

/**
 * `text` with option `key` set to `word` (e.g. `heads=2`, `causal`), or removed when `word` is
 * undefined. The first occurrence is replaced in place; later duplicates are dropped.
 */
export function withDirectiveWord(text: string, key: string, wordAsWritten: string | undefined): string {
  const span = argumentSpan(text);
  if (!span) return text;
  // Inside a JSON string a double quote would end it: `name='…'` instead.
  const word = span.inJsonString ? wordAsWritten?.replace(/"/g, "'") : wordAsWritten;
  const matching = directiveWords(text).filter((w) => sameKey(w.key, key));
  let result = text;
  // Right to left, so earlier offsets stay valid.
  for (let i = matching.length - 1; i >= 0; i--) {
    const { start, end } = matching[i];
    if (i === 0 && word !== undefined) {
      result = result.slice(0, start) + word + result.slice(end);
    } else {
      const before = result.slice(0, start).replace(/[ \t]+$/, '');
      result = before + result.slice(end);
    }
  }
  if (matching.length === 0 && word !== undefined) {
    const end = argumentSpan(result)!.end;
    const head = result.slice(0, end).replace(/[ \t]+$/, '');
    const tail = result.slice(end);
    const gap = tail.length > 0 && !/^\s/.test(tail) && !span.inJsonString ? ' ' : ''; // before `-->`, not before `"`
    result = `${head} ${word}${gap}${tail}`;
  }
  return result;
}
