import { printedSummaryMessage, type ReadIssue } from './issues';
import { MatrixBuilder } from './matrixBuilder';
import { scanDecimal, scanNumber, type ScannedNumber } from './numbers';

// Matrix literals: bracket lists (nested `[[1, 2], [3, 4]]`, flat `[1, 2]`, MATLAB `[1 2; 3 4]`
// and rows on separate lines), LaTeX `\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}`, and lists
// of quoted tokens (`["I", "am"]`, MATLAB's `{'I', 'am'}`). One forward pass each, no recursion.
// A literal that is not closed stops at the first `=`/`:`, blank line or end of text, so a
// missing bracket costs one diagnostic, not the rest of the file.

export type Literal =
  | { kind: 'matrix'; end: number; matrix: MatrixBuilder }
  | { kind: 'strings'; end: number; strings: string[]; issues: ReadIssue[]; broken: boolean }
  | { kind: 'none' };

const CH = {
  tab: 9,
  newline: 10,
  cr: 13,
  space: 32,
  quote: 34,
  hash: 35,
  dollar: 36,
  percent: 37,
  ampersand: 38,
  apostrophe: 39,
  comma: 44,
  minus: 45,
  dot: 46,
  slash: 47,
  colon: 58,
  semicolon: 59,
  equals: 61,
  open: 91,
  backslash: 92,
  close: 93,
  braceOpen: 123,
  braceClose: 125,
  plus: 43,
  unicodeMinus: 0x2212,
} as const;

const LATEX_BEGIN = /\\begin\{(bmatrix|pmatrix|Bmatrix|vmatrix|Vmatrix|smallmatrix|matrix|array)(\*?)\}/y;

/**
 * Reads the literal starting at `at` (a `[`, `{` or `\begin{…}`), naming it `label` in messages.
 * `quiet`: only count issues (the name is unknown, so a failed read is silently dropped).
 * `shared`: its numbers on SharedArrayBuffers.
 */
export function readLiteral(text: string, at: number, label: string, quiet = false, shared = false): Literal {
  const code = text.charCodeAt(at);
  const builder = () => new MatrixBuilder(label, quiet, shared, text.length - at);
  if (code === CH.open || code === CH.braceOpen) return readBrackets(text, at, builder());
  if (code === CH.backslash) return readLatex(text, at, builder());
  return { kind: 'none' };
}

function isSpace(code: number): boolean {
  return code === CH.space || code === CH.tab || code === CH.cr;
}

function lineEnd(text: string, at: number): number {
  const end = text.indexOf('\n', at);
  return end === -1 ? text.length : end;
}

/** True when the newline at `at` is followed by a line holding only white space. */
function blankLineFollows(text: string, at: number): boolean {
  let probe = at + 1;
  while (isSpace(text.charCodeAt(probe))) probe++;
  return text.charCodeAt(probe) === CH.newline || probe >= text.length;
}

/** Characters that may follow an entry. */
function endsEntry(code: number): boolean {
  return (
    code === CH.comma ||
    code === CH.close ||
    isSpace(code) ||
    code === CH.newline ||
    code !== code || // NaN: end of text
    code === CH.semicolon ||
    code === CH.braceClose ||
    code === CH.ampersand ||
    code === CH.backslash ||
    code === CH.hash ||
    code === CH.percent ||
    code === CH.dollar
  );
}

/** Where a token that is not an entry ends: at the next separator. */
function strayEnd(text: string, at: number): number {
  let end = at + 1;
  while (end < text.length) {
    const code = text.charCodeAt(end);
    if (
      isSpace(code) ||
      code === CH.newline ||
      code === CH.comma ||
      code === CH.semicolon ||
      code === CH.open ||
      code === CH.close ||
      code === CH.ampersand ||
      code === CH.equals ||
      (code === CH.backslash && text.charCodeAt(end + 1) === CH.backslash)
    ) {
      break;
    }
    end++;
  }
  return end;
}

function notANumber(matrix: MatrixBuilder, text: string, start: number, end: number): void {
  const token = text.slice(start, Math.min(end, start + 40));
  const elided = /^\\[cvdl]?dots$|^\.\.\.$|^…$/.test(token);
  matrix.issue(
    start,
    end,
    'error',
    elided ? 'elided-entries' : 'not-a-number',
    elided
      ? `${matrix.label} leaves entries out (\`${token}\`): attention needs every number written.`
      : `\`${token}\` in ${matrix.label} is not a number.`,
    elided ? undefined : 'write a number such as 0.5, -2, 1e-3, -inf or nan (true/false in masks)',
  );
}

