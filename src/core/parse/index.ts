import type { Diagnostic, MatrixDef, ParseResult, Problem, Range, Role, TensorReference } from '../types';
import { defaultOptions, findDirectives, type Directive } from './directive';
import type { ReadIssue } from './issues';
import { LineIndex } from './lineIndex';
import { readLiteral } from './literal';
import { allocate } from './matrixBuilder';
import { classifyName, type NameMeaning } from './names';
import { readReference } from './references';

export { LineIndex, cellAtOffset } from './lineIndex';
export { roleLabel } from './names';

// The file reader: finds every `NAME = LITERAL` (also `:=`, `:`, LaTeX `&=`, JSON `"NAME":`),
// every `attention:` directive, and groups them into problems. Linear in the text: each
// assignment sign is looked at once, a bounded look back for its name, and a literal is read
// once and skipped over.

/** Cap on diagnostics per document, so a pasted binary file stays readable in the Problems panel. */
const MAX_DIAGNOSTICS = 500;
/** Longest name looked back for, in characters. */
const MAX_NAME = 80;
/** Definitions read per document: past this, a file is a dump, not notes, and the rest of it is
 * left unread, with a note that says so. Each definition costs the editor a CodeLens, and the
 * extension host ~10 µs to receive from the worker: 2,000 keep that within a few milliseconds. */
export const MAX_DEFINITIONS = 2_000;

const NAME_AT_END =
  /(?:"([^"\n]{1,60})"|'([^'\n]{1,60})'|((?:\\(?:mathbf|mathrm|mathit|boldsymbol|bm)\{)?[A-Za-z][A-Za-z0-9_]*\}?(?:[_^](?:\{[^{}\s]{1,12}\}|[A-Za-z0-9]))*(?:\[\d{1,3}\])?))$/;
