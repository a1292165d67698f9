import { strict as assert } from 'node:assert';
import { runInNewContext } from 'node:vm';
import { describeExpression, labelsExpression, readExpression } from '../../../src/core/debug/expressions';
import { decodeArray, decodeLabels, joinReads, parseDescriptions, readSlices, unquoteResult, unreadableReason, type ArrayRead, type ValueDescription } from '../../../src/core/debug/payload';

// The JavaScript expressions evaluated by V8 in a context of their own (as js-debug evaluates
// them in a paused frame), their answers quoted as js-debug's clipboard context quotes a string.

const W_Q = [new Float32Array([0.1, 0.2]), new Float32Array([-0.3, 0.4])];

function program() {
  return {
    Buffer,
    X: [[1, 0.5], [-2, 3e-8]],
    W_Q,
    weights: new Float64Array([0.25, 0.75, Math.PI]),
    small: new Int16Array([-2, 7]),
    mask: [[true, false], [true, true]],
    blocked: [[0, -Infinity], [NaN, 0]],
    ragged: [[1, 2], [3]],
    raggedRows: [new Float32Array([1, 2]), new Float32Array([3])],
    flat: [1, 2, 3],
    words: [['a', 'b']],
    tokens: ['zebra', '<s>', 'x "y"'],
    label: 'not an array',
    nothing: null,
  };
}

/** Evaluates in a fresh context and answers as js-debug's clipboard context does: a JSON string literal. */
function evaluate(expression: string, context: object = program()): string {
  return JSON.stringify(runInNewContext(expression, context));
}

const read = (name: string) => decodeArray(evaluate(readExpression('javascript', name)), name);

