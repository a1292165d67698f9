// Every fixture, every intermediate: the engine against numpy float64 (1e-12) and
// torch.float32 (1e-5), gradients against torch autograd.
import * as assert from 'node:assert/strict';
import { runAttention } from '../../../src/core/engine';
import type { HeadResult, Matrix } from '../../../src/core/types';
import { assertMatrixClose, type JsonMatrix, loadFixtures, specOf } from './fixtures';

const HEAD_MATRICES = ['Q', 'K', 'V', 'scores', 'scaled', 'masked', 'weights', 'output'] as const;
const RESULT_MATRICES = ['input', 'concat', 'output', 'residual'] as const;
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
      const storage = fixture.dtype === 'float32' ? Float32Array : Float64Array;
      assert.equal(result.dtype, fixture.dtype);
      assert.ok(result.output.data instanceof storage, 'output stored in the requested dtype');

      for (const key of RESULT_MATRICES) {
        if (expected[key]) assertMatrixClose(result[key], expected[key] as JsonMatrix, tol, key);
        else assert.equal(result[key], undefined, `${key} should be absent`);
      }
      assert.equal(result.heads.length, expected.heads.length, 'number of heads');
      result.heads.forEach((head: HeadResult, h) => {
        const want = expected.heads[h];
        for (const key of HEAD_MATRICES) assertMatrixClose(head[key], want[key] as JsonMatrix, tol, `head ${h + 1} ${key}`);
        if (want.mask) assertMatrixClose(head.mask, want.mask as JsonMatrix, tol, `head ${h + 1} mask`);
        else assert.equal(head.mask, null, `head ${h + 1}: no mask`);
        assert.equal(head.kvHead, want.kvHead, `head ${h + 1} kvHead`);
        const grads = want.gradients as Record<string, JsonMatrix> | undefined;
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
  }
});
