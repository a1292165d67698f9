// examples/01-worked-example.md step by step against numpy (fixture `worked-example`): the
// engine's numbers, the tables printed in the note, and the note read through the file reader.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAttention } from '../../../src/core/engine';
import { parseDocument } from '../../../src/core/parse';
import { buildSpec } from '../../../src/core/spec';
import type { Diagnostic } from '../../../src/core/types';
import { assertMatrixClose, type JsonMatrix, loadFixture, matrix, specOf, sumOf } from './fixtures';

const ROOT = join(__dirname, '..', '..', '..');
const NOTE = readFileSync(join(ROOT, 'examples', '01-worked-example.md'), 'utf8');
const fixture = loadFixture('worked-example');
const want = fixture.expected.heads[0] as Record<string, JsonMatrix>;
const TOL = fixture.tolerance;

describe('worked example (examples/01-worked-example.md)', () => {
  const result = runAttention(specOf(fixture));
  const head = result.heads[0];

  it('step 1: Q = X W_Q, K = X W_K, V = X W_V', () => {
    for (const key of ['Q', 'K', 'V'] as const) assertMatrixClose(head[key], want[key], TOL, key);
  });
  it('step 2: scores S = Q Kᵀ', () => assertMatrixClose(head.scores, want.scores, TOL, 'scores'));
  it('step 3: scaled by 1/√2', () => assertMatrixClose(head.scaled, want.scaled, TOL, 'scaled'));
  it('step 4: softmax weights, every row summing to 1', () => {
    assertMatrixClose(head.weights, want.weights, TOL, 'weights');
    for (let i = 0; i < 3; i++) {
      const sum = sumOf(head.weights, i * 3, i * 3 + 3);
      assert.ok(Math.abs(sum - 1) <= 1e-15, `row ${i + 1} sums to ${sum}`);
    }
  });
  it('step 5: output O = A V', () => assertMatrixClose(result.output, fixture.expected.output as JsonMatrix, TOL, 'output'));

  it('prints tables that agree with numpy to their 4 decimals', () => {
    const tables = markdownTables(NOTE);
    const expected: Record<string, JsonMatrix> = {
      Q: want.Q, K: want.K, V: want.V, S: want.scores, 'S / √2': want.scaled, A: want.weights,
      O: fixture.expected.output as JsonMatrix,
    };
    assert.deepEqual(Object.keys(tables).sort(), Object.keys(expected).sort());
    for (const [name, rows] of Object.entries(tables)) assertMatrixClose(matrix(rows), expected[name], 5e-5, `table ${name}`);
  });

  it('reads, through parseDocument, as one problem with the fixture’s inputs', () => {
    const { problems, diagnostics } = parseDocument(NOTE);
    assert.deepEqual(errors(diagnostics), []);
    assert.equal(problems.length, 1);
    const [problem] = problems;
    assert.equal(problem.name, 'Worked example');
    assert.deepEqual(problem.tokens, ['I', 'love', 'cats']);
    const byRole = new Map(problem.matrices.map((m) => [m.role, m.value]));
    assert.deepEqual([...byRole.keys()].sort(), ['WK', 'WQ', 'WV', 'X']);
    const inputs = specOf(fixture);
    assert.deepEqual(byRole.get('X'), inputs.X);
    for (const role of ['WQ', 'WK', 'WV'] as const) assert.deepEqual(byRole.get(role), inputs[role]?.[0]);
  });

  it('gives the fixture’s numbers when read through parseDocument and buildSpec', () => {
    const built = buildSpec(parseDocument(NOTE).problems[0]);
    assert.deepEqual(errors(built.diagnostics), []);
    assert.ok(built.spec);
    const fromFile = runAttention(built.spec);
    for (const key of ['scores', 'scaled', 'weights', 'output'] as const) {
      assertMatrixClose(fromFile.heads[0][key], want[key], TOL, key);
    }
    assertMatrixClose(fromFile.output, fixture.expected.output as JsonMatrix, TOL, 'final output');
  });
});

function errors(diagnostics: Diagnostic[]): string[] {
  return diagnostics.filter((d) => d.severity === 'error').map((d) => d.message);
}

/** The note's result tables: `| NAME | … |` header, then `| **token** | numbers |` rows. */
function markdownTables(text: string): Record<string, number[][]> {
  const tables: Record<string, number[][]> = {};
  let current: number[][] | undefined;
  for (const line of text.split('\n')) {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (!line.startsWith('|')) current = undefined;
    else if (cells[0].startsWith('**')) current?.push(cells.slice(1).map(Number));
    else if (cells[0] !== '' && !cells[0].startsWith('---')) tables[cells[0]] = current = [];
  }
  return tables;
}
