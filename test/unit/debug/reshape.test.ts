// Flat arrays from a paused program (JavaScript's flat typed arrays, flat lists) read in the shape
// the problem fixes, row-major, with a note; token labels read from a list of strings.
import { strict as assert } from 'node:assert';
import { labelsExpression } from '../../../src/core/debug/expressions';
import { decodeLabels } from '../../../src/core/debug/payload';
import { labelsOfName, problemOfArrays } from '../../../src/core/debug/problem';
import { reshapeFlat, shapeChoices, type ShapedArray } from '../../../src/core/debug/reshape';
import { buildSpec } from '../../../src/core/spec';
import type { Role } from '../../../src/core/types';

const counting = (length: number) => Float64Array.from({ length }, (_, i) => i + 1);
const shaped = (name: string, role: Role, rows: number, cols: number): ShapedArray => ({ name, role, matrix: { rows, cols, data: counting(rows * cols) }, flat: false });
const flat = (name: string, role: Role, length: number): ShapedArray => ({ name, role, matrix: { rows: 1, cols: length, data: counting(length) }, flat: true });
const shapes = (arrays: ShapedArray[]) => arrays.map(({ name, matrix }) => `${name} ${matrix.rows}×${matrix.cols}`);

describe('debug reader: flat arrays and token labels', () => {
  it('reads a flat W_V as X\'s columns × the rest, row-major, and says so', () => {
    const { arrays, notes, undecided } = reshapeFlat([shaped('X', 'X', 3, 4), shaped('W_Q', 'WQ', 4, 2), shaped('W_K', 'WK', 4, 2), flat('W_V', 'WV', 16)]);
    assert.deepEqual(shapes(arrays), ['X 3×4', 'W_Q 4×2', 'W_K 4×2', 'W_V 4×4']);
    assert.deepEqual(notes, ["W_V: 16 values read as 4×4 (row-major), from X's 4 columns"]);
    assert.deepEqual(undecided, []);
    // Row-major: row r of the 4×4 is values 4r+1 … 4r+4, as numpy's reshape(4, 4) reads them.
    assert.deepEqual(Array.from(arrays[3].matrix.data.subarray(4, 8)), [5, 6, 7, 8]);
  });

  it('fixes one flat array from another: X from W_Q\'s rows, then the projections from X', () => {
    const { arrays, notes } = reshapeFlat([flat('X', 'X', 12), shaped('W_Q', 'WQ', 4, 2), flat('W_K', 'WK', 8), flat('W_O', 'WO', 8), flat('W_V', 'WV', 8)]);
    assert.deepEqual(shapes(arrays), ['X 3×4', 'W_Q 4×2', 'W_K 4×2', 'W_O 2×4', 'W_V 4×2']);
    assert.deepEqual(notes, [
      "X: 12 values read as 3×4 (row-major), from W_Q's 4 rows",
      "W_K: 8 values read as 4×2 (row-major), from X's 4 columns",
      "W_V: 8 values read as 4×2 (row-major), from X's 4 columns",
      "W_O: 8 values read as 2×4 (row-major), from W_V's 2 columns",
    ]);
  });

  it('W_O of per-head value projections takes their widths together', () => {
    const { arrays, notes } = reshapeFlat([shaped('X', 'X', 2, 4), { ...shaped('W_V1', 'WV', 4, 2), head: 0 }, { ...shaped('W_V2', 'WV', 4, 2), head: 1 }, flat('W_O', 'WO', 16)]);
    assert.equal(shapes(arrays)[3], 'W_O 4×4');
    assert.deepEqual(notes, ["W_O: 16 values read as 4×4 (row-major), from the 2 heads' W_V columns (4)"]);
  });

  it('leaves undecided what nothing fixes, a length that does not divide, and vectors of other roles', () => {
    const alone = reshapeFlat([flat('W_V', 'WV', 16), flat('padding', 'padding', 3)]);
    assert.deepEqual(alone.undecided.map((a) => a.name), ['W_V']);
    assert.deepEqual(shapes(alone.arrays), ['W_V 1×16', 'padding 1×3'], 'a padding row stays a row');
    const odd = reshapeFlat([shaped('X', 'X', 3, 4), flat('W_V', 'WV', 10)]);
    assert.deepEqual(odd.undecided.map((a) => a.name), ['W_V']);
    assert.deepEqual(odd.notes, []);
  });

  it('offers every rows×columns a length allows', () => {
    assert.deepEqual(shapeChoices(12).map(({ rows, cols }) => `${rows}×${cols}`), ['1×12', '2×6', '3×4', '4×3', '6×2', '12×1']);
  });

  it('a reshaped problem builds where the flat one failed with "W_V has 1 row"', () => {
    const arrays = [shaped('X', 'X', 3, 4), shaped('W_Q', 'WQ', 4, 2), shaped('W_K', 'WK', 4, 2), flat('W_V', 'WV', 16)];
    const asRead = (list: ShapedArray[]) => problemOfArrays('forward', list.map((a) => ({ name: a.name, role: a.role, read: { matrix: a.matrix, boolean: false } })), { tokens: ['zebra', 'quokka', 'narwhal'] });
    assert.match(buildSpec(asRead(arrays)).diagnostics.find((d) => d.severity === 'error')?.message ?? '', /W_V has 1 row/);
    const { spec, diagnostics } = buildSpec(asRead(reshapeFlat(arrays).arrays));
    assert.deepEqual(diagnostics.filter((d) => d.severity === 'error'), []);
    assert.deepEqual(spec?.tokens, ['zebra', 'quokka', 'narwhal']);
  });

  it('token labels: named as in files, read as JSON strings, anything else refused', () => {
    assert.deepEqual(['tokens', 'key_tokens', 'Tokens', 'x'].map(labelsOfName), ['tokens', 'keyTokens', 'tokens', undefined]);
    assert.match(labelsExpression('javascript', 'tokens'), /^JSON\.stringify\(/);
    assert.match(labelsExpression('python', 'tokens'), /^__import__\('json'\)\.dumps\(/);
    assert.throws(() => labelsExpression('python', 'os.system("x")'), /not a variable name/);
    // js-debug quotes the string it returns; debugpy (rawString) does not.
    assert.deepEqual(decodeLabels(JSON.stringify('["zebra","quokka","narwhal"]'), 'tokens'), ['zebra', 'quokka', 'narwhal']);
    assert.deepEqual(decodeLabels('["<s>", "a"]', 'tokens'), ['<s>', 'a']);
    assert.equal(decodeLabels('null', 'tokens'), 'tokens is not a list of strings (token labels)');
    assert.equal(decodeLabels('[1, 2]', 'tokens'), 'tokens is not a list of strings (token labels)');
  });
});

describe('debug reader: projections of heads × rows × columns, as in tensor files', () => {
  it('a 3-D W_Q/W_K/W_V is one projection per head; a 3-D W_O is its heads\' rows stacked', () => {
    const stacked = (heads: number, rows: number, cols: number) => ({ matrix: { rows: heads * rows, cols, data: counting(heads * rows * cols) }, boolean: false, heads });
    const problem = problemOfArrays('forward', [
      { name: 'x', role: 'X', read: { matrix: { rows: 3, cols: 4, data: counting(12) }, boolean: false } },
      { name: 'w_q', role: 'WQ', read: stacked(2, 4, 2) },
      { name: 'w_k', role: 'WK', read: stacked(2, 4, 2) },
      { name: 'w_v', role: 'WV', read: stacked(2, 4, 2) },
      { name: 'w_o', role: 'WO', read: stacked(2, 2, 4) },
    ]);
    assert.deepEqual(
      problem.matrices.map((m) => `${m.name} ${m.role}${m.head === undefined ? '' : ` head ${m.head}`} ${m.value.rows}×${m.value.cols}`),
      ['x X 3×4', 'w_q[0] WQ head 0 4×2', 'w_q[1] WQ head 1 4×2', 'w_k[0] WK head 0 4×2', 'w_k[1] WK head 1 4×2', 'w_v[0] WV head 0 4×2', 'w_v[1] WV head 1 4×2', 'w_o WO 4×4'],
    );
    // Head 1's W_Q is the second block of 8 values, row-major.
    assert.deepEqual(Array.from(problem.matrices[2].value.data), [9, 10, 11, 12, 13, 14, 15, 16]);
    const { spec, diagnostics } = buildSpec(problem);
    assert.deepEqual(diagnostics.filter((d) => d.severity === 'error'), []);
    assert.equal(spec?.options.heads, 2);
  });
});
