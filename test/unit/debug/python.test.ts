import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describeExpression, readExpression } from '../../../src/core/debug/expressions';
import { decodeArray, joinReads, parseDescriptions, unreadableReason, type ArrayRead } from '../../../src/core/debug/payload';
import { problemOfArrays } from '../../../src/core/debug/problem';

// The Python expressions evaluated by Debian's python3 on numpy arrays and torch tensors
// (evaluate.py evaluates them as debugpy does, in the namespace of a frame): every dtype and
// layout decodes to numpy's own numbers, bad values give their message, and nothing in the
// "program" changes or prints.

const NAMES = [
  'f8', 'f4_fortran', 'f8_big_endian', 'f2', 'i8', 'u1', 'mask', 'row', 'sliced', 'grad', 'batch', 'transposed', 'bf16',
  'nested', 'ragged', 'words', 'text', 'meta', 'cube', 'scalar', 'objects', 'attn_weights', 'large', 'large_tensor',
];

/** Read in parts too (rows 0–99, 100–199, 200–256 of 257). */
const LARGE = ['large', 'large_tensor'];

interface Evaluated {
  answers: Record<string, string>;
  reference: Record<string, number[] | null>;
  unchanged: boolean;
  printed: string;
}

describe('debug reader: Python expressions in python3 with numpy and torch', () => {
  let evaluated: Evaluated;

  before(function () {
    this.timeout(60_000);
    const parts = Object.fromEntries(LARGE.map((name) => [name, [0, 1, 2].map((k) => ({ start: 100 * k, end: Math.min(257, 100 * (k + 1)), typed: false }))]));
    const request = {
      describe: describeExpression('python', NAMES),
      reads: {
        ...Object.fromEntries(NAMES.map((name) => [name, readExpression('python', name)])),
        ...Object.fromEntries(LARGE.flatMap((name) => parts[name].map((slice, k) => [`${name}#${k}`, readExpression('python', name, slice)]))),
      },
    };
    const output = execFileSync('/usr/bin/python3', [join(__dirname, 'evaluate.py')], { input: JSON.stringify(request), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    evaluated = JSON.parse(output) as Evaluated;
  });

  const read = (name: string): ArrayRead => {
    const decoded = decodeArray(evaluated.answers[name], name);
    assert.ok(typeof decoded !== 'string', `${name}: ${String(decoded)}`);
    return decoded;
  };

  it('changes nothing in the program and prints nothing', () => {
    assert.equal(evaluated.unchanged, true);
    assert.equal(evaluated.printed, '');
  });

  it('decodes every numeric dtype and layout to numpy\'s numbers, exactly', () => {
    for (const name of ['f8', 'f4_fortran', 'f8_big_endian', 'f2', 'i8', 'u1', 'row', 'sliced', 'grad', 'batch', 'transposed', 'bf16']) {
      const { matrix } = read(name);
      assert.deepEqual(Array.from(matrix.data), evaluated.reference[name], name);
    }
  });

  it('keeps shapes: a vector is one row, leading axes of 1 are dropped', () => {
    assert.deepEqual([read('f4_fortran').matrix.rows, read('f4_fortran').matrix.cols], [4, 3]);
    assert.deepEqual([read('row').matrix.rows, read('row').matrix.cols], [1, 5]);
    assert.deepEqual([read('batch').matrix.rows, read('batch').matrix.cols], [2, 3]);
    assert.deepEqual([read('transposed').matrix.rows, read('transposed').matrix.cols], [2, 3]);
  });

  it('reads a boolean array as a mask, and nested lists with inf and nan', () => {
    const mask = read('mask');
    assert.equal(mask.boolean, true);
    assert.deepEqual(Array.from(mask.matrix.data), [1, 0, 0, 1, 1, 0, 1, 1, 1]);
    assert.equal(read('f8').boolean, false);
    const nested = read('nested');
    assert.deepEqual([nested.matrix.rows, nested.matrix.cols], [2, 2]);
    assert.deepEqual(Array.from(nested.matrix.data), [1.5, -Infinity, NaN, 2]);
  });

  it('describes every value before reading, and says why the unreadable ones cannot be read', () => {
    const descriptions = parseDescriptions(evaluated.answers.describe, NAMES.length);
    assert.ok(typeof descriptions !== 'string', String(descriptions));
    const reasons = Object.fromEntries(NAMES.map((name, i) => [name, unreadableReason(name, descriptions[i])]));
    assert.deepEqual(descriptions[NAMES.indexOf('grad')], { kind: 'tensor', shape: [3, 4], itemsize: 4, device: 'cpu' });
    assert.deepEqual(descriptions[NAMES.indexOf('f2')], { kind: 'ndarray', shape: [2, 2], itemsize: 2 });
    for (const name of ['f8', 'grad', 'batch', 'bf16', 'nested', 'ragged', 'mask']) assert.equal(reasons[name], undefined, name);
    assert.equal(reasons.text, 'text is a str, not an array');
    assert.match(reasons.meta!, /^meta is a tensor on meta: copy it to the CPU first/);
    assert.equal(reasons.cube, 'cube is 2×3×4: attention needs a matrix (2-D); pick a slice such as cube[0]');
    assert.equal(reasons.scalar, 'scalar is a scalar, not an array');
  });

  it('reads torch\'s (1, heads, queries, keys) attention weights as one matrix per head, only for the weights role', () => {
    const descriptions = parseDescriptions(evaluated.answers.describe, NAMES.length);
    assert.ok(typeof descriptions !== 'string');
    const description = descriptions[NAMES.indexOf('attn_weights')];
    assert.deepEqual(description.shape, [1, 2, 3, 4]);
    assert.equal(unreadableReason('attn_weights', description, true), undefined);
    assert.match(unreadableReason('attn_weights', description) ?? '', /^attn_weights is 1×2×3×4: attention needs a matrix/);
    assert.match(unreadableReason('cube4', { kind: 'ndarray', shape: [2, 2, 3, 4], itemsize: 8 }, true) ?? '', /heads × rows × columns \(one matrix per head/);
    assert.match(String(decodeArray(evaluated.answers.attn_weights, 'attn_weights')), /needs a matrix/);
    const stacked = decodeArray(evaluated.answers.attn_weights, 'attn_weights', true);
    assert.ok(typeof stacked !== 'string', String(stacked));
    assert.equal(stacked.heads, 2);
    const problem = problemOfArrays('forward', [{ name: 'attn_weights', role: 'weights', read: stacked }]);
    assert.deepEqual(problem.matrices.map((m) => [m.name, m.role, m.head, m.value.rows, m.value.cols]), [['attn_weights[0]', 'weights', 0, 3, 4], ['attn_weights[1]', 'weights', 1, 3, 4]]);
    assert.deepEqual(problem.matrices.flatMap((m) => Array.from(m.value.data)), evaluated.reference.attn_weights);
  });

  it('reads rows in parts (a view each: numpy slicing, a transposed tensor\'s rows) that join to numpy\'s numbers, changing nothing', () => {
    for (const name of LARGE) {
      const parts = [0, 1, 2].map((k) => decodeArray(evaluated.answers[`${name}#${k}`], name) as ArrayRead);
      const joined = joinReads(parts, name, false);
      assert.ok(typeof joined !== 'string', String(joined));
      assert.deepEqual([joined.matrix.rows, joined.matrix.cols], [257, 300]);
      assert.deepEqual(Array.from(joined.matrix.data), evaluated.reference[name], name);
    }
    assert.equal(evaluated.unchanged, true);
  });

  it('reports ragged lists, non-numbers and non-numeric arrays in the file reader\'s words', () => {
    assert.equal(decodeArray(evaluated.answers.ragged, 'ragged'), 'Row 2 of ragged has 1 entry but row 1 has 2: every row needs the same length.');
    assert.match(String(decodeArray(evaluated.answers.words, 'words')), /words/);
    assert.equal(decodeArray(evaluated.answers.objects, 'objects'), 'objects is an array of object, not a numeric array');
    assert.equal(decodeArray(evaluated.answers.text, 'text'), 'text is a str, not a numeric array');
  });
});
