import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseDocument } from '../../../src/core/parse/index';
import type { ParseResult, Range } from '../../../src/core/types';

// The reader never throws, never hangs, and every range it returns lies inside the text:
// random text, random text from matrix-ish characters, and valid documents mutated at random.

const examples = join(__dirname, '..', '..', '..', 'examples', 'notations');
const seeds = [
  ...readdirSync(examples).map((file) => readFileSync(join(examples, file), 'utf8')),
  'X = [[1, 2], [3, 4]]\nW_Q = [1 2; 3 4]\n# attention: heads=2 causal=bottom-right name="x"\ntokens = ["a", "b"]\n',
  '$W^{Q}_{(2)} = \\begin{pmatrix} -\\infty & \\frac{1}{2} \\\\ 1e-3 & 4 \\end{pmatrix}$ W_Q[0] := [[true, false]]',
  '{"X": [[1, "NaN"]], "attention": "kv_heads=1", "key_tokens": {\'a\'}}',
];

/** Characters that matter to the reader, so random text hits its branches often. */
const TRICKY = [...'[]{}()=:;,&\\$"\'-+.eE0123456789 \n\t%#/*<>!_^|…∞−', '.T', ').T', "]'", 'inf', 'nan', 'true', '\\begin{bmatrix}', '\\end{bmatrix}', '\\\\', 'attention:', 'X = ', 'W_Q = ', 'np.array(', '-->', '...'];

function assertInside(all: string[], range: Range, what: string): void {
  const inside = (p: Range['start']): boolean => p.line >= 0 && p.line < all.length && p.character >= 0 && p.character <= all[p.line].length;
  assert.ok(inside(range.start) && inside(range.end), `${what} ${JSON.stringify(range)} outside the text`);
  const ordered = range.start.line < range.end.line || (range.start.line === range.end.line && range.start.character <= range.end.character);
  assert.ok(ordered, `${what} ${JSON.stringify(range)} ends before it starts`);
}

function checkResult(text: string, result: ParseResult): void {
  const all = text.split('\n');
  for (const d of result.diagnostics) {
    assertInside(all, d.range, `diagnostic ${d.code}`);
    assert.ok(d.message.length > 0);
  }
  result.problems.forEach((problem, index) => {
    assert.equal(problem.index, index);
    assertInside(all, problem.range, 'problem');
    if (problem.directiveRange) assertInside(all, problem.directiveRange, 'directive');
    for (const u of problem.unreadable ?? []) assertInside(all, u.range, `unreadable ${u.name}`);
    for (const m of problem.matrices) {
      assertInside(all, m.nameRange, `name of ${m.name}`);
      assertInside(all, m.range, `range of ${m.name}`);
      assert.equal(m.value.data.length, m.value.rows * m.value.cols, m.name);
      assert.ok(m.value.rows > 0 && m.value.cols > 0, m.name);
      assert.equal(m.cellOffsets.length, m.value.data.length, m.name);
      const offsets = Array.from(m.cellOffsets).sort((a, b) => a - b);
      for (let k = 1; k < offsets.length; k++) assert.ok(offsets[k] > offsets[k - 1], `${m.name}: two cells at one offset`);
      assert.ok(offsets.length === 0 || offsets[offsets.length - 1] < text.length);
    }
  });
}

const property = (text: string): void => checkResult(text, parseDocument(text));

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 12 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), piece: fc.constantFrom(...TRICKY) }),
  fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 40 }) }),
);

function mutate(text: string, edits: { kind: 'delete' | 'insert' | 'duplicate'; at: number; length?: number; piece?: string }[]): string {
  let out = text;
  for (const edit of edits) {
    const at = out.length === 0 ? 0 : edit.at % (out.length + 1);
    if (edit.kind === 'delete') out = out.slice(0, at) + out.slice(at + (edit.length ?? 1));
    else if (edit.kind === 'insert') out = out.slice(0, at) + edit.piece + out.slice(at);
    else out = out.slice(0, at) + out.slice(at, at + (edit.length ?? 1)) + out.slice(at);
  }
  return out;
}

describe('reader: fuzz (fast-check)', function () {
  this.timeout(120000); // thousands of cases: generous on a shared, busy machine
  it('random unicode text: no throw, every range inside the text (2,500 cases)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), property), { numRuns: 2500 });
  });

  it('random text from the characters the reader cares about (3,000 cases)', () => {
    const text = fc.array(fc.constantFrom(...TRICKY), { maxLength: 120 }).map((pieces) => pieces.join(''));
    fc.assert(fc.property(text, property), { numRuns: 3000 });
  });

  it('valid documents with random edits (5,000 cases)', () => {
    const mutated = fc.tuple(fc.constantFrom(...seeds), fc.array(mutation, { minLength: 1, maxLength: 8 })).map(([seed, edits]) => mutate(seed, edits));
    fc.assert(fc.property(mutated, property), { numRuns: 5000 });
  });

  it('pathological inputs finish (each ~300 kB) and keep every range valid', () => {
    const inputs = [
      'a=['.repeat(100_000),
      'X = [[1,'.repeat(50_000),
      '[[[['.repeat(25_000),
      'X = \\begin{bmatrix}'.repeat(20_000),
      '# attention: '.repeat(25_000),
      'tokens = ["'.repeat(30_000),
      `X = [${'1 '.repeat(150_000)}`,
      Array.from({ length: 300_000 }, (_, i) => String.fromCharCode((i * 7919) % 65536)).join(''),
    ];
    for (const text of inputs) property(text);
  });
});
