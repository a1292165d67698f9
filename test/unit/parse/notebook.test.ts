import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { runAttention } from '../../../src/core/engine/index';
import { parseDocument } from '../../../src/core/parse/index';
import { parseCells, parseNotebook, readNotebook, type NotebookCell } from '../../../src/core/parse/notebook';
import { buildSpec } from '../../../src/core/spec';
import type { Matrix, ParseResult, Position, Range } from '../../../src/core/types';
import { diagnostic, matrix, rangeOf, rows } from './helpers';

// The notebook reader against notebooks whose outputs numpy and torch printed
// (scripts/gen_notebooks.py) and PyTorch's answer computed from the same arrays.
const root = join(__dirname, '..', '..', '..');
const fixtures = join(root, 'test', 'fixtures', 'notebooks');

interface Reference {
  matrices: Record<string, number[][]>;
  output: number[][];
}

function fixture(name: string): { read: ParseResult; reference: Reference; json: string } {
  const json = readFileSync(name === 'example' ? join(root, 'examples', '12-notebook.ipynb') : join(fixtures, `${name}.ipynb`), 'utf8');
  const reference = JSON.parse(readFileSync(join(fixtures, `${name}.expected.json`), 'utf8')) as Reference;
  return { read: parseNotebook(json), reference, json };
}

function matrixRows(m: Matrix): number[][] {
  return Array.from({ length: m.rows }, (_, i) => Array.from(m.data.slice(i * m.cols, (i + 1) * m.cols)));
}

function assertClose(actual: number[][], expected: number[][], tolerance = 1e-12): void {
  assert.equal(actual.length, expected.length);
  actual.forEach((row, i) =>
    row.forEach((x, j) => assert.ok(Math.abs(x - expected[i][j]) <= tolerance * Math.max(1, Math.abs(expected[i][j])), `[${i}][${j}]: ${x} vs ${expected[i][j]}`)),
  );
}

/** Runs the only problem of a read and returns its output. */
function outputOf(read: ParseResult): number[][] {
  assert.equal(read.problems.length, 1, JSON.stringify(read.problems.map((p) => p.matrices.map((m) => m.name))));
  const { spec, diagnostics } = buildSpec(read.problems[0]);
  assert.ok(spec, JSON.stringify(diagnostics));
  return matrixRows(runAttention(spec).output);
}

function inCell(cell: number, range: Range, output?: number): Range {
  const at = (p: Position): Position => (output === undefined ? { ...p, cell } : { ...p, cell, output });
  return { start: at(range.start), end: at(range.end) };
}

const code = (source: string, outputs: NotebookCell['outputs'] = []): NotebookCell => ({ kind: 'code', source, outputs });
const markdown = (source: string): NotebookCell => ({ kind: 'markdown', source, outputs: [] });

