import { strict as assert } from 'node:assert';
import { parseDocument } from '../../../src/core/parse/index';
import { buildSpec } from '../../../src/core/spec';
import { diagnostic, matrix, rangeOf, rows } from './helpers';

// Every reader diagnostic: its code, severity, exact range and a message naming the matrix.
describe('reader: diagnostics', () => {
  it('ragged rows, at the offending row; the matrix is listed as unreadable, not used', () => {
    const text = 'X = [[1, 2, 3],\n     [4, 5],\n     [6, 7, 8]]\nW_Q = [[1]]';
    const result = parseDocument(text);
    const d = diagnostic(result, 'ragged-row');
    assert.equal(d.severity, 'error');
    assert.deepEqual(d.range, rangeOf(text, '4, 5'));
    assert.match(d.message, /Row 2 of X has 2 entries but row 1 has 3/);
    const [problem] = result.problems;
    assert.deepEqual(problem.matrices.map((m) => m.name), ['W_Q']);
    assert.deepEqual(problem.unreadable, [{ name: 'X', role: 'X', range: rangeOf(text, text.slice(0, text.indexOf('\nW_Q'))) }]);
    // The spec waits for X instead of calling it missing.
    const spec = buildSpec(problem);
    assert.equal(spec.spec, undefined);
    assert.deepEqual(spec.diagnostics.map((x) => [x.severity, x.code, x.message]), [['info', 'waiting-for-matrix', 'This problem runs once X reads cleanly.']]);
  });

  it('an array numpy or torch printed in summary (`...,` for the rows or columns left out) is one error, never fewer numbers', () => {
    for (const text of [
      'X = array([[1., 2., 3.],\n       [4., 5., 6.],\n       ...,\n       [7., 8., 9.]])',
      'X = tensor([[1., 2., ..., 8., 9.],\n        [3., 4., ..., 6., 7.]])',
    ]) {
      const result = parseDocument(text);
      const summary = diagnostic(result, 'printed-summary');
      assert.equal(summary.severity, 'error');
      assert.deepEqual(summary.range, rangeOf(text, '...'));
      assert.match(summary.message, /^X was printed in summary/);
      assert.deepEqual(result.diagnostics.map((d) => d.code), ['printed-summary'], 'nothing else about the rest of X');
      assert.deepEqual(result.problems[0]?.matrices ?? [], [], 'X is not used');
    }
  });

  it('MATLAB `...` still continues a line', () => {
    assert.deepEqual(rows(matrix(parseDocument('W_Q = [1 2 ...\n 3; 4 5 6]').problems[0], 'W_Q')), [[1, 2, 3], [4, 5, 6]]);
  });

  it('MATLAB ragged rows too', () => {
    const text = 'W_Q = [1 2; 3 4 5]';
    assert.deepEqual(diagnostic(parseDocument(text), 'ragged-row').range, rangeOf(text, '3 4 5'));
  });

  it('a stray entry, at its exact range; the shape is kept with NaN there', () => {
    const text = 'X = [[1, x2], [3, 4]]';
    const result = parseDocument(text);
    const d = diagnostic(result, 'not-a-number');
    assert.deepEqual(d.range, rangeOf(text, 'x2'));
    assert.match(d.message, /`x2` in X is not a number/);
    assert.ok(d.suggestion);
    assert.deepEqual(rows(matrix(result.problems[0], 'X')), [[1, NaN], [3, 4]]);
  });

  it('--3 and 1e400', () => {
    const text = 'X = [[--3, 1e400]]';
    const result = parseDocument(text);
    assert.deepEqual(diagnostic(result, 'not-a-number').range, rangeOf(text, '--3'));
    const overflow = diagnostic(result, 'number-overflow');
    assert.equal(overflow.severity, 'warning');
    assert.deepEqual(overflow.range, rangeOf(text, '1e400'));
    assert.deepEqual(rows(matrix(result.problems[0], 'X')), [[NaN, Infinity]]);
  });

  it('an unclosed bracket costs one diagnostic at the bracket, not the rest of the file', () => {
    const text = 'X = [[1, 2], [3, 4]\n\nW_Q = [[1, 0], [0, 1]]\n';
    const result = parseDocument(text);
    const d = diagnostic(result, 'unclosed');
    assert.deepEqual(d.range, rangeOf(text, '['));
    assert.equal(result.diagnostics.length, 1);
    assert.deepEqual(rows(matrix(result.problems[0], 'W_Q')), [[1, 0], [0, 1]]);
  });

  it('an unclosed row stops at the next assignment', () => {
    const text = 'X = [[1, 2], [3, 4\nW_Q = [[1, 0], [0, 1]]\n';
    const result = parseDocument(text);
    assert.deepEqual(diagnostic(result, 'unclosed').range, rangeOf(text, '['));
    assert.deepEqual(rows(matrix(result.problems[0], 'W_Q')), [[1, 0], [0, 1]]);
  });

  it('a row that is not a list inside a nested list', () => {
    const text = 'X = [[1, 2], 3]';
    const d = diagnostic(parseDocument(text), 'expected-row');
    assert.deepEqual(d.range, rangeOf(text, '3'));
  });

  it('empty matrices and rows', () => {
    let text = 'X = []';
    assert.deepEqual(diagnostic(parseDocument(text), 'empty-matrix').range, rangeOf(text, '[]'));
    text = 'X = [[1], []]';
    assert.deepEqual(diagnostic(parseDocument(text), 'empty-row').range, rangeOf(text, '[]'));
  });

  it('three levels of brackets, with a suggestion', () => {
    const text = 'W_Q = [[[1, 0]], [[0, 1]]]\nX = [[1]]';
    const result = parseDocument(text);
    const d = diagnostic(result, 'too-many-dimensions');
    assert.deepEqual(d.range, rangeOf(text, '[[['));
    assert.match(d.suggestion ?? '', /W_Q1/);
    assert.deepEqual(rows(matrix(result.problems[0], 'X')), [[1]]);
  });

  it('text where numbers belong, numbers where tokens belong', () => {
    let text = 'X = ["a", "b"]';
    assert.deepEqual(diagnostic(parseDocument(text), 'not-numbers').range, rangeOf(text, text));
    text = 'tokens = [1, 2]';
    assert.deepEqual(diagnostic(parseDocument(text), 'tokens-not-strings').range, rangeOf(text, text));
    text = 'tokens = ["a", b]';
    assert.deepEqual(diagnostic(parseDocument(text), 'not-a-token').range, rangeOf(text, 'b'));
    text = 'tokens = ["a", "b]\nX = [[1]]';
    assert.deepEqual(diagnostic(parseDocument(text), 'unclosed-string').range, rangeOf(text, '"b]'));
  });

  it('LaTeX: empty entries, two entries in a cell, elided entries, unclosed environments', () => {
    let text = 'X = \\begin{bmatrix} 1 & \\\\ 2 & 3 \\end{bmatrix}';
    assert.deepEqual(diagnostic(parseDocument(text), 'empty-entry').range.start, rangeOf(text, '\\\\').start);
    text = 'X = \\begin{bmatrix} 1 2 & 3 \\end{bmatrix}';
    assert.deepEqual(diagnostic(parseDocument(text), 'missing-separator').range, rangeOf(text, '2'));
    text = 'X = \\begin{bmatrix} 1 & \\cdots & 3 \\end{bmatrix}';
    const elided = diagnostic(parseDocument(text), 'elided-entries');
    assert.deepEqual(elided.range, rangeOf(text, '\\cdots'));
    text = '$X = \\begin{bmatrix} 1 & 2 $ and more';
    assert.deepEqual(diagnostic(parseDocument(text), 'unclosed').range, rangeOf(text, '\\begin{bmatrix}'));
  });

  it('unknown directive keys, with a did-you-mean at the key', () => {
    const text = '# attention: haeds=2 casual\nX = [[1]]';
    const result = parseDocument(text);
    const unknown = result.diagnostics.filter((d) => d.code === 'unknown-option');
    assert.equal(unknown.length, 2);
    assert.deepEqual(unknown[0].range, rangeOf(text, 'haeds'));
    assert.equal(unknown[0].suggestion, 'did you mean `heads`?');
    assert.deepEqual(unknown[1].range, rangeOf(text, 'casual'));
    assert.equal(unknown[1].suggestion, 'did you mean `causal`?');
    assert.equal(result.problems.length, 1, 'the problem is still read');
  });

  it('option values out of range, at the value', () => {
    const cases: [string, string, RegExp][] = [
      ['heads=0', '0', /whole number of heads/],
      ['kv_heads=1.5', '1.5', /whole number of heads/],
      ['score=dott', 'dott', /not a valid score function/],
      ['causal=sideways', 'sideways', /causal alignment/],
      ['sigma=-1', '-1', /positive/],
      ['dtype=int8', 'int8', /dtype/],
      ['scale=abc', 'abc', /finite number/],
      ['pe=learned', 'learned', /positional encoding/],
      ['residual=maybe', 'maybe', /residual/],
    ];
    for (const [option, value, message] of cases) {
      const text = `% attention: ${option}\nX = [[1]]`;
      const d = diagnostic(parseDocument(text), 'bad-option-value');
      assert.deepEqual(d.range, rangeOf(text, value, text.slice(0, text.indexOf('=') + 1).split(value).length - 1), option);
      assert.match(d.message, message, option);
    }
    assert.equal(diagnostic(parseDocument('# attention: score=dott\n'), 'bad-option-value').suggestion, 'did you mean `dot`?');
  });

  it('at most 20 entry problems per matrix, then one note', () => {
    const text = `X = [[${Array.from({ length: 30 }, () => 'x').join(', ')}]]`;
    const result = parseDocument(text);
    assert.equal(result.diagnostics.filter((d) => d.code === 'not-a-number').length, 20);
    assert.match(diagnostic(result, 'more-issues').message, /10 more problems in X/);
  });

  it('a file with no matrices has no problems and no diagnostics', () => {
    assert.deepEqual(parseDocument('Just prose about attention.\n\nNothing else: really.'), { problems: [], diagnostics: [] });
    assert.deepEqual(parseDocument(''), { problems: [], diagnostics: [] });
  });
});
