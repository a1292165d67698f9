import type { Diagnostic, MatrixDef, ParseResult, Position, Problem, Range } from '../types';
import { comparePositions } from '../location';
import { parseDocument, type ReadOptions } from './index';
import { printedSummaryMessage } from './issues';
import { LineIndex } from './lineIndex';
import { readLiteral } from './literal';

// The notebook reader: a Jupyter notebook read by cells, producing the text reader's definitions
// with positions that name the cell (and, for printed arrays, the output) they are in.
//
// The cells' sources are read in notebook order as one text — each followed by the arrays its
// outputs printed — separated by a line holding only `=`, which no literal, name or directive
// reads across (a literal not closed stops at the first `=`, and a sign with no name before it
// assigns nothing), so definitions never straddle cells but problems do: X in cell 1 and W_Q in
// cell 4 form one problem, as the text reader groups one file. Every position is then mapped
// back from that text to its cell.
//
// Printed arrays (numpy's `array([[…]], dtype=…)` repr, `print` of a numpy array or torch
// tensor) are read from a cell's text outputs when they have a name:
//  - written in the output itself: `W_V = [[…]]` (e.g. from `print("W_V =", W_V)`);
//  - an execute_result (`Out[n]`) of a cell whose last line is a bare name: that name;
//  - printed to stdout: the k-th unnamed array is named by the k-th `print(NAME)` of the cell's
//    source, when the two counts agree.
// An output whose name the same cell's source assigns a literal (`X = np.array([[…]])` then `X`)
// only echoes it and is not read again.

export interface NotebookCell {
  kind: 'code' | 'markdown' | 'raw';
  source: string;
  outputs: CellOutput[];
}

export interface CellOutput {
  /** `result`: the text/plain of an execute_result or display_data; `stream`: what the cell printed to stdout. */
  kind: 'result' | 'stream';
  text: string;
}

/** Keeps every cell out of its neighbours' literals: a literal not closed stops at an `=`. */
const SEPARATOR = '\n\n=\n\n';

