// One entry of a matrix: every number spelling people write in notes, code, LaTeX and JSON.
// A hand-written scanner over char codes (a 1024×1024 matrix is a million calls): plain decimals
// of up to 15 significant digits and a power of ten ≤ 22 are computed exactly in one correctly
// rounded operation (Clinger's fast path); anything longer goes through `Number`, so every
// value is the double JavaScript itself (and Python's float) would read.

export interface ScannedNumber {
  value: number;
  /** Offset just past the entry. */
  end: number;
  /** Written as true/false/True/False. */
  boolean: boolean;
  /** A finite decimal too large for float64 (`1e400`), read as ±Infinity. */
  overflow: boolean;
}

const POW10 = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/** Lower-cased words that spell a constant, with the value they spell. */
const WORDS = new Map<string, number>([
  ['inf', Infinity],
  ['infinity', Infinity],
  ['\\infty', Infinity],
  ['\\inf', Infinity],
  ['np.inf', Infinity],
  ['numpy.inf', Infinity],
  ['math.inf', Infinity],
  ['torch.inf', Infinity],
  ['jnp.inf', Infinity],
  ['nan', NaN],
  ['np.nan', NaN],
  ['numpy.nan', NaN],
  ['math.nan', NaN],
  ['torch.nan', NaN],
  ['jnp.nan', NaN],
]);

const BOOLEANS = new Map<string, number>([
  ['true', 1],
  ['false', 0],
]);

const CH_PLUS = 43;
const CH_MINUS = 45;
const CH_UNICODE_MINUS = 0x2212;
const CH_INFINITY = 0x221e;
const CH_DOT = 46;
const CH_UNDERSCORE = 95;
const CH_BACKSLASH = 92;
const CH_QUOTE = 34;
const CH_APOSTROPHE = 39;

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

function isWordChar(code: number): boolean {
  return isLetter(code) || isDigit(code) || code === CH_UNDERSCORE || code === CH_DOT;
}

/**
 * Reads one entry starting exactly at `start`. Returns false (leaving `out` alone) when no
 * entry starts there. The caller decides whether what follows `out.end` is a separator.
 */
export function scanNumber(text: string, start: number, out: ScannedNumber): boolean {
  let at = start;
  let code = text.charCodeAt(at);
  let negative = false;
  let signed = false;
  if (code === CH_MINUS || code === CH_PLUS || code === CH_UNICODE_MINUS) {
    negative = code !== CH_PLUS;
    signed = true;
    code = text.charCodeAt(++at);
  }
  if (isDigit(code) || (code === CH_DOT && isDigit(text.charCodeAt(at + 1)))) {
    return scanDecimal(text, at, negative, out);
  }
  if (code === CH_INFINITY) {
    return finish(out, negative ? -Infinity : Infinity, at + 1, false);
  }
  if (code === CH_QUOTE || code === CH_APOSTROPHE) {
    // JSON exports write non-finite numbers as "Infinity", "-Infinity", "NaN".
    if (signed) return false;
    const close = text.indexOf(String.fromCharCode(code), at + 1);
    if (close === -1 || close - at > 12) return false;
    const inner: ScannedNumber = { value: 0, end: 0, boolean: false, overflow: false };
    if (!scanNumber(text, at + 1, inner) || inner.end !== close || inner.boolean) return false;
    return finish(out, inner.value, close + 1, false);
  }
  if (!isLetter(code) && code !== CH_BACKSLASH) return false;
  let end = at + 1;
  while (end < text.length && isWordChar(text.charCodeAt(end))) end++;
  // A trailing dot belongs to the sentence, not the word (`… -inf.`).
  while (text.charCodeAt(end - 1) === CH_DOT) end--;
  const word = text.slice(at, end).toLowerCase();
  const constant = WORDS.get(word);
  if (constant !== undefined) return finish(out, negative ? -constant : constant, end, false);
  if (!signed) {
    const truth = BOOLEANS.get(word);
    if (truth !== undefined) {
      out.boolean = true;
      out.value = truth;
      out.end = end;
      out.overflow = false;
      return true;
    }
  }
  if (word === 'float' && text.charCodeAt(end) === 40 /* ( */) {
    // Python's float('-inf'), float("nan"), float('1e3').
    const inner: ScannedNumber = { value: 0, end: 0, boolean: false, overflow: false };
    if (!scanNumber(text, end + 1, inner) || inner.boolean || text.charCodeAt(inner.end) !== 41) return false;
    const quoted = text.charCodeAt(end + 1);
    if (quoted !== CH_QUOTE && quoted !== CH_APOSTROPHE) return false;
    return finish(out, negative ? -inner.value : inner.value, inner.end + 1, inner.overflow);
  }
  return false;
}

