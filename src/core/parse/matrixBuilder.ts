import type { Severity } from '../types';
import type { ReadIssue } from './issues';

/** At most this many entry-level issues per literal: one bad paste must not flood the panel. */
const MAX_ISSUES_PER_LITERAL = 20;

// Scratch buffers shared by every builder (grown by doubling): a read is synchronous and one
// literal is finished before the next starts, and allocating typed arrays per literal is what
// made files with many small matrices slow. Finished matrices get exact-size copies.
const scratch = { values: new Float64Array(1024), offsets: new Uint32Array(1024) };

/** Collects a matrix's entries row by row while a literal is read, checking the rows agree. */
export class MatrixBuilder {
  readonly issues: ReadIssue[] = [];
  /** The structure is broken (ragged rows, unclosed, too deep): the matrix must not be used. */
  broken = false;
  rows = 0;
  cols = 0;
  count = 0;
  allBoolean = true;
  private rowCells = 0;
  private rowStart = -1;
  private suppressed = 0;

  /** Issues found; in a quiet builder they are only counted. */
  issueCount = 0;

  /** `quiet`: reading a name nobody asked about, where a failure is silence, not a diagnostic. */
  constructor(
    readonly label: string,
    private readonly quiet = false,
  ) {}

  get cellsInRow(): number {
    return this.rowCells;
  }

  push(value: number, offset: number, isBoolean: boolean): void {
    if (this.count === scratch.values.length) {
      const values = new Float64Array(this.count * 2);
      values.set(scratch.values);
      scratch.values = values;
      const offsets = new Uint32Array(this.count * 2);
      offsets.set(scratch.offsets);
      scratch.offsets = offsets;
    }
    scratch.values[this.count] = value;
    scratch.offsets[this.count] = offset;
    this.count++;
    if (this.rowCells === 0) this.rowStart = offset;
    this.rowCells++;
    if (!isBoolean) this.allBoolean = false;
  }

  /** Ends the current row (a no-op for an empty one); `end` is where its last entry ends. */
  endRow(end: number): void {
    if (this.rowCells === 0) return;
    if (this.rows === 0) this.cols = this.rowCells;
    else if (this.rowCells !== this.cols) {
      this.broken = true;
      this.issue(
        this.rowStart,
        end,
        'error',
        'ragged-row',
        `Row ${this.rows + 1} of ${this.label} has ${this.rowCells} ${plural(this.rowCells, 'entry', 'entries')} but row 1 has ${this.cols}: every row needs the same length.`,
      );
    }
    this.rows++;
    this.rowCells = 0;
  }

  issue(start: number, end: number, severity: Severity, code: string, message: string, suggestion?: string): void {
    this.issueCount++;
    if (this.quiet) return;
    if (this.issues.length >= MAX_ISSUES_PER_LITERAL) {
      this.suppressed++;
      return;
    }
    this.issues.push({ start, end, severity, code, message, ...(suggestion ? { suggestion } : {}) });
  }

  /** The literal is unusable as a whole: this one issue replaces the entry-level ones. */
  fail(start: number, end: number, code: string, message: string, suggestion?: string): void {
    this.broken = true;
    this.issues.length = 0;
    this.suppressed = 0;
    this.issue(start, end, 'error', code, message, suggestion);
  }

  /** Issues, with one closing note when some were left out. */
  allIssues(): ReadIssue[] {
    if (this.suppressed === 0) return this.issues;
    const last = this.issues[this.issues.length - 1];
    return [
      ...this.issues,
      {
        start: last.start,
        end: last.end,
        severity: 'info',
        code: 'more-issues',
        message: `${this.suppressed} more ${plural(this.suppressed, 'problem', 'problems')} in ${this.label} not listed.`,
      },
    ];
  }

  /** The entries, in an exact-size array of their own (on a SharedArrayBuffer when `shared`). */
  values(shared: boolean): Float64Array {
    const values = new Float64Array(allocate(this.count * Float64Array.BYTES_PER_ELEMENT, shared));
    values.set(scratch.values.subarray(0, this.count));
    return values;
  }

  offsets(shared: boolean): Uint32Array {
    const offsets = new Uint32Array(allocate(this.count * Uint32Array.BYTES_PER_ELEMENT, shared));
    offsets.set(scratch.offsets.subarray(0, this.count));
    return offsets;
  }
}

export function allocate(bytes: number, shared: boolean): ArrayBuffer | SharedArrayBuffer {
  return shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
}

function plural(count: number, one: string, many: string): string {
  return count === 1 ? one : many;
}