function pushEntry(matrix: MatrixBuilder, text: string, at: number, number: ScannedNumber, negate = false): void {
  if (number.overflow) {
    matrix.issue(at, number.end, 'warning', 'number-overflow', `\`${text.slice(at, Math.min(number.end, at + 40))}\` is beyond float64 and is read as ${number.value > 0 !== negate ? '' : '-'}Infinity.`);
  }
  matrix.push(negate ? -number.value : number.value, at, number.boolean);
}

function unclosed(matrix: MatrixBuilder, open: number, what: string, end: number): Literal {
  matrix.fail(open, open + what.length, 'unclosed', `The \`${what}\` that starts ${matrix.label} is never closed.`, 'close it after the last row');
  return { kind: 'matrix', end, matrix };
}

function readBrackets(text: string, open: number, matrix: MatrixBuilder): Literal {
  const label = matrix.label;
  const closeCode = text.charCodeAt(open) === CH.braceOpen ? CH.braceClose : CH.close;
  let first = open + 1;
  while (isSpace(text.charCodeAt(first)) || text.charCodeAt(first) === CH.newline) first++;
  const firstCode = text.charCodeAt(first);
  const number: ScannedNumber = { value: 0, end: 0, boolean: false, overflow: false };
  if ((firstCode === CH.quote || firstCode === CH.apostrophe) && !scanNumber(text, first, number)) {
    return readStrings(text, open, closeCode, label);
  }
  if (closeCode === CH.braceClose) return { kind: 'none' }; // `{…}` holds tokens only
  const nested = firstCode === CH.open;
  let depth = nested ? 1 : 0; // 0: a flat or MATLAB literal; 1/2: between / inside rows
  let lastWasEntry = false;
  // numpy/torch left numbers out (`...,`): reported once, at the first.
  let summarized = false;
  let lastEnd = open + 1;
  let at = open + 1;
  for (;;) {
    if (at >= text.length) return unclosed(matrix, open, '[', lastEnd);
    const code = text.charCodeAt(at);
    if (isSpace(code)) {
      at++;
      continue;
    }
    if (code === CH.comma) {
      lastWasEntry = false;
      at++;
      continue;
    }
    // The hot path: a plain decimal, maybe negative.
    const digitAt = code === CH.minus ? at + 1 : at;
    const digit = text.charCodeAt(digitAt);
    if (depth !== 1 && digit >= 48 && digit <= 57 && scanDecimal(text, digitAt, code === CH.minus, number) && endsEntry(text.charCodeAt(number.end))) {
      pushEntry(matrix, text, at, number);
      lastEnd = at = number.end;
      lastWasEntry = true;
      // Skip the usual `, ` right here rather than one loop turn per character.
      if (text.charCodeAt(at) === CH.comma) {
        lastWasEntry = false;
        at++;
        if (text.charCodeAt(at) === CH.space) at++;
      }
      continue;
    }
    if (code === CH.newline) {
      if (depth !== 1 && blankLineFollows(text, at)) return unclosed(matrix, open, '[', lastEnd);
      // MATLAB: a new line ends a row, unless the line ended with a comma.
      if (depth === 0 && lastWasEntry) matrix.endRow(lastEnd);
      lastWasEntry = false;
      at++;
      continue;
    }
    const next = text.charCodeAt(at + 1);
    if (code === CH.hash || code === CH.percent || (code === CH.slash && next === CH.slash)) {
      at = lineEnd(text, at); // a comment inside the literal
      continue;
    }
    if (code === CH.dot && next === CH.dot && text.charCodeAt(at + 2) === CH.dot) {
      // numpy and torch print `...,` where they leave out the middle of a large array; reading on
      // would give the wrong numbers. Otherwise it is MATLAB's line continuation.
      if (/^[ \t]*,/.test(text.slice(at + 3, at + 16))) {
        if (!summarized) matrix.fail(at, at + 3, 'printed-summary', printedSummaryMessage(label));
        summarized = true;
        at += 3;
      } else {
        at = lineEnd(text, at) + 1;
      }
      continue;
    }
    if (code === CH.semicolon && depth !== 2) {
      if (depth === 0) matrix.endRow(lastEnd);
      lastWasEntry = false;
      at++;
      continue;
    }
    if (code === CH.close) {
      if (depth === 2) {
        if (matrix.cellsInRow === 0) {
          matrix.broken = true;
          matrix.issue(at - 1, at + 1, 'error', 'empty-row', `Row ${matrix.rows + 1} of ${label} is empty.`);
        }
        matrix.endRow(lastEnd);
        depth = 1;
        lastEnd = at + 1;
        at++;
        continue;
      }
      matrix.endRow(lastEnd);
      return finishMatrix(matrix, open, at + 1);
    }
    if (code === CH.equals || code === CH.colon) return unclosed(matrix, open, '[', lastEnd);
    if (code === CH.open) {
      if (depth === 1) {
        depth = 2;
        at++;
        continue;
      }
      return tooDeep(text, matrix, open, at);
    }
    if (depth === 1) {
      // On a later line, this is text after a literal whose `]` is missing.
      if (text.lastIndexOf('\n', at) >= lastEnd) return unclosed(matrix, open, '[', lastEnd);
      const end = strayEnd(text, at);
      matrix.broken = true;
      matrix.issue(at, end, 'error', 'expected-row', `Expected \`[\` starting the next row of ${label}, or \`]\` closing it.`);
      return { kind: 'matrix', end: lastEnd, matrix };
    }
    if (scanNumber(text, at, number) && endsEntry(text.charCodeAt(number.end))) {
      pushEntry(matrix, text, at, number);
      lastWasEntry = true;
      lastEnd = at = number.end;
      continue;
    }
    const end = strayEnd(text, at);
    notANumber(matrix, text, at, end);
    matrix.push(NaN, at, false);
    lastWasEntry = true;
    lastEnd = at = end;
  }
}

