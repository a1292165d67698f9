import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { describeExpression, isEvaluableName, languageOf, readExpression } from '../../../src/core/debug/expressions';
import { bytesOf, decodeArray, matrixShape } from '../../../src/core/debug/payload';
import { matchRoles, problemOfArrays, type ScopeVariable } from '../../../src/core/debug/problem';
import { buildSpec } from '../../../src/core/spec';

const variable = (name: string, scope = 'Locals'): ScopeVariable => ({ name, expression: name, scope });
const matrix = (rows: number, cols: number) => ({ matrix: { rows, cols, data: new Float64Array(rows * cols).fill(0.5) }, boolean: false });

describe('debug reader: roles, shapes and payloads', () => {
  it('matches variable names to roles by the file reader\'s rules; the innermost scope wins', () => {
    const matched = matchRoles([
      variable('query'), variable('K'), variable('values'), variable('W_q'), variable('wk1'), variable('tokens'), variable('hidden'),
      variable('q', 'Globals'), variable('Wo'),
    ]);
    assert.deepEqual(
      matched.map(({ name, role, head }) => [name, role, head]),
      [['query', 'Q', undefined], ['K', 'K', undefined], ['values', 'V', undefined], ['W_q', 'WQ', undefined], ['wk1', 'WK', 0], ['Wo', 'WO', undefined]],
    );
  });

  it('makes a problem the spec builder checks like a file\'s: shapes named in its messages', () => {
    const good = problemOfArrays('forward (model.py:3)', [
      { name: 'x', role: 'X', read: matrix(3, 4) },
      { name: 'w_q', role: 'WQ', read: matrix(4, 2) },
      { name: 'w_k', role: 'WK', read: matrix(4, 2) },
      { name: 'w_v', role: 'WV', read: matrix(4, 2) },
    ]);
    assert.equal(good.name, 'forward (model.py:3)');
    assert.ok(buildSpec(good).spec);
    const bad = problemOfArrays('forward', [
      { name: 'x', role: 'X', read: matrix(3, 4) },
      { name: 'w_q', role: 'WQ', read: matrix(5, 2) },
      { name: 'w_k', role: 'WK', read: matrix(4, 2) },
      { name: 'w_v', role: 'WV', read: matrix(4, 2) },
    ]);
    const errors = buildSpec(bad).diagnostics.filter((d) => d.severity === 'error').map((d) => d.message);
    assert.ok(errors.some((message) => message.includes('w_q') && message.includes('5')), errors.join('\n'));
  });

  it('drops leading axes of 1 and refuses other stacks', () => {
    assert.deepEqual(matrixShape([7]), { rows: 1, cols: 7 });
    assert.deepEqual(matrixShape([1, 1, 4, 8]), { rows: 4, cols: 8 });
    assert.equal(matrixShape([2, 4, 8]), undefined);
    assert.equal(matrixShape([]), undefined);
    assert.equal(bytesOf({ kind: 'tensor', shape: [1024, 1024], itemsize: 4 }), 4 * 1024 * 1024);
  });

  it('decodes base64 little-endian float64 and float32 exactly (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 6 }), fc.boolean(), fc.array(fc.double(), { minLength: 36, maxLength: 36 }), (rows, cols, single, pool) => {
        const values = pool.slice(0, rows * cols);
        const typed = single ? new Float32Array(values) : new Float64Array(values);
        const data = Buffer.from(typed.buffer).toString('base64');
        const decoded = decodeArray(JSON.stringify({ dtype: single ? '<f4' : '<f8', shape: [rows, cols], data }), 'a');
        assert.ok(typeof decoded !== 'string', String(decoded));
        assert.deepEqual(decoded.matrix, { rows, cols, data: new Float64Array(typed) });
      }),
    );
  });

  it('refuses payloads that do not add up', () => {
    assert.equal(decodeArray(JSON.stringify({ dtype: '<f8', shape: [2, 2], data: 'AAAA' }), 'a'), 'a arrived with 3 bytes, but 2×2 <f8 needs 32');
    assert.match(String(decodeArray(JSON.stringify({ dtype: '<c16', shape: [1, 1], data: '' }), 'a')), /dtype <c16, which the reader does not know/);
    assert.match(String(decodeArray('NameError("name \'q\' is not defined")', 'q')), /not an array payload: NameError/);
  });

  it('evaluates only variable names, never code given as a name', () => {
    for (const name of ['q', 'self.w_q', 'layers[0].attn', 'Ω']) assert.ok(isEvaluableName(name), name);
    for (const name of ['q); import os', '__import__("os")', 'a b', 'x=1', '']) {
      assert.equal(isEvaluableName(name), false, name);
      assert.throws(() => readExpression('python', name), /not a variable name/);
      assert.throws(() => describeExpression('javascript', ['q', name]), /not a variable name/);
    }
  });

  it('knows the language of a session from its type, else from the paused source', () => {
    assert.equal(languageOf('debugpy', undefined), 'python');
    assert.equal(languageOf('pwa-node', undefined), 'javascript');
    assert.equal(languageOf('someAdapter', '/a/model.py'), 'python');
    assert.equal(languageOf('someAdapter', '/a/model.ts'), 'javascript');
    assert.equal(languageOf('cppdbg', '/a/model.cpp'), undefined);
  });
});
