import type { Severity } from '../types';
import type { ReadIssue } from './issues';

/** At most this many entry-level issues per literal: one bad paste must not flood the panel. */
const MAX_ISSUES_PER_LITERAL = 20;

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
  // Grown by doubling while reading; the finished matrix gets exact-size copies.
  private valueBuffer = new Float64Array(64);
  private offsetBuffer = new Uint32Array(64);

  constructor(readonly label: string) {}

  get cellsInRow(): number {
    return this.rowCells;
  }

  push(value: number, offset: number, isBoolean: boolean): void {
    if (this.count === this.valueBuffer.length) {
      const values = new Float64Array(this.count * 2);
      values.set(this.valueBuffer);
      this.valueBuffer = values;
      const offsets = new Uint32Array(this.count * 2);
      offsets.set(this.offsetBuffer);
      this.offsetBuffer = offsets;
    }
    this.valueBuffer[this.count] = value;
    this.offsetBuffer[this.count] = offset;
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
    if (this.issues.length >= MAX_ISSUES_PER_LITERAL) {
      this.suppressed++;
      return;
    }
    this.issues.push({ start, end, severity, code, message, ...(suggestion ? { suggestion } : {}) });
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

  values(): Float64Array {
    return this.valueBuffer.slice(0, this.count);
  }

  offsets(): Uint32Array {
    return this.offsetBuffer.slice(0, this.count);
  }
}

export function plural(count: number, one: string, many: string): string {
  return count === 1 ? one : many;
}