/** A third level of brackets: report it and skip to the literal's closing bracket. */
function tooDeep(text: string, matrix: MatrixBuilder, open: number, at: number): Literal {
  matrix.fail(
    open,
    at + 1,
    'too-many-dimensions',
    `${matrix.label} has more than two levels of brackets; attention reads 2-D matrices.`,
    'write one matrix per head instead: W_Q1 = …, W_Q2 = …',
  );
  let depth = 0;
  for (let probe = open; probe < text.length; probe++) {
    const code = text.charCodeAt(probe);
    if (code === CH.open) depth++;
    else if (code === CH.close && --depth === 0) return { kind: 'matrix', end: probe + 1, matrix };
    else if (code === CH.equals || code === CH.colon) return { kind: 'matrix', end: probe, matrix };
  }
  return { kind: 'matrix', end: text.length, matrix };
}

function finishMatrix(matrix: MatrixBuilder, open: number, end: number): Literal {
  if (matrix.count === 0 && !matrix.broken) {
    matrix.broken = true;
    matrix.issue(open, end, 'error', 'empty-matrix', `${matrix.label} is empty.`, 'write at least one number');
  }
  return { kind: 'matrix', end, matrix };
}

function readStrings(text: string, open: number, closeCode: number, label: string): Literal {
  const strings: string[] = [];
  const issues: ReadIssue[] = [];
  const fail = (start: number, end: number, code: string, message: string): Literal => {
    issues.push({ start, end, severity: 'error', code, message });
    return { kind: 'strings', end, strings, issues, broken: true };
  };
  let at = open + 1;
  for (;;) {
    if (at >= text.length) return fail(open, open + 1, 'unclosed', `The list of ${label} is never closed.`);
    const code = text.charCodeAt(at);
    if (code === CH.newline && blankLineFollows(text, at)) return fail(open, open + 1, 'unclosed', `The list of ${label} is never closed.`);
    if (isSpace(code) || code === CH.newline || code === CH.comma || code === CH.semicolon) {
      at++;
      continue;
    }
    if (code === closeCode) return { kind: 'strings', end: at + 1, strings, issues, broken: false };
    if (code !== CH.quote && code !== CH.apostrophe) {
      // `{"type": …}` is a JSON object, not MATLAB's cell array of tokens.
      if (code === CH.colon && closeCode === CH.braceClose) return { kind: 'none' };
      if (code === CH.equals || code === CH.colon) return fail(open, open + 1, 'unclosed', `The list of ${label} is never closed.`);
      const end = strayEnd(text, at);
      return fail(at, end, 'not-a-token', `${label} holds quoted tokens; \`${text.slice(at, Math.min(end, at + 40))}\` is not one.`);
    }
    let value = '';
    let probe = at + 1;
    for (;;) {
      const c = text.charCodeAt(probe);
      if (probe >= text.length || c === CH.newline) return fail(at, probe, 'unclosed-string', `This token of ${label} has no closing quote.`);
      if (c === code) break;
      if (c === CH.backslash) {
        const escaped = text[probe + 1] ?? '';
        if (escaped === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(probe + 2, probe + 6))) {
          value += String.fromCharCode(parseInt(text.slice(probe + 2, probe + 6), 16));
          probe += 6;
        } else {
          value += escaped === 'n' ? '\n' : escaped === 't' ? '\t' : escaped;
          probe += 2;
        }
        continue;
      }
      value += text[probe];
      probe++;
    }
    strings.push(value);
    at = probe + 1;
  }
}

