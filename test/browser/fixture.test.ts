// The panel tests draw the engine's results for fixtures/attention.md; this holds those results
// to PyTorch's values for the same note, so a heatmap that matches the engine matches PyTorch.
import assert from 'node:assert/strict';
import type { Matrix } from '../../src/core/types';
import { loadFixture, torchReference } from './fixtures';

function assertClose(actual: Matrix | null | undefined, expected: Matrix | null, label: string): void {
  if (expected === null) return assert.equal(actual ?? null, null, label);
  assert.ok(actual, `${label} is missing`);
  assert.deepEqual([actual.rows, actual.cols], [expected.rows, expected.cols], `${label} shape`);
  expected.data.forEach((want, i) => {
    const got = actual.data[i];
    if (!Number.isFinite(want)) return assert.equal(got, want, `${label}[${i}]`);
    assert.ok(Math.abs(got - want) <= 1e-12 * Math.max(1, Math.abs(want)), `${label}[${i}]: ${got} vs PyTorch ${want}`);
  });
}

describe('panel fixture: the engine on fixtures/attention.md agrees with PyTorch', () => {
  const fixture = loadFixture();
  const reference = torchReference();

  it('reads the two problems of the note', () => {
    assert.deepEqual(fixture.problems.map((p) => [p.name, p.options.heads, p.tokens]), [
      ['Two heads, causal', 2, ['I', 'am', 'a', 'student']],
      ['One head, no mask', 1, undefined],
    ]);
  });

  reference.forEach((torch, p) => {
    it(`problem ${p + 1}: every step, head, gradient, concat, output and residual within 1e-12`, () => {
      const result = fixture.results[p];
      torch.heads.forEach((head, h) => {
        for (const key of ['Q', 'K', 'V', 'scores', 'scaled', 'mask', 'masked', 'weights', 'output'] as const) {
          assertClose(result.heads[h][key], head[key], `head ${h + 1} ${key}`);
        }
        for (const key of ['dQ', 'dK', 'dV', 'dA', 'dS'] as const) {
          assertClose(result.heads[h].gradients?.[key], head.gradients[key], `head ${h + 1} ${key}`);
        }
      });
      assertClose(result.concat, torch.concat, 'concat');
      assertClose(result.output, torch.output, 'output');
      assertClose(result.residual, torch.residual, 'residual');
    });
  });
});
