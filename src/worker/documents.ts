// The worker's copies of the documents it reads: a document's text arrives once, in slices, and
// after that as the edits made to it, so typing in a large file sends the worker a few characters,
// not the file. A copy is kept at one version; a message that does not follow on from it (a missed
// edit, a restarted worker) drops the copy, and the next read asks the host for the whole text.
import { LineIndex, parseDocument } from '../core/parse';
import { parseCells, type NotebookCell } from '../core/parse/notebook';
import { buildSpec } from '../core/spec';
import { matrixStatistics } from '../core/statistics';
import type { Diagnostic, ParseResult } from '../core/types';
import type { WorkerEditMessage, WorkerReading, WorkerTextMessage } from '../protocol';

interface Copy {
  version: number;
  /** Slices still arriving: their sum is the text. */
  slices: string[];
  length: number;
  text?: string;
}

export class DocumentCopies {
  private readonly copies = new Map<string, Copy>();

  receive({ document, version, offset, slice }: WorkerTextMessage): void {
    const copy = this.copies.get(document);
    if (offset === 0) {
      this.copies.set(document, { version, slices: [slice], length: slice.length });
    } else if (copy && copy.version === version && copy.length === offset && copy.text === undefined) {
      copy.slices.push(slice);
      copy.length += slice.length;
    } else {
      this.copies.delete(document);
    }
  }

  edit({ document, baseVersion, version, changes }: WorkerEditMessage): void {
    const text = this.textOf(document, baseVersion);
    if (text === undefined) {
      this.copies.delete(document);
      return;
    }
    let edited = text;
    for (const { offset, length, text: inserted } of changes) {
      edited = edited.slice(0, offset) + inserted + edited.slice(offset + length);
    }
    this.copies.set(document, { version, slices: [], length: edited.length, text: edited });
  }

  forget(document: string): void {
    this.copies.delete(document);
  }

  /** The text of the document at `version`, or undefined when this copy is not at that version. */
  textOf(document: string, version: number): string | undefined {
    const copy = this.copies.get(document);
    if (!copy || copy.version !== version) return undefined;
    if (copy.text === undefined) {
      copy.text = copy.slices.join('');
      copy.slices = [];
    }
    return copy.text;
  }
}

/** Reads a text as the extension does: parse with the numbers on shared memory, then each
 * problem's spec. Text past `maxChars` (cut at a line end) is left unread, and says so. */
export function readText(text: string, maxChars: number): WorkerReading {
  return readWith(() => {
    const cut = text.length > maxChars ? text.lastIndexOf('\n', maxChars) + 1 : text.length;
    const read = cut < text.length ? text.slice(0, cut) : text;
    const parse = parseDocument(read, { sharedMemory: true });
    if (cut < text.length) {
      // A literal the cut runs through is not "never closed": the warning says why it stops.
      const lines = new LineIndex(read);
      parse.diagnostics = parse.diagnostics.filter((d) => d.code !== 'unclosed' || !runsToEnd(read, lines.offset(d.range.start)));
      parse.diagnostics.push(sizeLimitDiagnostic(text, cut, maxChars));
    }
    return parse;
  });
}

/** Reads a notebook's cells as the extension does (core/parse/notebook.ts), like `readText`. */
export function readCells(cells: NotebookCell[]): WorkerReading {
  return readWith(() => parseCells(cells, { sharedMemory: true }));
}

function readWith(read: () => ParseResult): WorkerReading {
  const started = performance.now();
  try {
    const parse = read();
    const specs = parse.problems.map((problem) => buildSpec(problem));
    const statistics = parse.problems.map((problem) => problem.matrices.map((def) => matrixStatistics(def.value.data)));
    return { parse, specs, statistics, readMs: performance.now() - started };
  } catch (error) {
    // A reader bug or an allocation that failed: one diagnostic, and the worker lives on.
    const start = { line: 0, character: 0 };
    const message = `Attention Lens could not read this file: ${error instanceof Error ? error.message : String(error)}`;
    const diagnostic: Diagnostic = { range: { start, end: start }, severity: 'error', code: 'read-failed', message };
    return { parse: { problems: [], diagnostics: [diagnostic] }, specs: [], statistics: [], readMs: performance.now() - started };
  }
}


/** True when the literal opened at `open` would read on to the end of `text`: the reader stops
 * an unclosed literal at the first `=` or `:` or blank line, and there is none. */
function runsToEnd(text: string, open: number): boolean {
  return !/[=:]|\n[ \t\r]*\n/.test(text.slice(open + 1));
}

function sizeLimitDiagnostic(text: string, cut: number, maxChars: number): Diagnostic {
  let line = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < cut; at = text.indexOf('\n', at + 1)) line++;
  const position = { line, character: 0 };
  const read = line === 0 ? 'none of it (its first line alone is longer)' : line === 1 ? 'its first line' : `its first ${line.toLocaleString('en-US')} lines`;
  return {
    range: { start: position, end: position },
    severity: 'warning',
    code: 'file-too-large',
    message:
      `This file is ${megabytes(text.length)} MB, more than attentionLens.maxFileMB = ${megabytes(maxChars)} MB: ` +
      `Attention Lens read ${read}. Raise attentionLens.maxFileMB to read it all.`,
  };
}

function megabytes(chars: number): string {
  return Number((chars / 2 ** 20).toPrecision(3)).toString();
}