describe('notebook reader', () => {
  it('one problem over four cells (code, LaTeX in Markdown, a printed array), in notebook order, as PyTorch computes it', () => {
    const { read, reference } = fixture('spanning');
    assert.deepEqual(read.diagnostics, []);
    const [problem] = read.problems;
    assert.deepEqual(
      problem.matrices.map((m) => [m.name, m.range.start.cell, m.range.start.output]),
      [['X', 1, undefined], ['W_K', 2, undefined], ['W_Q', 3, undefined], ['W_V', 4, 0]],
    );
    assert.deepEqual(problem.range.start, { line: 2, character: 5, cell: 0 }, 'the directive in the Markdown cell opens it');
    assert.equal(problem.range.end.cell, 4);
    for (const [role, name] of [['X', 'X'], ['W_K', 'W_K'], ['W_Q', 'W_Q'], ['W_V', 'W_V']]) assert.deepEqual(rows(matrix(problem, name)), reference.matrices[role]);
    assertClose(outputOf(read), reference.output);
  });

  it("reads numpy's and torch's printed arrays: wrapped rows and a dtype line, print() of both, a name printed before the array", () => {
    const { read, reference } = fixture('outputs');
    const [problem] = read.problems;
    const byRole = { X: 'X', W_Q: 'W_Q', W_K: 'W_K', W_V: 'W_V', mask: 'mask' } as const;
    for (const [role, name] of Object.entries(byRole)) {
      const def = matrix(problem, name);
      assert.notEqual(def.range.start.output, undefined, `${name} comes from an output`);
      assert.deepEqual(rows(def).map((row) => row.map(Number)), reference.matrices[role], name);
    }
    assert.equal(matrix(problem, 'mask').boolean, true);
    assertClose(outputOf({ ...read, problems: [problem] }), reference.output);
  });

  it('names a printed array by print(NAME) or the last line in the source; the range is the printed text', () => {
    const { read, json } = fixture('outputs');
    const cells = (readNotebook(json) as { cells: NotebookCell[] }).cells;
    const problem = read.problems[0];
    // X: the execute_result of a cell ending in `X`; its repr's `dtype=float32)` line included.
    const x = matrix(problem, 'X');
    assert.deepEqual(x.nameRange, inCell(1, rangeOf(cells[1].source, 'X', 1)));
    const repr = cells[1].outputs[0].text;
    assert.deepEqual(x.range, inCell(1, rangeOf(repr, repr.slice(0, repr.lastIndexOf(']]') + 2)), 0));
    // W_K and W_V: the first and second print() of the cell.
    assert.deepEqual(matrix(problem, 'W_K').nameRange, inCell(3, rangeOf(cells[3].source, 'W_K', 1)));
    assert.deepEqual(matrix(problem, 'W_V').nameRange, inCell(3, rangeOf(cells[3].source, 'W_V', 1)));
    // mask: named in the output itself (`print("mask =", …)`).
    assert.deepEqual(matrix(problem, 'mask').nameRange, inCell(4, rangeOf(cells[4].outputs[0].text, 'mask'), 0));
    // Hover offsets are offsets in the output's own text.
    const w = matrix(problem, 'W_V');
    assert.equal(cells[3].outputs[0].text.slice(w.cellOffsets[0], w.cellOffsets[0] + 3), '1.,');
  });

  it('a summarized print ("...") is not read: a warning on the name in the source', () => {
    const { read, json } = fixture('outputs');
    const cells = (readNotebook(json) as { cells: NotebookCell[] }).cells;
    const d = diagnostic(read, 'printed-summary');
    assert.equal(d.severity, 'warning');
    assert.deepEqual(d.range, inCell(5, rangeOf(cells[5].source, 'E_long', 1)));
    assert.ok(read.problems.every((p) => p.matrices.every((m) => m.name !== 'E_long')));
  });

  it('the example notebook reads as one problem whose output is what PyTorch and the notebook printed', () => {
    const { read, reference, json } = fixture('example');
    assert.deepEqual(read.diagnostics, []);
    assertClose(outputOf(read), reference.output);
    // The notebook's own last cell printed numpy's answer; the reader's numbers agree with it.
    const printed = (readNotebook(json) as { cells: NotebookCell[] }).cells.at(-1)!.outputs[0].text;
    assertClose(outputOf(read), rows(parseDocument(`X = ${printed}`).problems[0].matrices[0]), 1e-7);
  });

  it('source as one string or as fragments cut anywhere reads the same', () => {
    const { json } = fixture('spanning');
    const notebook = JSON.parse(json) as { cells: { source: string[] }[] };
    const whole = parseNotebook(json);
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 8 }), (cuts) => {
        const cells = notebook.cells.map((cell) => {
          const text = cell.source.join('');
          const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
          const fragments = [0, ...at].map((start, k) => text.slice(start, [...at, text.length][k]));
          return { ...cell, source: fragments };
        });
        assert.deepEqual(parseNotebook(JSON.stringify({ ...notebook, cells })), whole);
        assert.deepEqual(parseNotebook(JSON.stringify({ ...notebook, cells: notebook.cells.map((c) => ({ ...c, source: c.source.join('') })) })), whole);
      }),
      { numRuns: 50 },
    );
  });

  it('one cell reads as the text reader reads the same text, positions in cell 0', () => {
    const dir = join(root, 'examples');
    for (const file of readdirSync(dir).filter((f) => /\.(md|py)$/.test(f))) {
      const text = readFileSync(join(dir, file), 'utf8');
      const cell = parseCells([code(text)]);
      const plain = parseDocument(text);
      const strip = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === 'cell' ? undefined : v instanceof Uint32Array ? Array.from(v) : v)));
      assert.deepEqual(strip(cell), strip(plain), file);
      assert.ok(cell.problems.every((p) => p.range.start.cell === 0), file);
    }
  });

  it('CRLF line ends: lines and characters as the editor counts them', () => {
    const source = 'X = [[1, 2],\r\n     [3, 4]]\r\nW_Q = [[1, 0], [0, 1]]\r\n';
    const read = parseCells([markdown('# title'), code(source)]);
    const w = matrix(read.problems[0], 'W_Q');
    assert.deepEqual(w.nameRange, { start: { line: 2, character: 0, cell: 1 }, end: { line: 2, character: 3, cell: 1 } });
    assert.deepEqual(rows(matrix(read.problems[0], 'X')), [[1, 2], [3, 4]]);
    assert.equal(source.slice(w.cellOffsets[3], w.cellOffsets[3] + 1), '1');
  });

  it('an error is located at its cell and line', () => {
    const source = '# the projections\nW_Q = [[1, 2], [3]]';
    const read = parseCells([code('X = [[1, 2, 3, 4],\n     [5, 6, 7, 8]]'), markdown('text'), code(source)]);
    const d = diagnostic(read, 'ragged-row');
    assert.deepEqual(d.range, inCell(2, diagnostic(parseDocument(source), 'ragged-row').range));
    assert.equal(d.range.start.line, 1);
  });

  it('a shape mismatch between cells is reported at the later cell', () => {
    const read = parseCells([code('X = [[1, 2, 3]]'), code('W_Q = [[1], [2]]\nW_K = [[1], [2], [3]]\nW_V = [[1], [2], [3]]')]);
    const { diagnostics } = buildSpec(read.problems[0]);
    const mismatch = diagnostics.find((d) => d.severity === 'error');
    assert.ok(mismatch, JSON.stringify(diagnostics));
    assert.equal(mismatch.range.start.cell, 1);
    assert.equal(mismatch.range.start.line, 0);
  });

  it('an unclosed literal stops at the end of its cell', () => {
    // Read as one text, the next cell's first line would close X as a third row.
    const read = parseCells([code('X = [[1, 2],\n     [3, 4]'), code('[5, 6]]\nW_Q = [[1, 0], [0, 1]]')]);
    assert.equal(diagnostic(read, 'unclosed').range.start.cell, 0);
    assert.equal(matrix(read.problems[0], 'W_Q').nameRange.start.cell, 1);
  });

  it('no cell reads into the next, whatever the two hold (fast-check)', () => {
    const piece = fc.constantFrom('X = [[1, 2],', 'W_Q = [1 2;', '[3, 4]', ']]', ']', '5 6]', '\\begin{bmatrix} 1 & 2', '\\end{bmatrix}', '$$W_K = ', 'tokens = ["a",', '"c"]', '{"W_V": [[1]', '}', 'attention: heads=2', '\n', '\n\n', ' ', '=', ':', '# ', 'np.array(', ').T');
    const text = fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join(''));
    fc.assert(
      fc.property(text, text, (first, second) => {
        const read = parseCells([code(first), code(second)]);
        const matrices = read.problems.flatMap((p) => p.matrices);
        for (const m of matrices) assert.equal(m.range.start.cell, m.range.end.cell, `${m.name} straddles cells`);
        // What the second cell defines and what is wrong in it do not depend on the first.
        const known = (result: ParseResult, cell: number) =>
          result.problems.flatMap((p) => p.matrices).filter((m) => m.role !== undefined && m.range.start.cell === cell).map((m) => [m.name, rows(m), m.range.start.line, m.range.start.character]);
        const alone = parseCells([code(second)]);
        assert.deepEqual(known(read, 1), known(alone, 0));
        const located = (result: ParseResult, cell: number) =>
          result.diagnostics.filter((d) => d.range.start.cell === cell).map((d) => [d.code, d.range.start.line, d.range.start.character]);
        assert.deepEqual(located(read, 1), located(alone, 0));
      }),
      { numRuns: 300 },
    );
  });

  it('a name defined again in a later cell starts a new problem', () => {
    const read = parseCells([code('X = [[1, 0]]\nW_Q = [[1], [0]]'), code('X = [[0, 1]]')]);
    assert.deepEqual(read.problems.map((p) => p.matrices.map((m) => `${m.name}@${m.range.start.cell}`)), [['X@0', 'W_Q@0'], ['X@1']]);
  });

  it('an output that echoes a literal of its own cell is not read twice', () => {
    const read = parseCells([code('import numpy as np\nX = np.array([[1., 2.]])\nX', [{ kind: 'result', text: 'array([[1., 2.]])' }])]);
    assert.deepEqual(read.problems.map((p) => p.matrices.map((m) => [m.name, m.range.start.output])), [[['X', undefined]]]);
  });

  it('prints without a matching print(NAME) for each are not guessed', () => {
    const read = parseCells([code('print(X)\nprint(X @ W)', [{ kind: 'stream', text: '[[1. 2.]]\n[[3.]]\n' }])]);
    assert.deepEqual(read.problems, []);
  });

  it('raw cells are not read but keep their index', () => {
    const json = JSON.stringify({ cells: [{ cell_type: 'raw', source: 'X = [[9]]' }, { cell_type: 'code', source: ['X = [[1, 2]]\n', 'W_Q = [[1], [2]]'], outputs: [] }], nbformat: 4 });
    const read = parseNotebook(json);
    assert.deepEqual(read.problems.map((p) => p.matrices.map((m) => `${m.name}@${m.range.start.cell}:${m.range.start.line}`)), [['X@1:0', 'W_Q@1:1']]);
  });

  it('any JSON, and notebooks whose cells hold anything, read without an exception (fast-check)', () => {
    const anyCell = fc.record({ cell_type: fc.constantFrom('code', 'markdown', 'raw', 7), source: fc.oneof(fc.string(), fc.array(fc.string()), fc.jsonValue()), outputs: fc.jsonValue() }, { requiredKeys: [] });
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.array(fc.oneof(anyCell, fc.jsonValue())).map((cells) => JSON.stringify({ cells }))), (json) => {
        const read = parseNotebook(json);
        assert.ok(Array.isArray(read.problems) && Array.isArray(read.diagnostics));
      }),
      { numRuns: 300 },
    );
  });

  it('not a notebook: a clear error where the JSON breaks, or for a missing cells list', () => {
    const broken = parseNotebook('{"cells": [\n  {"cell_type": "code",, }]}');
    assert.equal(broken.diagnostics[0].code, 'notebook-json');
    assert.equal(broken.diagnostics[0].range.start.line, 1);
    assert.equal(broken.diagnostics[0].range.start.cell, undefined);
    assert.equal(parseNotebook('{"nbformat": 4}').diagnostics[0].code, 'notebook-no-cells');
    assert.equal(parseNotebook('').diagnostics[0].code, 'notebook-json');
  });
});