function finish(out: ScannedNumber, value: number, end: number, overflow: boolean): true {
  out.value = value;
  out.end = end;
  out.boolean = false;
  out.overflow = overflow;
  return true;
}

/** Largest integer a double holds exactly; below it the digits accumulate without rounding. */
const EXACT_LIMIT = 2 ** 53;

/** Reads a decimal whose first digit (or `.`) is at `start`; the sign was read by the caller. */
export function scanDecimal(text: string, start: number, negative: boolean, out: ScannedNumber): boolean {
  let at = start;
  let code = text.charCodeAt(at);
  let mantissa = 0;
  let fractionDigits = 0;
  while (code >= 48 && code <= 57) {
    mantissa = mantissa * 10 + (code - 48);
    code = text.charCodeAt(++at);
  }
  if (code === CH_DOT) {
    code = text.charCodeAt(++at);
    while (code >= 48 && code <= 57) {
      mantissa = mantissa * 10 + (code - 48);
      fractionDigits++;
      code = text.charCodeAt(++at);
    }
  }
  if (code === CH_UNDERSCORE) return scanGroupedDecimal(text, start, negative, out);
  let exponent = 0;
  if (code === 101 || code === 69) {
    let probe = at + 1;
    let expNegative = false;
    let expCode = text.charCodeAt(probe);
    if (expCode === CH_PLUS || expCode === CH_MINUS) {
      expNegative = expCode === CH_MINUS;
      expCode = text.charCodeAt(++probe);
    }
    if (isDigit(expCode)) {
      while (isDigit(expCode)) {
        if (exponent < 100000) exponent = exponent * 10 + (expCode - 48);
        expCode = text.charCodeAt(++probe);
      }
      if (expNegative) exponent = -exponent;
      at = probe;
    }
  }
  const power = exponent - fractionDigits;
  let value: number;
  let overflow = false;
  if (mantissa < EXACT_LIMIT && power <= 0 && power >= -22) value = mantissa / POW10[-power];
  else if (mantissa < EXACT_LIMIT && power > 0 && power <= 22) value = mantissa * POW10[power];
  else if (mantissa === 0) value = 0;
  else {
    value = Number(text.slice(start, at));
    overflow = !Number.isFinite(value);
  }
  out.value = negative ? -value : value;
  out.end = at;
  out.boolean = false;
  out.overflow = overflow;
  return true;
}

/** Python's digit groups (`1_000.5`): rare, so read through `Number` without the underscores. */
function scanGroupedDecimal(text: string, start: number, negative: boolean, out: ScannedNumber): boolean {
  let at = start;
  const digitsFrom = (from: number): number => {
    let end = from;
    while (isDigit(text.charCodeAt(end)) || (text.charCodeAt(end) === CH_UNDERSCORE && isDigit(text.charCodeAt(end - 1)) && isDigit(text.charCodeAt(end + 1)))) end++;
    return end;
  };
  at = digitsFrom(at);
  if (text.charCodeAt(at) === CH_DOT) at = digitsFrom(at + 1);
  const exponent = /[eE][-+]?\d+/y;
  exponent.lastIndex = at;
  if (exponent.test(text)) at = exponent.lastIndex;
  const value = Number(text.slice(start, at).replace(/_/g, ''));
  out.value = negative ? -value : value;
  out.end = at;
  out.boolean = false;
  out.overflow = !Number.isFinite(value);
  return true;
}
