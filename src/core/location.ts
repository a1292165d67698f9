import type { Position, Range } from './types';

// Positions of a plain text file (line, character) and of a notebook (cell, and in it the
// source or one output, then line, character), compared and printed alike.

/** Negative when `a` comes before `b` in reading order: cell, then source before outputs, then line, character. */
export function comparePositions(a: Position, b: Position): number {
  return (
    (a.cell ?? 0) - (b.cell ?? 0) ||
    (a.output ?? -1) - (b.output ?? -1) ||
    a.line - b.line ||
    a.character - b.character
  );
}

export function rangeContains(outer: Range, inner: Range): boolean {
  return comparePositions(outer.start, inner.start) <= 0 && comparePositions(inner.end, outer.end) <= 0;
}

/** 1-based, as people count: `line 3`, `cell 2, line 3`, `cell 2, output 1, line 1`. */
export function positionLabel(position: Position): string {
  const line = `line ${position.line + 1}`;
  if (position.cell === undefined) return line;
  const output = position.output === undefined ? '' : `, output ${position.output + 1}`;
  return `cell ${position.cell + 1}${output}, ${line}`;
}