function readLatex(text: string, begin: number, matrix: MatrixBuilder): Literal {
  const label = matrix.label;
  LATEX_BEGIN.lastIndex = begin;
  const head = LATEX_BEGIN.exec(text);
  if (!head) return { kind: 'none' };
  const environment = head[1] + head[2];
  const endMarker = `\\end{${environment}}`;
  let at = begin + head[0].length;
  // `array` takes a column spec, starred environments an alignment: neither is an entry.
  const argument = environment === 'array' ? /\s*\{[^{}\n]*\}/y : head[2] ? /\s*\[[^\]\n]*\]/y : undefined;
  if (argument) {
    argument.lastIndex = at;
    if (argument.exec(text)) at = argument.lastIndex;
  }
  const number: ScannedNumber = { value: 0, end: 0, boolean: false, overflow: false };
  let cellFilled = false;
  let lastEnd = at;
  const endCell = (where: number): void => {
    if (!cellFilled) {
      matrix.broken = true;
      matrix.issue(where, where + 1, 'error', 'empty-entry', `An entry of ${label} is empty.`, 'write a number between the `&`s');
      matrix.push(NaN, where, false);
    }
    cellFilled = false;
  };
  for (;;) {
    if (at >= text.length) return unclosed(matrix, begin, head[0], lastEnd);
    const code = text.charCodeAt(at);
    const next = text.charCodeAt(at + 1);
    if (isSpace(code) || code === CH.braceOpen || code === CH.braceClose) {
      at++;
      continue;
    }
    if (code === CH.newline) {
      if (blankLineFollows(text, at)) return unclosed(matrix, begin, head[0], lastEnd);
      at++;
      continue;
    }
    if (code === CH.percent) {
      at = lineEnd(text, at);
      continue;
    }
    if (code === CH.dollar) return unclosed(matrix, begin, head[0], lastEnd);
    if (code === CH.ampersand) {
      endCell(at);
      at++;
      continue;
    }
    if (code === CH.backslash) {
      if (next === CH.backslash) {
        if (cellFilled || matrix.cellsInRow > 0) endCell(at);
        matrix.endRow(lastEnd);
        at += 2;
        const spacing = /\s*\[[^\]\n]*\]/y; // `\\[2pt]`
        spacing.lastIndex = at;
        if (spacing.exec(text)) at = spacing.lastIndex;
        continue;
      }
      if (text.startsWith(endMarker, at)) {
        if (cellFilled || matrix.cellsInRow > 0) endCell(at);
        matrix.endRow(lastEnd);
        return finishMatrix(matrix, begin, at + endMarker.length);
      }
      if (text.startsWith('\\end{', at)) return unclosed(matrix, begin, head[0], lastEnd);
      const command = /\\(?:hline|quad|qquad|[,;:! ])/y;
      command.lastIndex = at;
      if (command.exec(text)) {
        at = command.lastIndex;
        continue;
      }
    }
    if (!cellFilled) {
      const read = readLatexEntry(text, at, number);
      if (read) {
        pushEntry(matrix, text, at, number, read.negate);
        cellFilled = true;
        lastEnd = at = number.end;
        continue;
      }
    }
    const end = strayEnd(text, at);
    if (cellFilled) {
      matrix.issue(at, end, 'error', 'missing-separator', `Two entries in one cell of ${label}.`, 'separate entries with `&` and rows with `\\\\`');
    } else {
      notANumber(matrix, text, at, end);
      matrix.push(NaN, at, false);
      cellFilled = true;
    }
    lastEnd = at = end;
  }
}

/** One LaTeX entry: a number, `- \infty` (sign apart from the command), or `\frac{a}{b}`. */
function readLatexEntry(text: string, at: number, number: ScannedNumber): { negate: boolean } | undefined {
  let start = at;
  let negate = false;
  const code = text.charCodeAt(at);
  if (code === CH.minus || code === CH.plus || code === CH.unicodeMinus) {
    let probe = at + 1;
    while (isSpace(text.charCodeAt(probe))) probe++;
    if (text.charCodeAt(probe) === CH.backslash) {
      negate = code !== CH.plus;
      start = probe;
    }
  }
  const fraction = /\\[dt]?frac\s*\{\s*([^{}]*?)\s*\}\s*\{\s*([^{}]*?)\s*\}/y;
  fraction.lastIndex = start;
  const parts = fraction.exec(text);
  if (parts) {
    const numerator = Number(parts[1]);
    const denominator = Number(parts[2]);
    if (parts[1] === '' || parts[2] === '' || !Number.isFinite(numerator) || !Number.isFinite(denominator)) return undefined;
    number.value = numerator / denominator;
    number.end = fraction.lastIndex;
    number.boolean = false;
    number.overflow = false;
    return endsEntry(text.charCodeAt(number.end)) ? { negate } : undefined;
  }
  if (!scanNumber(text, start, number) || !endsEntry(text.charCodeAt(number.end))) return undefined;
  return { negate };
}
