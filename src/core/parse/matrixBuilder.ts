import type { Severity } from '../types';
import type { ReadIssue } from './issues';

/** At most this many entry-level issues per literal: one bad paste must not flood the panel. */
const MAX_ISSUES_PER_LITERAL = 20;

// Entries go first to a scratch shared by every builder (a read is synchronous and one literal
// is finished before the next starts; allocating typed arrays per literal is what made files with
// many small matrices slow), and a small matrix gets exact-size copies. A literal that outgrows
// the scratch moves to buffers of its own that grow in place (resizable ArrayBuffers, growable
// SharedArrayBuffers: reserved once, pages committed as they fill, nothing copied again), so a
// large matrix holds its numbers' memory once, not twice or three times as when an array grown by
// doubling is copied out.
const SCRATCH = 1 << 16;
const scratch = { values: new Float64Array(SCRATCH), offsets: new Uint32Array(SCRATCH) };

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
  private valuesOut: Float64Array = scratch.values;
  private offsetsOut: Uint32Array = scratch.offsets;
  /** Buffers of this literal's own, once it outgrew the scratch. */
  private own?: { values: ArrayBuffer | SharedArrayBuffer; offsets: ArrayBuffer | SharedArrayBuffer };

  /** Set by `fail`: later issues of this literal are not reported. */
  private failed = false;
  /** Issues found; in a quiet builder they are only counted. */
  issueCount = 0;

  /**
   * `quiet`: reading a name nobody asked about, where a failure is silence, not a diagnostic.
   * `shared`: the finished matrix on SharedArrayBuffers. `maxEntries`: no more can come (each
   * entry starts at its own offset of the text), which bounds the memory reserved for growing.
   */
  constructor(
    readonly label: string,
    private readonly quiet = false,
    private readonly shared = false,
    private readonly maxEntries = 2 ** 28,
  ) {}

  get cellsInRow(): number {
    return this.rowCells;
  }

  push(value: number, offset: number, isBoolean: boolean): void {
    if (this.count === this.valuesOut.length) this.grow();
    this.valuesOut[this.count] = value;
    this.offsetsOut[this.count] = offset;
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
    if (this.quiet || this.failed) return;
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
    this.failed = false;
    this.issue(start, end, 'error', code, message, suggestion);
    // What the rest of the literal would say is beside the point now.
    this.failed = true;
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

  /** The entries, in an array of their own (on a SharedArrayBuffer when the builder is shared). */
  values(): Float64Array {
    return new Float64Array(this.finish(this.valuesOut, this.own?.values), 0, this.count);
  }

  offsets(): Uint32Array {
    return new Uint32Array(this.finish(this.offsetsOut, this.own?.offsets), 0, this.count);
  }

  /** The buffer of the finished entries: a copy out of the scratch, or its own trimmed to size. */
  private finish(written: Float64Array | Uint32Array, own: ArrayBuffer | SharedArrayBuffer | undefined): ArrayBuffer | SharedArrayBuffer {
    const bytes = this.count * written.BYTES_PER_ELEMENT;
    if (own === undefined) {
      const buffer = allocate(bytes, this.shared);
      new Uint8Array(buffer).set(new Uint8Array(written.buffer, written.byteOffset, bytes));
      return buffer;
    }
    // A growable SharedArrayBuffer cannot shrink; the pages past `count` were never written.
    if (own instanceof ArrayBuffer) own.resize(bytes);
    return own;
  }

  /** Room for more entries: out of the scratch into buffers of its own, or those grown in place. */
  private grow(): void {
    const capacity = Math.min(this.maxEntries, this.count + Math.max(SCRATCH, this.count >> 3));
    if (capacity <= this.count) throw new RangeError(`${this.label} has more entries than its text has characters`);
    const resize = (buffer: ArrayBuffer | SharedArrayBuffer, bytes: number) => {
      if (buffer instanceof SharedArrayBuffer) buffer.grow(bytes);
      else buffer.resize(bytes);
    };
    if (this.own === undefined) {
      this.own = { values: growable(capacity * 8, this.maxEntries * 8, this.shared), offsets: growable(capacity * 4, this.maxEntries * 4, this.shared) };
    } else {
      resize(this.own.values, capacity * 8);
      resize(this.own.offsets, capacity * 4);
    }
    const values = new Float64Array(this.own.values, 0, capacity);
    const offsets = new Uint32Array(this.own.offsets, 0, capacity);
    if (this.valuesOut === scratch.values) {
      values.set(scratch.values.subarray(0, this.count));
      offsets.set(scratch.offsets.subarray(0, this.count));
    }
    this.valuesOut = values;
    this.offsetsOut = offsets;
  }
}

function growable(bytes: number, maxBytes: number, shared: boolean): ArrayBuffer | SharedArrayBuffer {
  return shared ? new SharedArrayBuffer(bytes, { maxByteLength: maxBytes }) : new ArrayBuffer(bytes, { maxByteLength: maxBytes });
}

/** Below this, a matrix meant for sharing gets a plain buffer all the same: posting a
 * SharedArrayBuffer to another thread costs ~20 µs, copying a small array ~1 µs, and a file of
 * many small matrices would hold the receiving thread for the difference. */
const MIN_SHARED_BYTES = 32 * 1024;

/** A buffer for a finished matrix: shared when asked to be and large enough to be worth it. */
export function allocate(bytes: number, shared: boolean): ArrayBuffer | SharedArrayBuffer {
  return shared && bytes >= MIN_SHARED_BYTES ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
}

function plural(count: number, one: string, many: string): string {
  return count === 1 ? one : many;
}
