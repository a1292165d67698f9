// Every fixture, every intermediate: the engine against numpy float64 (1e-12) and
// torch.float32 (1e-5), gradients against torch autograd.
import * as assert from 'node:assert/strict';
import { runAttention } from '../../../src/core/engine';
import { forwardOutput } from '../../../src/core/engine/attention';
import type { Matrix } from '../../../src/core/types';
import { assertForwardMatches, assertMatrixClose, type JsonMatrix, loadFixtures, specOf } from './fixtures';

const HEAD_GRADIENTS = ['dQ', 'dK', 'dV', 'dA', 'dS'] as const;

describe('engine against numpy/PyTorch fixtures', () => {
  const fixtures = loadFixtures();

  it('has a fixture for every feature the generator covers', () => {
    assert.ok(fixtures.length >= 30, `only ${fixtures.length} fixtures: run npm run fixtures`);
  });

  for (const fixture of fixtures) {
    it(`${fixture.name}: ${fixture.description}`, () => {
      const { expected, tolerance: tol } = fixture;
      const result = runAttention(specOf(fixture));
      assertForwardMatches(result, fixture);
      result.heads.forEach((head, h) => {
        const grads = expected.heads[h].gradients as Record<string, JsonMatrix> | undefined;
        if (!grads) return assert.equal(head.gradients, undefined);
        for (const key of HEAD_GRADIENTS) assertMatrixClose(head.gradients?.[key], grads[key], tol, `head ${h + 1} ${key}`);
      });

      assert.equal(result.warnings.length, expected.fullyMasked.length, result.warnings.join('; '));
      expected.fullyMasked.forEach(([head, row], k) => {
        assert.match(result.warnings[k], new RegExp(`^query ${row + 1}\\b.*\\(head ${head + 1}\\) is fully masked`));
      });

      if (!expected.gradients) return assert.equal(result.gradients, undefined);
      const actual = result.gradients as unknown as Record<string, Matrix | undefined>;
      const present = Object.keys(actual).filter((k) => k !== 'heads' && actual[k] !== undefined).sort();
      assert.deepEqual(present, Object.keys(expected.gradients).sort(), 'which gradients exist');
      for (const [key, want] of Object.entries(expected.gradients)) assertMatrixClose(actual[key], want, tol, key);
    });
  }
});

describe('checks on the fixtures', () => {
  for (const fixture of loadFixtures()) {
    it(`${fixture.name}: rows sum to 1, 0 ≤ A ≤ 1`, () => {
      const { checks } = runAttention(specOf(fixture));
      assert.ok(checks.rowsSumToOne, `row sums off by ${checks.rowSumsMaxError}`);
      assert.ok(checks.weightsInBounds);
      if (checks.permutationEquivariant !== undefined) {
        assert.ok(checks.permutationEquivariant, `permutation error ${checks.permutationMaxError}`);
      }
    });

    it(`${fixture.name}: the output-only rerun (in one scratch matrix) gives the same output bit for bit`, () => {
      const spec = specOf(fixture);
      assert.deepEqual(forwardOutput(spec, {}), runAttention(spec).output);
    });
  }
});
