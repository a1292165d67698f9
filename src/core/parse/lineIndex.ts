import type { Position, Range } from '../types';

/**
 * Offsets ↔ 0-based line/character positions of one text. Built once per read (one pass over
 * the text); each lookup is a binary search, so mapping a million cell offsets stays cheap.
 */
export class LineIndex {
  private readonly lineStarts: number[];

  constructor(private readonly text: string) {
    const starts = [0];
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
    this.lineStarts = starts;
  }

  get lineCount(): number {
    return this.lineStarts.length;
  }

  /** Position of a text offset; offsets outside the text are clamped to it. */
  position(offset: number): Position {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.lineStarts[mid] <= clamped) low = mid;
      else high = mid - 1;
    }
    return { line: low, character: clamped - this.lineStarts[low] };
  }

  /** Offset of a position; characters past the end of a line are clamped to the line's end. */
  offset(position: Position): number {
    const line = Math.max(0, Math.min(position.line, this.lineStarts.length - 1));
    const start = this.lineStarts[line];
    const next = line + 1 < this.lineStarts.length ? this.lineStarts[line + 1] - 1 : this.text.length;
    return Math.max(start, Math.min(start + Math.max(0, position.character), next));
  }

  range(start: number, end: number): Range {
    return { start: this.position(start), end: this.position(end) };
  }
}

/** Whether each array of cell offsets is in text order, found once per array. */
const ascending = new WeakMap<Uint32Array, boolean>();

function isAscending(cellOffsets: Uint32Array): boolean {
  let known = ascending.get(cellOffsets);
  if (known === undefined) {
    known = true;
    for (let k = 1; k < cellOffsets.length && known; k++) known = cellOffsets[k - 1] < cellOffsets[k];
    ascending.set(cellOffsets, known);
  }
  return known;
}

/**
 * The cell of a matrix that a text offset falls in (hover maps a position to a cell): the cell
 * whose entry starts last at or before the offset, or -1 before every entry. A binary search
 * when the offsets are in text order (known after one pass per matrix, so hovering over a matrix
 * of millions of numbers stays instant); a linear scan otherwise, as a transposed literal
 * (`[…]'`, `np.array(…).T`) lists its offsets out of text order.
 */
export function cellAtOffset(cellOffsets: Uint32Array, offset: number): number {
  if (isAscending(cellOffsets)) {
    let low = 0;
    let high = cellOffsets.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (cellOffsets[mid] <= offset) low = mid + 1;
      else high = mid;
    }
    return low - 1;
  }
  let best = -1;
  let bestOffset = -1;
  for (let k = 0; k < cellOffsets.length; k++) {
    const start = cellOffsets[k];
    if (start <= offset && start > bestOffset) {
      best = k;
      bestOffset = start;
    }
  }
  return best;
}
