// The FlashAttention walk (engine/flash.ts): tile by tile from Q and K, it must end in the output
// the engine computes from the whole matrix, on every fixture (every score function, the variants
// included) and for every tile size; its running maximum ends at the row maximum of the masked scores.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { runAttention } from '../../../src/core/engine';
import { flashWalk } from '../../../src/core/engine/flash';
import type { Matrix } from '../../../src/core/types';
import { loadFixtures, specOf } from './fixtures';

function assertClose(actual: Matrix, expected: Matrix, tol: number, label: string): void {
  assert.equal(`${actual.rows}×${actual.cols}`, `${expected.rows}×${expected.cols}`, label);
  expected.data.forEach((x, p) => assert.ok(Math.abs(actual.data[p] - x) <= tol * (1 + Math.abs(x)), `${label}[${p}]: ${actual.data[p]} vs ${x}`));
}

describe('FlashAttention made visible: the online-softmax walk', () => {
  const fixtures = loadFixtures();

  it('covers fixtures of every score function, the variants among them', () => {
    for (const score of ['scaled_dot', 'dot', 'general', 'additive', 'gaussian']) assert.ok(fixtures.some((f) => f.spec.options.score === score), score);
    assert.ok(fixtures.some((f) => f.spec.options.rope !== undefined) && fixtures.some((f) => f.spec.options.softcap !== undefined));
  });

  for (const fixture of fixtures) {
    it(`${fixture.name}: every head's walk ends in the engine's output, for tiles 1×1, 2×3 and whole`, () => {
      const spec = { ...specOf(fixture), options: { ...specOf(fixture).options, gradients: false } };
      const result = runAttention(spec);
      const tol = fixture.dtype === 'float32' ? 1e-5 : 1e-12;
      result.heads.forEach((head, h) => {
        for (const [rows, cols] of [[1, 1], [2, 3], [head.weights.rows, head.weights.cols]]) {
          const walk = flashWalk(spec, h, rows, cols);
          assertClose(walk.output, head.output, tol, `head ${h + 1} tiles ${rows}×${cols}`);
          // The last key tile of each query tile leaves the row maxima of the masked scores.
          const last = walk.steps.filter((s) => s.keyEnd === head.masked.cols);
          for (const step of last) {
            step.rowMax.forEach((m, r) => {
              const i = step.queryStart + r;
              const row = Array.from(head.masked.data.slice(i * head.masked.cols, (i + 1) * head.masked.cols));
              assert.ok(Object.is(m, Math.max(...row)) || Math.abs(m - Math.max(...row)) <= tol * (1 + Math.abs(m)), `row max ${i}`);
            });
          }
        }
      });
    });
  }

  it('each step rescales what it kept by e^(m_old − m_new), and its partial output is the attention over the keys so far', () => {
    const fixture = fixtures.find((f) => f.name === 'single-head');
    assert.ok(fixture);
    const spec = { ...specOf(fixture), options: { ...specOf(fixture).options, gradients: false } };
    const head = runAttention(spec).heads[0];
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 5 }), (rows, cols) => {
        const walk = flashWalk(spec, 0, rows, cols);
        let previous: number[] = [];
        for (const step of walk.steps) {
          if (step.keyStart === 0) previous = step.rowMax.map(() => -Infinity);
          step.rescale.forEach((f, r) => assert.equal(f, step.rowMax[r] === -Infinity ? 1 : Math.exp(previous[r] - step.rowMax[r]), `rescale of row ${r}`));
          previous = step.rowMax;
          step.partial.forEach((row, r) => {
            // Softmax over keys [0, keyEnd) of the masked scores, times V.
            const i = step.queryStart + r;
            const s = Array.from(head.masked.data.slice(i * head.masked.cols, i * head.masked.cols + step.keyEnd));
            const max = Math.max(...s);
            const e = s.map((x) => Math.exp(x - max));
            const total = e.reduce((a, b) => a + b, 0);
            row.forEach((x, c) => {
              const want = e.reduce((sum, w, j) => sum + (w / total) * head.V.data[j * head.V.cols + c], 0);
              assert.ok(Math.abs(x - want) <= 1e-12 * (1 + Math.abs(want)), `partial ${i},${c} after keys < ${step.keyEnd}`);
            });
          });
        }
        assert.equal(walk.steps.length, Math.ceil(head.weights.rows / rows) * Math.ceil(head.weights.cols / cols));
      }),
      { numRuns: 25 },
    );
  });

  it('keeps a tile instead of the n×n matrix: 1024 tokens in 64×64 tiles', () => {
    const n = 1024;
    const X: Matrix = { rows: n, cols: 4, data: Float64Array.from({ length: n * 4 }, (_, i) => Math.sin(i * 0.7)) };
    const walk = flashWalk({ options: { heads: 1, score: 'scaled_dot', dtype: 'float64', causal: 'top-left' }, X }, 0, 64, 64);
    assert.equal(walk.fullBytes, n * n * 8);
    assert.equal(walk.tileBytes, (64 * (64 + 4 + 2) + 64 * (4 + 4)) * 8);
    assert.ok(walk.tileBytes * 100 < walk.fullBytes);
  });

  it('refuses tiles of no size', () => {
    const X: Matrix = { rows: 2, cols: 2, data: Float64Array.from([1, 0, 0, 1]) };
    assert.throws(() => flashWalk({ options: { heads: 1, score: 'dot', dtype: 'float64' }, X }, 0, 0, 1), RangeError);
  });
});
