import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scanNumber, type ScannedNumber } from '../../../src/core/parse/numbers';

// Every spelling in the fixture was read by Python (gen_numbers.py); the scanner must give the
// same double, bit for bit.
const cases = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'numbers.json'), 'utf8')) as [string, string][];

function pythonValue(repr: string): number {
  if (repr === 'inf') return Infinity;
  if (repr === '-inf') return -Infinity;
  if (repr === 'nan') return NaN;
  return Number(repr);
}

describe('number scanner vs Python float()', () => {
  it(`reads all ${cases.length} spellings exactly as Python does`, () => {
    const out: ScannedNumber = { value: 0, end: 0, boolean: false, overflow: false };
    for (const [spelling, repr] of cases) {
      const text = `${spelling}, `;
      assert.ok(scanNumber(text, 0, out), `${spelling} not read`);
      assert.equal(out.end, spelling.length, `${spelling}: stopped at ${out.end}`);
      assert.ok(Object.is(out.value, pythonValue(repr)), `${spelling}: read ${out.value}, Python reads ${repr}`);
    }
  });

  it('flags decimals beyond float64 as overflow, and nothing else', () => {
    const out: ScannedNumber = { value: 0, end: 0, boolean: false, overflow: false };
    for (const [spelling] of cases) {
      scanNumber(spelling, 0, out);
      assert.equal(out.overflow, /^-?1e400$/.test(spelling), spelling);
    }
  });

  it('reads booleans as 1/0 and marks them', () => {
    const out: ScannedNumber = { value: 0, end: 0, boolean: false, overflow: false };
    for (const [word, value] of [['true', 1], ['True', 1], ['false', 0], ['FALSE', 0]] as const) {
      assert.ok(scanNumber(word, 0, out));
      assert.deepEqual([out.value, out.boolean, out.end], [value, true, word.length]);
    }
  });

  it('refuses what is not a number', () => {
    const out: ScannedNumber = { value: 0, end: 0, boolean: false, overflow: false };
    for (const text of ['--3', '-true', 'abc', '+-1', '"hello"', 'float(x)', '- 3', '', '.', '-']) {
      assert.equal(scanNumber(text, 0, out), false, text);
    }
  });
});
