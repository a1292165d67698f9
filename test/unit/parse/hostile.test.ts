import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { cellAtOffset, MAX_DEFINITIONS, parseDocument } from '../../../src/core/parse/index';

// Input nobody meant as matrices, generated here (never committed): every one gets one clear
// diagnostic and nothing throws. (Bounded time is the benchmark's business: bench/reader.ts.)
describe('reader: hostile input', () => {
  it('a NUL character: the file is binary, said once, at the NUL, and nothing is read', () => {
    const result = parseDocument('X = [[1, 2], [3, 4]]\nW_Q = [[1, \0\0]]\n');
    assert.deepEqual(result, {
      problems: [],
      diagnostics: [
        {
          range: { start: { line: 1, character: 11 }, end: { line: 1, character: 12 } },
          severity: 'error',
          code: 'binary-file',
          message:
            'This file holds a NUL character (line 2): it is binary, not text. Attention Lens reads matrices written as text; ' +
            'save numpy arrays with np.savetxt or print them.',
        },
      ],
    });
  });

  it('a PNG opened as text is binary', () => {
    const png = readFileSync(join(__dirname, '..', '..', '..', 'media', 'icon.png'), 'latin1');
    const result = parseDocument(png);
    assert.deepEqual(result.diagnostics.map((d) => d.code), ['binary-file']);
    assert.deepEqual(result.problems, []);
  });

  it('a million nested brackets: one diagnostic, no recursion', () => {
    const depth = 1_000_000;
    const result = parseDocument(`X = ${'['.repeat(depth)}1${']'.repeat(depth)}\nW_Q = [[1]]\n`);
    assert.deepEqual(
      result.diagnostics.map((d) => [d.code, d.message]),
      [['too-many-dimensions', 'X has more than two levels of brackets; attention reads 2-D matrices.']],
    );
    assert.deepEqual(result.problems[0].matrices.map((def) => def.name), ['W_Q']);
  });

  it(`a million tiny matrices: the first ${MAX_DEFINITIONS} are read, then one warning where reading stopped`, () => {
    const count = 1_000_000;
    const text = Array.from({ length: count }, (_, i) => `X = [[${i}]]`).join('\n');
    const result = parseDocument(text);
    assert.equal(result.problems.length, MAX_DEFINITIONS);
    assert.deepEqual(Array.from(result.problems[MAX_DEFINITIONS - 1].matrices[0].value.data), [MAX_DEFINITIONS - 1]);
    assert.deepEqual(result.diagnostics, [
      {
        range: { start: { line: MAX_DEFINITIONS, character: 0 }, end: { line: MAX_DEFINITIONS, character: 1 } },
        severity: 'warning',
        code: 'too-many-definitions',
        message: 'This file defines more than 2,000 matrices: Attention Lens read the first 2,000 and stopped here.',
      },
    ]);
  });

  it('a hover position maps to the cell a scan finds, in ascending and transposed offsets (fast-check)', () => {
    const scan = (offsets: Uint32Array, at: number) => {
      let best = -1;
      offsets.forEach((start, k) => {
        if (start <= at && (best === -1 || start > offsets[best])) best = k;
      });
      return best;
    };
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat(10_000), { minLength: 1, maxLength: 60 }), fc.nat(10_050), fc.boolean(), (starts, at, shuffle) => {
        const sorted = Uint32Array.from(starts.sort((a, b) => a - b));
        const offsets = shuffle ? sorted.slice().reverse() : sorted;
        assert.equal(cellAtOffset(offsets, at), scan(offsets, at));
      }),
    );
  });

  it('one line of two million numbers reads as a 1×2,000,000 row', () => {
    const count = 2_000_000;
    const result = parseDocument(`X = [${Array.from({ length: count }, (_, i) => i % 10).join(', ')}]`);
    assert.deepEqual(result.diagnostics, []);
    const [def] = result.problems[0].matrices;
    assert.deepEqual([def.value.rows, def.value.cols, def.value.data[count - 1]], [1, count, (count - 1) % 10]);
  });
});
