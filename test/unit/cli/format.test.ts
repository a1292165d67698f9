import { strict as assert } from 'node:assert';
import { jsonDiagnostic, matrixRows, matrixToCsv, matrixToText } from '../../../src/core/format';

describe('format', () => {
  const m = { rows: 2, cols: 3, data: Float64Array.from([1.5, -Infinity, NaN, Infinity, 0, -2e-7]) };

  it('JSON rows keep finite numbers exact and spell non-finite ones', () => {
    assert.deepEqual(matrixRows(m), [[1.5, '-Infinity', 'NaN'], ['Infinity', 0, -2e-7]]);
  });

  it('CSV at full precision, with labels quoted when needed', () => {
    assert.equal(matrixToCsv(m), '1.5,-Infinity,NaN\nInfinity,0,-2e-7\n');
    assert.equal(matrixToCsv(m, { rows: ['a,b', 'c'], cols: ['k1', 'k"2', 'k3'] }), ',k1,"k""2",k3\n"a,b",1.5,-Infinity,NaN\nc,Infinity,0,-2e-7\n');
    const third = 1 / 3;
    assert.equal(Number(matrixToCsv({ rows: 1, cols: 1, data: Float64Array.from([third]) }).trim()), third);
  });

  it('diagnostics become 1-based lines and columns', () => {
    const d = jsonDiagnostic({ range: { start: { line: 0, character: 4 }, end: { line: 2, character: 0 } }, severity: 'error', code: 'x', message: 'm', suggestion: 's' });
    assert.deepEqual(d, { line: 1, column: 5, endLine: 3, endColumn: 1, severity: 'error', message: 'm', code: 'x', suggestion: 's' });
  });

  it('text matrices are aligned, labelled and elided beyond 12 rows/columns', () => {
    assert.equal(matrixToText(m, '', ['I', 'am']), 'I   [    1.5000         -∞        NaN ]\nam  [         ∞     0.0000  -2.000e-7 ]');
    const big = { rows: 20, cols: 20, data: new Float64Array(400) };
    const text = matrixToText(big, '');
    assert.equal(text.split('\n').length, 13);
    assert.match(text, /… 8 more rows \(20×20 in all\)/);
    assert.match(text.split('\n')[0], /…/);
  });
});