describe('debug reader: JavaScript expressions in V8', () => {
  it('reads a list of strings as token labels, and nothing else as labels', () => {
    assert.deepEqual(decodeLabels(evaluate(labelsExpression('javascript', 'tokens')), 'tokens'), ['zebra', '<s>', 'x "y"']);
    for (const name of ['flat', 'words', 'label', 'nothing']) assert.equal(decodeLabels(evaluate(labelsExpression('javascript', name)), name), `${name} is not a list of strings (token labels)`);
  });

  it('reads nested arrays, arrays of typed arrays and typed arrays exactly', () => {
    assert.deepEqual(read('X'), { matrix: { rows: 2, cols: 2, data: new Float64Array([1, 0.5, -2, 3e-8]) }, boolean: false });
    assert.deepEqual(read('W_Q'), { matrix: { rows: 2, cols: 2, data: new Float64Array([...W_Q[0], ...W_Q[1]]) }, boolean: false });
    assert.deepEqual(read('weights'), { matrix: { rows: 1, cols: 3, data: new Float64Array([0.25, 0.75, Math.PI]) }, boolean: false });
    assert.deepEqual(read('small'), { matrix: { rows: 1, cols: 2, data: new Float64Array([-2, 7]) }, boolean: false });
  });

  it('keeps booleans (a mask) and non-finite numbers, which JSON cannot write', () => {
    assert.equal((read('mask') as { boolean: boolean }).boolean, true);
    assert.deepEqual(Array.from((read('blocked') as { matrix: { data: Float64Array } }).matrix.data), [0, -Infinity, NaN, 0]);
  });

  it('sends numbers as base64 where Node\'s Buffer exists, else as JSON, with the same result', () => {
    const withoutBuffer = { ...program(), Buffer: undefined };
    for (const name of ['X', 'W_Q', 'weights', 'small', 'blocked', 'flat']) {
      const answer = evaluate(readExpression('javascript', name));
      assert.match(JSON.parse(answer) as string, /"data":"/, `${name} as base64`);
      assert.deepEqual(decodeArray(evaluate(readExpression('javascript', name), withoutBuffer), name), read(name), name);
    }
    assert.deepEqual(read('flat'), { matrix: { rows: 1, cols: 3, data: new Float64Array([1, 2, 3]) }, boolean: false });
  });

  it('sends plain numbers as float32 only when every one of them is exactly a float32', () => {
    const halves = [[0.5, -0.25], [2 ** 100, -0]];
    const thirds = [[1 / 3, 0.5], [2, 3]];
    const special = [[Infinity, NaN], [-Infinity, 0.125]];
    const context = { ...program(), halves, thirds, special };
    const dtypeOf = (name: string) => (JSON.parse(JSON.parse(evaluate(readExpression('javascript', name), context)) as string) as { dtype: string }).dtype;
    assert.equal(dtypeOf('halves'), '<f4');
    assert.equal(dtypeOf('special'), '<f4');
    assert.equal(dtypeOf('thirds'), '<f8');
    for (const [name, value] of Object.entries({ halves, thirds, special })) {
      const got = decodeArray(evaluate(readExpression('javascript', name), context), name) as { matrix: { data: Float64Array } };
      assert.deepEqual(Array.from(got.matrix.data), value.flat(), name);
      assert.ok(Object.is(got.matrix.data[3], value.flat()[3]), `${name}: the sign of zero`);
    }
  });

  it('reads a large array in parts (rows, or a vector\'s elements) that join to the whole read, changing nothing', () => {
    const rows = Array.from({ length: 300 }, (_, i) => Float32Array.from({ length: 1024 }, (_, j) => Math.sin(i * 1024 + j)));
    const flat = Float64Array.from({ length: 300 * 1024 }, (_, k) => Math.cos(k));
    const nested = rows.map((row) => Array.from(row, (x) => x / 3));
    const context = { ...program(), rows, flat, nested };
    const before = JSON.stringify([rows.map((r) => Array.from(r)), Array.from(flat), nested]);
    for (const name of ['rows', 'flat', 'nested']) {
      const description = (parseDescriptions(evaluate(describeExpression('javascript', [name]), context), 1) as ValueDescription[])[0];
      const slices = readSlices(description);
      assert.ok(slices && slices.length > 1, `${name} is read in parts`);
      assert.equal(slices.at(-1)?.end, description.shape[0]);
      const parts = slices.map((slice) => decodeArray(evaluate(readExpression('javascript', name, slice), context), name) as ArrayRead);
      assert.deepEqual(joinReads(parts, name, description.shape.length === 1), decodeArray(evaluate(readExpression('javascript', name), context), name), name);
    }
    assert.equal(JSON.stringify([rows.map((r) => Array.from(r)), Array.from(flat), nested]), before);
    assert.equal(readSlices({ kind: 'list', shape: [3, 4] }), undefined, 'a small array is read whole');
    assert.equal(readSlices({ kind: 'ndarray', shape: [2, 600, 600], itemsize: 8 }), undefined, 'three axes are read whole');
  });

  it('says what is wrong with values that are no matrix', () => {
    assert.equal(read('ragged'), 'Row 2 of ragged has 1 entry but row 1 has 2: every row needs the same length.');
    assert.equal(read('raggedRows'), 'Row 2 of raggedRows has 1 entry but row 1 has 2: every row needs the same length.');
    assert.equal(typeof read('words'), 'string');
    assert.equal(read('label'), 'label is a string, not a numeric array');
    assert.equal(read('nothing'), 'nothing is a null, not a numeric array');
  });

  it('describes every value in one evaluate', () => {
    const names = ['X', 'W_Q', 'weights', 'label', 'nothing'];
    const descriptions = parseDescriptions(evaluate(describeExpression('javascript', names)), names.length);
    assert.ok(typeof descriptions !== 'string', String(descriptions));
    assert.deepEqual(descriptions.slice(0, 3), [
      { kind: 'list', shape: [2, 2] },
      { kind: 'list', shape: [2, 2], itemsize: 4 }, // rows of Float32Array
      { kind: 'typed', shape: [3], itemsize: 8 },
    ]);
    assert.equal(unreadableReason('label', descriptions[3]), 'label is a string, not an array');
    assert.equal(unreadableReason('nothing', descriptions[4]), 'nothing is a null, not an array');
  });

  it('changes nothing in the program', () => {
    const context = program();
    const before = JSON.stringify(context, (_key, x) => (ArrayBuffer.isView(x) ? Array.from(x as Float32Array) : x));
    for (const name of ['X', 'W_Q', 'weights', 'mask', 'blocked', 'label']) evaluate(readExpression('javascript', name), context);
    evaluate(describeExpression('javascript', ['X', 'W_Q', 'weights']), context);
    assert.equal(JSON.stringify(context, (_key, x) => (ArrayBuffer.isView(x) ? Array.from(x as Float32Array) : x)), before);
    assert.deepEqual(Object.keys(context), Object.keys(program()));
  });

  it('unquotes answers as each adapter quotes strings', () => {
    assert.equal(unquoteResult('"{\\"a\\":1}"'), '{"a":1}'); // js-debug
    assert.equal(unquoteResult(`'{"a": "b"}'`), '{"a": "b"}'); // debugpy without rawString
    assert.equal(unquoteResult('{"a": 1}'), '{"a": 1}'); // debugpy with rawString
  });
});
