import { strict as assert } from 'node:assert';
import { parseDocument } from '../../../src/core/parse/index';
import type { Diagnostic, MatrixDef, ParseResult, Problem, Range } from '../../../src/core/types';

/** The 0-based range of the `occurrence`-th `needle` in `text` (what a test expects a range to be). */
export function rangeOf(text: string, needle: string, occurrence = 0): Range {
  let at = -1;
  for (let k = 0; k <= occurrence; k++) {
    at = text.indexOf(needle, at + 1);
    assert.ok(at !== -1, `${JSON.stringify(needle)} (#${occurrence}) not in the text`);
  }
  return { start: positionAt(text, at), end: positionAt(text, at + needle.length) };
}

export function positionAt(text: string, offset: number): { line: number; character: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length - 1;
  return { line, character: offset - (before.lastIndexOf('\n') + 1) };
}

/** Rows of a matrix as plain arrays, for deepEqual. */
export function rows(def: MatrixDef): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < def.value.rows; i++) out.push(Array.from(def.value.data.slice(i * def.value.cols, (i + 1) * def.value.cols)));
  return out;
}

export function matrix(problem: Problem, name: string): MatrixDef {
  const def = problem.matrices.find((m) => m.name === name);
  assert.ok(def, `no matrix ${name} in problem ${problem.index}; have ${problem.matrices.map((m) => m.name).join(', ')}`);
  return def;
}

/** Reads text that must hold exactly one problem and no diagnostics. */
export function readOne(text: string): Problem {
  const result = parseDocument(text);
  assert.deepEqual(result.diagnostics, [], `unexpected diagnostics: ${JSON.stringify(result.diagnostics)}`);
  assert.equal(result.problems.length, 1, `expected one problem, got ${result.problems.length}`);
  return result.problems[0];
}

/** The only diagnostic of a read with the given code. */
export function diagnostic(result: ParseResult | { diagnostics: Diagnostic[] }, code: string): Diagnostic {
  const found = result.diagnostics.filter((d) => d.code === code);
  assert.equal(found.length, 1, `expected one ${code}, got ${JSON.stringify(result.diagnostics)}`);
  return found[0];
}