/** A line starting a printed array: `[[`, `array(`, `tensor(`, optionally after `NAME =`. */
const PRINTED_ARRAY = /[ \t]*(?:([A-Za-z_]\w*)[ \t]*[=:][ \t]*)?(?:(?:array|tensor)\([ \t]*)?\[/y;
const PRINT_CALL = /\bprint\(\s*([A-Za-z_]\w*)\s*\)/g;
const BARE_NAME = /^[ \t]*([A-Za-z_]\w*)[ \t]*$/;
/** numpy's repr puts `dtype=…)` on a line of its own when the rows filled theirs. */
const DTYPE_SUFFIX = /,\s*dtype=[\w.]+\)/y;

/** Reads an `.ipynb` file's JSON: every cell (raw ones too, so indices match the editor's). */
export function readNotebook(json: string): { cells: NotebookCell[] } | { error: Diagnostic } {
  let notebook: unknown;
  try {
    notebook = JSON.parse(json);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const at = /position (\d+)/.exec(message);
    const start = new LineIndex(json).position(at ? Number(at[1]) : json.length);
    return { error: { range: { start, end: start }, severity: 'error', code: 'notebook-json', message: `Not a readable notebook: ${message}.` } };
  }
  const cells = isRecord(notebook) ? notebook.cells : undefined;
  if (!Array.isArray(cells)) {
    const start = { line: 0, character: 0 };
    return {
      error: { range: { start, end: start }, severity: 'error', code: 'notebook-no-cells', message: 'Not a Jupyter notebook: the JSON has no "cells" list (nbformat 4).' },
    };
  }
  return { cells: cells.map(readCell) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** nbformat's multiline strings: one string, or a list of fragments (usually one per line). */
function multiline(value: unknown): string {
  if (typeof value === 'string') return value;
  return Array.isArray(value) ? value.filter((fragment) => typeof fragment === 'string').join('') : '';
}

function readCell(cell: unknown): NotebookCell {
  if (!isRecord(cell)) return { kind: 'raw', source: '', outputs: [] };
  const kind = cell.cell_type === 'code' || cell.cell_type === 'markdown' ? cell.cell_type : 'raw';
  const outputs: CellOutput[] = [];
  for (const output of Array.isArray(cell.outputs) ? cell.outputs : []) {
    if (!isRecord(output)) continue;
    if (output.output_type === 'stream' && output.name === 'stdout') outputs.push({ kind: 'stream', text: multiline(output.text) });
    else if ((output.output_type === 'execute_result' || output.output_type === 'display_data') && isRecord(output.data) && 'text/plain' in output.data) {
      outputs.push({ kind: 'result', text: multiline(output.data['text/plain']) });
    }
  }
  return { kind, source: multiline(cell.source), outputs };
}

/** Reads a notebook file: its cells, or why it is not one. */
export function parseNotebook(json: string): ParseResult {
  const read = readNotebook(json);
  return 'error' in read ? { problems: [], diagnostics: [read.error] } : parseCells(read.cells);
}

/** One piece of the text read: a cell's source, or one named array an output printed. */
interface Segment {
  /** Where the piece starts in the text read. */
  start: number;
  /** Characters in the text read, `prefix` included. */
  length: number;
  /** Characters at the start that are not the cell's (`NAME = ` before an array named from the source). */
  prefix: number;
  /** Where the piece starts in its own text (the source, or the output). */
  origin: number;
  lines: LineIndex;
  cell: number;
  output?: number;
  /** Where the name is written in the cell's source (`X` of `print(X)`), for arrays named there. */
  anchor?: Range;
}

interface PrintedArray {
  output: number;
  /** Start of the array (or of its name, when the output writes one). */
  start: number;
  /** End of the line where the array closes (`, dtype=float32)` included). */
  end: number;
  /** The name written in the output before the array (`W_V = [[…]]`). */
  name?: string;
  clean: boolean;
  elided: boolean;
}

/** Reads cells (of a file or of an open notebook) in order, as one document of many parts. */
export function parseCells(cells: readonly NotebookCell[], options: ReadOptions = {}): ParseResult {
  const parts: string[] = [];
  const segments: Segment[] = [];
  const extra: Diagnostic[] = [];
  let length = 0;
  const add = (text: string, segment: Omit<Segment, 'start' | 'length'>): void => {
    segments.push({ ...segment, start: length, length: text.length });
    parts.push(text);
    length += text.length + SEPARATOR.length;
  };
  cells.forEach((cell, index) => {
    if (cell.kind === 'raw') return;
    const sourceLines = new LineIndex(cell.source);
    add(cell.source, { prefix: 0, origin: 0, lines: sourceLines, cell: index });
    if (cell.kind !== 'code') return;
    const outputLines = cell.outputs.map((output) => new LineIndex(output.text));
    for (const named of namedArrays(cell, sourceLines, index)) {
      const { array, name, anchor } = named;
      const output = cell.outputs[array.output];
      const range = { start: { ...outputLines[array.output].position(array.start), cell: index, output: array.output } };
      if (cell.source.search(literalAssignment(name)) !== -1) continue;
      if (!array.clean) {
        if (array.elided) {
          extra.push({
            range: anchor ?? { ...range, end: range.start },
            severity: 'warning',
            code: 'printed-summary',
            message: printedSummaryMessage(name),
          });
        }
        continue;
      }
      const body = output.text.slice(array.start, array.end);
      const segment = { origin: array.start, lines: outputLines[array.output], cell: index, output: array.output };
      if (array.name !== undefined) add(body, { ...segment, prefix: 0 });
      else add(`${name} = ${body}`, { ...segment, prefix: name.length + 3, anchor });
    }
  });
  const text = parts.join(SEPARATOR);
  const read = parseDocument(text, options);
  const locator = new Locator(text, segments);
  const diagnostics = read.diagnostics.map((diagnostic) => ({ ...diagnostic, range: locator.range(diagnostic.range) }));
  return {
    problems: read.problems.map((problem) => locator.problem(problem)),
    diagnostics: [...diagnostics, ...extra].sort((a, b) => comparePositions(a.range.start, b.range.start)),
  };
}

/** `NAME = [`, `NAME = np.array([`…: the source assigns the name a literal. */
function literalAssignment(name: string): RegExp {
  return new RegExp(`(?:^|[^\\w.])${name}[ \\t]*=[ \\t]*(?:[\\w.]+\\([ \\t]*)?\\[`);
}

function lineEnd(text: string, from: number): number {
  const end = text.indexOf('\n', from);
  return end === -1 ? text.length : end;
}

/** Every array an output printed, in order: where it starts and ends, and whether it reads cleanly. */
function printedArrays(text: string, output: number): PrintedArray[] {
  const arrays: PrintedArray[] = [];
  let at = 0;
  while (at < text.length) {
    PRINTED_ARRAY.lastIndex = at;
    const match = PRINTED_ARRAY.exec(text);
    const literal = match ? readLiteral(text, PRINTED_ARRAY.lastIndex - 1, match[1] ?? 'output', true) : undefined;
    if (!match || literal?.kind !== 'matrix') {
      at = lineEnd(text, at) + 1;
      continue;
    }
    DTYPE_SUFFIX.lastIndex = literal.end;
    const end = lineEnd(text, DTYPE_SUFFIX.test(text) ? DTYPE_SUFFIX.lastIndex : literal.end);
    const elided = text.slice(at, literal.end).includes('...');
    arrays.push({
      output,
      start: at + match[0].length - match[0].trimStart().length,
      end,
      ...(match[1] !== undefined ? { name: match[1] } : {}),
      clean: !elided && !literal.matrix.broken && literal.matrix.issueCount === 0,
      elided,
    });
    at = end + 1;
  }
  return arrays;
}

/** The printed arrays of a code cell that have a name (see the rules at the top), in output order. */
function namedArrays(cell: NotebookCell, sourceLines: LineIndex, index: number): { array: PrintedArray; name: string; anchor?: Range }[] {
  const arrays = cell.outputs.flatMap((output, k) => printedArrays(output.text, k));
  const named: { array: PrintedArray; name: string; anchor?: Range }[] = [];
  const sourceRange = (start: number, end: number): Range => {
    const range = sourceLines.range(start, end);
    return { start: { ...range.start, cell: index }, end: { ...range.end, cell: index } };
  };
  for (const array of arrays) if (array.name !== undefined) named.push({ array, name: array.name });

  const lastLineStart = cell.source.trimEnd().lastIndexOf('\n') + 1;
  const last = BARE_NAME.exec(cell.source.slice(lastLineStart).trimEnd());
  const result = arrays.find((array) => array.name === undefined && cell.outputs[array.output].kind === 'result');
  if (last && result) {
    const start = lastLineStart + last[0].indexOf(last[1]);
    named.push({ array: result, name: last[1], anchor: sourceRange(start, start + last[1].length) });
  }

  const printed = arrays.filter((array) => array.name === undefined && cell.outputs[array.output].kind === 'stream');
  const calls = [...cell.source.matchAll(PRINT_CALL)];
  if (calls.length === printed.length) {
    printed.forEach((array, k) => {
      const [call, name] = calls[k];
      const start = calls[k].index + call.indexOf(name, 'print('.length);
      named.push({ array, name, anchor: sourceRange(start, start + name.length) });
    });
  }
  return named.sort((a, b) => a.array.output - b.array.output || a.array.start - b.array.start);
}

/** Maps positions in the text read back to cells (and outputs). */
class Locator {
  private readonly lines: LineIndex;

  constructor(
    text: string,
    private readonly segments: readonly Segment[],
  ) {
    this.lines = new LineIndex(text);
  }

  problem(problem: Problem): Problem {
    return {
      ...problem,
      range: this.range(problem.range),
      ...(problem.directiveRange ? { directiveRange: this.range(problem.directiveRange) } : {}),
      matrices: problem.matrices.map((matrix) => this.matrix(matrix)),
      ...(problem.unreadable ? { unreadable: problem.unreadable.map((entry) => ({ ...entry, range: this.range(entry.range) })) } : {}),
    };
  }

  range(range: Range): Range {
    return { start: this.position(range.start), end: this.position(range.end) };
  }

  /** Entry offsets become offsets in the matrix's own text (the cell's source or its output),
   * in place: on shared memory when the reading was asked for there. */
  private matrix(matrix: MatrixDef): MatrixDef {
    const segment = this.segmentAt(this.lines.offset(matrix.range.start));
    const offsets = matrix.cellOffsets;
    for (let k = 0; k < offsets.length; k++) offsets[k] = this.local(segment, offsets[k]);
    return { ...matrix, nameRange: segment.anchor ?? this.range(matrix.nameRange), range: this.range(matrix.range) };
  }

  private position(position: Position): Position {
    const offset = this.lines.offset(position);
    const segment = this.segmentAt(offset);
    const local = segment.lines.position(this.local(segment, offset));
    return segment.output === undefined ? { ...local, cell: segment.cell } : { ...local, cell: segment.cell, output: segment.output };
  }

  private local(segment: Segment, offset: number): number {
    return segment.origin + Math.max(0, Math.min(segment.length - segment.prefix, offset - segment.start - segment.prefix));
  }

  /** The last segment starting at or before the offset (the separator after a segment maps to its end). */
  private segmentAt(offset: number): Segment {
    let low = 0;
    let high = this.segments.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.segments[mid].start <= offset) low = mid;
      else high = mid - 1;
    }
    return this.segments[low];
  }
}