/** `np.array(`, `torch.tensor(`, `Matrix(`, … before a literal. */
const WRAPPER = /([A-Za-z_][\w.]*)\(\s*/y;
const WRAPPER_FUNCTIONS = new Set(['array', 'asarray', 'tensor', 'as_tensor', 'Tensor', 'FloatTensor', 'DoubleTensor', 'BoolTensor', 'Matrix', 'matrix', 'constant', 'mat']);
/** `…], dtype=torch.bool)`: a 0/1 literal meant as a boolean mask. */
const BOOL_DTYPE = /\s*,\s*dtype\s*=\s*[\w.]*bool\b/y;

/**
 * A transpose right after the literal: numpy/torch `….T`, `.t()`, `.transpose()` after the
 * wrapper's `)` (the wrapper's other arguments may come first), MATLAB `'` or `.'`, LaTeX
 * `^T`, `^{T}`, `^\top`, `^{\intercal}`.
 */
const TRANSPOSE = /(?:(?:\s*,[^()\n]*)?\s*\)\s*\.(?:T\b|t\(\)|transpose\(\))|\.?'(?![\w'"])|\^\s*(?:\{\s*)?(?:T|\\top|\\intercal)\b(?:\s*\})?)/y;

/** The transpose of a matrix read row-major, with its cell offsets moved along. */
function transposed(m: { rows: number; cols: number; data: Float64Array }, offsets: Uint32Array, shared: boolean): { value: typeof m; cellOffsets: Uint32Array } {
  const data = new Float64Array(allocate(m.data.byteLength, shared));
  const cellOffsets = new Uint32Array(allocate(offsets.byteLength, shared));
  for (let i = 0; i < m.rows; i++) {
    for (let j = 0; j < m.cols; j++) {
      data[j * m.rows + i] = m.data[i * m.cols + j];
      cellOffsets[j * m.rows + i] = offsets[i * m.cols + j];
    }
  }
  return { value: { rows: m.cols, cols: m.rows, data }, cellOffsets };
}

interface Definition {
  kind: 'matrix' | 'tokens';
  start: number;
  end: number;
  /** Grouping key: a repeated key starts a new problem (undefined: unknown names never do). */
  key?: string;
  matrix?: MatrixDef;
  tokens?: { keys: boolean; values: string[] };
  /** A known role whose literal is broken (the reader reported why). */
  unreadable?: NonNullable<Problem['unreadable']>[number];
  /** A tensor loaded from a file, read later by the resolver. */
  reference?: TensorReference;
}

type Event = { at: number; directive: Directive } | { at: number; definition: Definition };

export interface ReadOptions {
  /** Every large matrix's numbers and cell offsets on SharedArrayBuffers, so that the reading
   * can be posted to another thread without copying them (what the worker does). */
  sharedMemory?: boolean;
}

export function parseDocument(text: string, options: ReadOptions = {}): ParseResult {
  const lines = new LineIndex(text);
  const nul = text.indexOf('\0');
  if (nul !== -1) return { problems: [], diagnostics: [binaryDiagnostic(lines.range(nul, nul + 1))] };
  const issues: ReadIssue[] = [];
  const directives = findDirectives(text);
  for (const directive of directives) issues.push(...directive.issues);
  const definitions = findDefinitions(text, lines, issues, options.sharedMemory ?? false);
  const events: Event[] = [
    ...directives.map((directive) => ({ at: directive.start, directive })),
    ...definitions.map((definition) => ({ at: definition.start, definition })),
  ].sort((a, b) => a.at - b.at);
  return { problems: groupProblems(events, lines), diagnostics: toDiagnostics(issues, lines) };
}

function isNameChar(code: number): boolean {
  return (
    (code >= 65 && code <= 90) ||
    (code >= 97 && code <= 122) ||
    (code >= 48 && code <= 57) ||
    code === 95 || // _
    code === 94 || // ^
    code === 123 ||
    code === 125 || // { }
    code === 40 ||
    code === 41 || // ( )
    code === 91 ||
    code === 93 || // [ ]
    code === 92 || // \
    code === 34 ||
    code === 39 // " '
  );
}

/** The name written just before an assignment sign at `opStart`, if any. */
function nameBefore(text: string, opStart: number): { name: string; start: number; end: number } | undefined {
  let end = opStart;
  while (end > 0 && (text.charCodeAt(end - 1) === 32 || text.charCodeAt(end - 1) === 9)) end--;
  if (text.charCodeAt(end - 1) === 38 /* & of LaTeX `X &= …` */) {
    end--;
    while (end > 0 && (text.charCodeAt(end - 1) === 32 || text.charCodeAt(end - 1) === 9)) end--;
  }
  let start = end;
  while (start > 0 && end - start < MAX_NAME && isNameChar(text.charCodeAt(start - 1))) start--;
  if (start === end) return undefined;
  const match = NAME_AT_END.exec(text.slice(start, end));
  if (!match) return undefined;
  const quoted = match[3] === undefined; // a JSON key: the name is inside the quotes
  return { name: match[1] ?? match[2] ?? match[3], start: start + match.index + (quoted ? 1 : 0), end: quoted ? end - 1 : end };
}

/** Where the assignment sign at `at` ends, or -1 when `at` is no assignment (`==`, `<=`, `=>`…). */
function assignmentEnd(text: string, at: number): number {
  const code = text.charCodeAt(at);
  const next = text.charCodeAt(at + 1);
  if (code === 58 /* : */) return next === 61 ? at + 2 : next === 58 ? -1 : at + 1;
  if (next === 61 || next === 62 /* == => */) return -1;
  const previous = text.charCodeAt(at - 1);
  if (previous === 61 || previous === 33 || previous === 60 || previous === 62 || previous === 58) return -1;
  return at + 1;
}

/** Start of the literal after an assignment (past white space and a wrapper call), or -1. */
function literalStart(text: string, from: number): number {
  let at = from;
  let newlines = 0;
  for (;;) {
    const code = text.charCodeAt(at);
    if (code === 32 || code === 9 || code === 13) at++;
    else if (code === 10 && newlines++ === 0) at++;
    else break;
  }
  const code = text.charCodeAt(at);
  if (code === 91 || code === 123 || code === 92) return at;
  WRAPPER.lastIndex = at;
  const wrapper = WRAPPER.exec(text);
  if (wrapper && WRAPPER_FUNCTIONS.has(wrapper[1].slice(wrapper[1].lastIndexOf('.') + 1))) {
    const inner = WRAPPER.lastIndex;
    if (text.charCodeAt(inner) === 91) return inner;
  }
  return -1;
}

function findDefinitions(text: string, lines: LineIndex, issues: ReadIssue[], shared: boolean): Definition[] {
  const definitions: Definition[] = [];
  const length = text.length;
  let at = 0;
  while (at < length) {
    const code = text.charCodeAt(at);
    if (code !== 61 && code !== 58) {
      at++;
      continue;
    }
    const opEnd = assignmentEnd(text, at);
    // The literal first: it is a few character tests, the name a regular expression.
    const start = opEnd === -1 ? -1 : literalStart(text, opEnd);
    const reference = start === -1 && opEnd !== -1 ? referenceDefinition(text, lines, at, opEnd) : undefined;
    if (reference) {
      definitions.push(reference);
      at = reference.end;
      continue;
    }
    const name = start === -1 ? undefined : nameBefore(text, at);
    if (!name) {
      at = Math.max(at + 1, opEnd);
      continue;
    }
    if (definitions.length === MAX_DEFINITIONS) {
      issues.push({
        start: name.start,
        end: name.end,
        severity: 'warning',
        code: 'too-many-definitions',
        message: `This file defines more than ${MAX_DEFINITIONS.toLocaleString('en-US')} matrices: Attention Lens read the first ${MAX_DEFINITIONS.toLocaleString('en-US')} and stopped here.`,
      });
      break;
    }
    const definition = readDefinition(text, lines, name, start, classifyName(name.name), issues, shared);
    if (definition) {
      definitions.push(definition);
      at = definition.end;
    } else at = opEnd;
  }
  return definitions;
}

/** `W_Q = load_file("model.safetensors")["…"]`: a definition of a known role read from a tensor file. */
function referenceDefinition(text: string, lines: LineIndex, opStart: number, opEnd: number): Definition | undefined {
  let at = opEnd;
  while (text.charCodeAt(at) === 32 || text.charCodeAt(at) === 9) at++;
  // The loader first (a sticky expression that fails at once on most text), then the name.
  const found = readReference(text, at);
  const name = found && nameBefore(text, opStart);
  const meaning = name && classifyName(name.name);
  if (!found || !name || !meaning || meaning.kind !== 'matrix') return undefined;
  const reference: TensorReference = {
    name: name.name,
    role: meaning.role,
    ...(meaning.head !== undefined ? { head: meaning.head } : {}),
    file: found.file,
    ...(found.key !== undefined ? { key: found.key } : {}),
    transpose: found.transpose,
    nameRange: lines.range(name.start, name.end),
    range: lines.range(name.start, found.end),
  };
  return { kind: 'matrix', start: name.start, end: found.end, key: groupKey(meaning.role, meaning.head), reference };
}

function binaryDiagnostic(range: Range): Diagnostic {
  return {
    range,
    severity: 'error',
    code: 'binary-file',
    message: `This file holds a NUL character (line ${range.start.line + 1}): it is binary, not text. Attention Lens reads matrices written as text; save numpy arrays with np.savetxt or print them.`,
  };
}

/** What makes two definitions "the same name" for grouping: the role, and the head if any. */
function groupKey(role: Role, head: number | undefined): string {
  return head === undefined ? role : `${role}#${head}`;
}

function readDefinition(
  text: string,
  lines: LineIndex,
  name: { name: string; start: number; end: number },
  start: number,
  meaning: NameMeaning,
  issues: ReadIssue[],
  shared: boolean,
): Definition | undefined {
  const literal = readLiteral(text, start, name.name, meaning.kind === 'unknown', shared);
  if (literal.kind === 'none') return undefined;
  if (meaning.kind === 'unknown') {
    // Code is full of lists that are not matrices: keep unknown names only when they read cleanly.
    if (literal.kind !== 'matrix' || literal.matrix.broken || literal.matrix.issueCount > 0) return undefined;
  } else if (literal.kind === 'strings') {
    issues.push(...literal.issues);
    if (meaning.kind === 'matrix') {
      issues.push({ start: name.start, end: literal.end, severity: 'error', code: 'not-numbers', message: `${name.name} holds text; it needs numbers.` });
      return undefined;
    }
    if (literal.broken) return undefined;
    return {
      kind: 'tokens',
      start: name.start,
      end: literal.end,
      key: meaning.keys ? 'keyTokens' : 'tokens',
      tokens: { keys: meaning.keys, values: literal.strings },
    };
  } else {
    issues.push(...literal.matrix.allIssues());
    if (meaning.kind === 'tokens') {
      issues.push({
        start: name.start,
        end: literal.end,
        severity: 'error',
        code: 'tokens-not-strings',
        message: `${name.name} labels the rows: write quoted tokens, e.g. ["I", "love", "cats"].`,
      });
      return undefined;
    }
    if (literal.matrix.broken) {
      return {
        kind: 'matrix',
        start: name.start,
        end: literal.end,
        key: groupKey(meaning.role, meaning.head),
        unreadable: { name: name.name, role: meaning.role, range: lines.range(name.start, literal.end) },
      };
    }
  }
  const builder = literal.matrix;
  let value = { rows: builder.rows, cols: builder.cols, data: builder.values() };
  let cellOffsets = builder.offsets();
  let boolean = builder.allBoolean && builder.count > 0;
  BOOL_DTYPE.lastIndex = literal.end;
  if (!boolean && BOOL_DTYPE.test(text) && value.data.every((x) => x === 0 || x === 1)) boolean = true;
  let end = literal.end;
  TRANSPOSE.lastIndex = end;
  if (TRANSPOSE.test(text)) {
    end = TRANSPOSE.lastIndex;
    ({ value, cellOffsets } = transposed(value, cellOffsets, shared));
  }
  const role = meaning.kind === 'matrix' ? meaning.role : undefined;
  const head = meaning.kind === 'matrix' ? meaning.head : undefined;
  const matrix: MatrixDef = {
    name: name.name,
    role,
    ...(head !== undefined ? { head } : {}),
    value,
    boolean,
    nameRange: lines.range(name.start, name.end),
    range: lines.range(name.start, end),
    cellOffsets,
  };
  return {
    kind: 'matrix',
    start: name.start,
    end,
    key: role === undefined ? undefined : groupKey(role, head),
    matrix,
  };
}

interface OpenProblem {
  directive?: Directive;
  definitions: Definition[];
  keys: Set<string>;
}

function groupProblems(events: Event[], lines: LineIndex): Problem[] {
  const problems: Problem[] = [];
  let open: OpenProblem = { definitions: [], keys: new Set() };
  const close = (): void => {
    const known = open.definitions.some((definition) => definition.key !== undefined);
    if (open.directive || known) problems.push(toProblem(open, problems.length, lines));
    open = { definitions: [], keys: new Set() };
  };
  for (const event of events) {
    if ('directive' in event) {
      if (open.directive || open.definitions.length > 0) close();
      open.directive = event.directive;
      continue;
    }
    const { key } = event.definition;
    if (key !== undefined && open.keys.has(key)) close();
    if (key !== undefined) open.keys.add(key);
    open.definitions.push(event.definition);
  }
  close();
  return problems;
}

function toProblem(open: OpenProblem, index: number, lines: LineIndex): Problem {
  let start = open.directive?.start ?? Infinity;
  let end = open.directive?.end ?? -Infinity;
  for (const definition of open.definitions) {
    start = Math.min(start, definition.start);
    end = Math.max(end, definition.end);
  }
  const options = open.directive ? { ...open.directive.options } : defaultOptions();
  const problem: Problem = {
    index,
    range: lines.range(start, end),
    options,
    matrices: [],
  };
  if (options.name !== undefined) problem.name = options.name;
  if (open.directive?.model) problem.model = open.directive.model;
  if (open.directive) {
    problem.directiveRange = lines.range(open.directive.start, open.directive.end);
    const spans = Object.entries(open.directive.optionSpans);
    if (spans.length > 0) problem.optionRanges = Object.fromEntries(spans.map(([key, span]) => [key, lines.range(span.start, span.end)]));
  }
  for (const definition of open.definitions) {
    if (definition.matrix) problem.matrices.push(definition.matrix);
    else if (definition.unreadable) (problem.unreadable ??= []).push(definition.unreadable);
    else if (definition.reference) (problem.references ??= []).push(definition.reference);
    else if (definition.tokens) {
      if (definition.tokens.keys) problem.keyTokens = definition.tokens.values;
      else problem.tokens = definition.tokens.values;
    }
  }
  return problem;
}

function toDiagnostics(issues: ReadIssue[], lines: LineIndex): Diagnostic[] {
  const sorted = issues.slice().sort((a, b) => a.start - b.start);
  const kept = sorted.slice(0, MAX_DIAGNOSTICS);
  const diagnostics = kept.map((issue) => toDiagnostic(issue, lines.range(issue.start, Math.max(issue.start, issue.end))));
  if (sorted.length > MAX_DIAGNOSTICS) {
    const last = kept[kept.length - 1];
    diagnostics.push({
      range: lines.range(last.start, last.end),
      severity: 'info',
      code: 'more-issues',
      message: `${sorted.length - MAX_DIAGNOSTICS} more problems in this file are not listed.`,
    });
  }
  return diagnostics;
}

function toDiagnostic(issue: ReadIssue, range: Range): Diagnostic {
  return {
    range,
    severity: issue.severity,
    message: issue.message,
    code: issue.code,
    ...(issue.suggestion ? { suggestion: issue.suggestion } : {}),
  };
}
