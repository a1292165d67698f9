// The fast path against the numpy/PyTorch fixtures (every intermediate, the fixture's own
// tolerance: 1e-12 float64, 1e-5 float32), and against the reference engine's checks and warnings.
// Most fixtures also ask for gradients, which the fast path leaves to the reference: their forward
// intermediates are compared with gradients off, and the full spec must come back exactly as the
// reference computes it.
import * as assert from 'node:assert/strict';
import { runAttention } from '../../../src/core/engine';
import { referenceOnly, runAttentionFast } from '../../../src/core/engine/fast';
import type { AttentionSpec } from '../../../src/core/types';
import { assertChecksAsReference, assertForwardMatches, type Fixture, loadFixtures, specOf } from '../engine/fixtures';

/** The fixtures are small: make the fast path take them (it hands small problems to the reference). */
const ALWAYS_FAST = { referenceBelowFlops: 0 };

function forwardSpecOf(fixture: Fixture): AttentionSpec {
  const spec = specOf(fixture);
  return { ...spec, options: { ...spec.options, gradients: false } };
}

describe('fast path against numpy/PyTorch fixtures', () => {
  const fixtures = loadFixtures();
  const covered = fixtures.filter((f) => referenceOnly(forwardSpecOf(f)) === undefined);

  it('covers most fixtures', () => {
    assert.ok(covered.length >= 20, `only ${covered.length} of ${fixtures.length} fixtures run on the fast path`);
  });

  for (const fixture of covered) {
    it(`${fixture.name}: ${fixture.description}`, async () => {
      const result = await runAttentionFast(forwardSpecOf(fixture), ALWAYS_FAST);
      assert.ok(result.output.data.buffer instanceof SharedArrayBuffer, 'computed by the wasm kernels');
      assertForwardMatches(result, fixture);
    });

    it(`${fixture.name}: same checks and warnings as the reference`, async () => {
      const spec = forwardSpecOf(fixture);
      assertChecksAsReference(await runAttentionFast(spec, ALWAYS_FAST), runAttention(spec), fixture.dtype);
    });
  }

  it('hands problems under 2 MFLOP to the reference by default', async () => {
    const spec = forwardSpecOf(fixtures.find((f) => f.name === 'worked-example') as Fixture);
    const { elapsedMs: _fast, ...fast } = await runAttentionFast(spec);
    const { elapsedMs: _reference, ...reference } = runAttention(spec);
    assert.deepEqual(fast, reference);
  });

  it('checks permutation equivariance of a long sequence on the same 64 rows as the reference', async () => {
    const rows = 300;
    const X = { rows, cols: 8, data: Float64Array.from({ length: rows * 8 }, (_, i) => Math.sin(i * 0.37)) };
    for (const dtype of ['float64', 'float32'] as const) {
      const spec: AttentionSpec = { options: { heads: 2, score: 'scaled_dot', dtype }, X, WO: { rows: 8, cols: 8, data: Float64Array.from({ length: 64 }, (_, i) => Math.cos(i)) } };
      const fast = await runAttentionFast(spec, ALWAYS_FAST);
      const reference = runAttention(spec);
      assert.ok(fast.output.data.buffer instanceof SharedArrayBuffer, 'computed by the wasm kernels');
      assert.deepEqual([fast.checks.permutationEquivariant, fast.checks.permutationRowsChecked], [true, 64], dtype);
      assert.deepEqual([reference.checks.permutationEquivariant, reference.checks.permutationRowsChecked], [true, 64], dtype);
    }
  });

  it('permutation checks running at once (each rerun on its own memory) measure what they measure one by one', async () => {
    const specs = [90, 130, 170].map((rows, k): AttentionSpec => ({
      options: { heads: 2, score: 'scaled_dot', dtype: 'float32' },
      X: { rows, cols: 8, data: Float64Array.from({ length: rows * 8 }, (_, i) => Math.sin(i * (0.3 + k * 0.1))) },
    }));
    const oneByOne: (number | undefined)[] = [];
    for (const spec of specs) oneByOne.push((await runAttentionFast(spec, ALWAYS_FAST)).checks.permutationMaxError);
    const atOnce = await Promise.all(specs.map((spec) => runAttentionFast(spec, ALWAYS_FAST)));
    assert.deepEqual(atOnce.map((result) => result.checks.permutationMaxError), oneByOne);
    assert.ok(atOnce.every((result) => result.checks.permutationEquivariant === true));
  });

  for (const fixture of fixtures.filter((f) => referenceOnly(specOf(f)) !== undefined)) {
    it(`${fixture.name}: left to the reference (${referenceOnly(specOf(fixture))})`, async () => {
      const { elapsedMs: _fast, ...fast } = await runAttentionFast(specOf(fixture), ALWAYS_FAST);
      const { elapsedMs: _reference, ...reference } = runAttention(specOf(fixture));
      assert.deepEqual(fast, reference);
    });
  }
});
