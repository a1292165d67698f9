// The fast path against the numpy/PyTorch fixtures (every intermediate, the fixture's own
// tolerance: 1e-12 float64, 1e-5 float32), and against the reference engine's checks and warnings.
// Most fixtures also ask for gradients, which the fast path leaves to the reference: their forward
// intermediates are compared with gradients off, and the full spec must come back exactly as the
// reference computes it.
import * as assert from 'node:assert/strict';
import { runAttention } from '../../../src/core/engine';
import { referenceOnly, runAttentionFast } from '../../../src/core/engine/fast';
import type { AttentionSpec, HeadResult } from '../../../src/core/types';
import { assertMatrixClose, type Fixture, type JsonMatrix, loadFixtures, specOf } from '../engine/fixtures';

function forwardSpecOf(fixture: Fixture): AttentionSpec {
  const spec = specOf(fixture);
  return { ...spec, options: { ...spec.options, gradients: false } };
}

const HEAD_MATRICES = ['Q', 'K', 'V', 'scores', 'scaled', 'masked', 'weights', 'output'] as const;
const RESULT_MATRICES = ['input', 'concat', 'output', 'residual'] as const;

describe('fast path against numpy/PyTorch fixtures', () => {
  const fixtures = loadFixtures();
  const covered = fixtures.filter((f) => referenceOnly(forwardSpecOf(f)) === undefined);

  it('covers most fixtures', () => {
    assert.ok(covered.length >= 20, `only ${covered.length} of ${fixtures.length} fixtures run on the fast path`);
  });

  for (const fixture of covered) {
    it(`${fixture.name}: ${fixture.description}`, async () => {
      const { expected, tolerance: tol } = fixture;
      const result = await runAttentionFast(forwardSpecOf(fixture));
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
      });
    });

    it(`${fixture.name}: same checks and warnings as the reference`, async () => {
      const spec = forwardSpecOf(fixture);
      const fast = await runAttentionFast(spec);
      const reference = runAttention(spec);
      assert.deepEqual(fast.warnings, reference.warnings);
      const { rowSumsMaxError, permutationMaxError, ...verdicts } = fast.checks;
      const { rowSumsMaxError: refRowSums, permutationMaxError: refPermutation, ...refVerdicts } = reference.checks;
      assert.deepEqual(verdicts, refVerdicts);
      const eps = fixture.dtype === 'float32' ? 2 ** -23 : 2 ** -52;
      assert.ok(Math.abs(rowSumsMaxError - refRowSums) <= 64 * eps, `row sums ${rowSumsMaxError} vs ${refRowSums}`);
      assert.equal(permutationMaxError === undefined, refPermutation === undefined);
    });
  }

  for (const fixture of fixtures.filter((f) => referenceOnly(specOf(f)) !== undefined)) {
    it(`${fixture.name}: left to the reference (${referenceOnly(specOf(fixture))})`, async () => {
      const { elapsedMs: _fast, ...fast } = await runAttentionFast(specOf(fixture));
      const { elapsedMs: _reference, ...reference } = runAttention(specOf(fixture));
      assert.deepEqual(fast, reference);
    });
  }
});
