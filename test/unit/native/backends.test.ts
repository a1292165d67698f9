// Both fast backends on the same numpy/PyTorch fixtures, each forced in turn
// (ATTENTION_LENS_BACKEND=native|wasm): every intermediate within the fixture's tolerance (1e-12
// float64, 1e-5 float32), the reference's warnings and checks, the output-only path; then the
// selection by measurement when nothing is forced.
import * as assert from 'node:assert/strict';
import { runAttention } from '../../../src/core/engine';
import { referenceOnly } from '../../../src/core/engine/fast';
import { attentionGraph, classKey, prepareNative } from '../../../src/core/engine/native/attention';
import { cachedSessions, nativeThreads } from '../../../src/core/engine/native/runtime';
import { attentionOutputOnBackend, backendFor, runAttentionOnBackend } from '../../../src/core/engine/native/select';
import type { AttentionSpec, Matrix } from '../../../src/core/types';
import { withoutRuledNumbers, withRuledNumbers } from '../../../src/views/derived';
import { resultViewOf } from '../../../src/views/model';
import { forced } from './choice';
import { assertChecksAsReference, assertForwardMatches, assertMatrixClose, type Fixture, loadFixtures, specOf } from '../engine/fixtures';

/** The fixtures are small: make the WebAssembly path take them (it hands small problems to the reference). */
const ALWAYS_FAST = { referenceBelowFlops: 0 };
const BACKENDS = { native: 'onnxruntime', wasm: 'wasm' } as const;

function forwardSpecOf(fixture: Fixture): AttentionSpec {
  const spec = specOf(fixture);
  return { ...spec, options: { ...spec.options, gradients: false } };
}

const seeded = (rows: number, cols: number, seed: number): Matrix => ({ rows, cols, data: Float64Array.from({ length: rows * cols }, (_, i) => Math.sin(seed * 7.1 + i * 0.37)) });

describe('native and WebAssembly backends on the same fixtures', () => {
  const fixtures = loadFixtures();
  const covered = fixtures.filter((f) => referenceOnly(forwardSpecOf(f)) === undefined && (f.spec.X || f.spec.Q));

  it('covers most fixtures', () => {
    assert.ok(covered.length >= 20, `only ${covered.length} of ${fixtures.length} fixtures run on the fast backends`);
  });

  for (const backend of ['native', 'wasm'] as const) {
    for (const fixture of covered) {
      it(`${backend}: ${fixture.name}: every step, warnings and checks as the reference`, async () => {
        const spec = forwardSpecOf(fixture);
        const result = await forced(backend, () => runAttentionOnBackend(spec, ALWAYS_FAST));
        assert.equal(result.backend?.name, BACKENDS[backend]);
        assert.equal(result.backend?.fallback, undefined);
        assertForwardMatches(result, fixture);
        assertChecksAsReference(result, runAttention(spec), fixture.dtype);
      });

      it(`${backend}: ${fixture.name}: output only`, async () => {
        const spec = forwardSpecOf(fixture);
        const out = await forced(backend, () => attentionOutputOnBackend(spec));
        assertMatrixClose(out.output, fixture.expected.output as never, fixture.tolerance, 'output');
        assertMatrixClose(out.concat, fixture.expected.concat as never, fixture.tolerance, 'concat');
        assert.deepEqual(out.warnings, runAttention(spec).warnings);
      });
    }
  }

  it('native: one session per shape class, whatever the token count', async () => {
    const spec = (n: number): AttentionSpec => ({ options: { heads: 2, kvHeads: 1, score: 'scaled_dot', dtype: 'float32', causal: 'bottom-right' }, X: seeded(n, 8, 1), WQ: [seeded(8, 8, 2)], WK: [seeded(8, 4, 3)], WV: [seeded(8, 4, 4)] });
    const key = (n: number): string => classKey(prepareNative(spec(n), true)!.shapeClass);
    assert.equal(key(5), key(300));
    await forced('native', () => runAttentionOnBackend(spec(5)));
    const sessions = cachedSessions();
    for (const n of [7, 40, 300]) {
      const result = await forced('native', () => runAttentionOnBackend(spec(n)));
      assert.equal(result.backend?.name, 'onnxruntime');
      const reference = runAttention(spec(n));
      for (let i = 0; i < 2; i++) assertMatrixClose(result.heads[i].weights, toJson(reference.heads[i].weights), 1e-5, `weights of head ${i + 1}, n = ${n}`);
      assertMatrixClose(result.output, toJson(reference.output), 1e-5, `output, n = ${n}`);
    }
    assert.equal(cachedSessions(), sessions, 'a new session for a new token count');
  });

  it('native: keeps every n×n step inside one graph, fetching only what the panel shows', () => {
    const run = prepareNative({ options: { heads: 4, score: 'dot', dtype: 'float64' }, Q: seeded(6, 8, 1), K: seeded(6, 8, 2), V: seeded(6, 8, 3) }, true)!;
    const names = attentionGraph(run.shapeClass).outputNames;
    assert.deepEqual(names.sort(), ['K', 'Q', 'V', 'headOutputs', 'output', 'rowSums', 'scores', 'weights']);
    const outputOnly = prepareNative({ options: { heads: 4, score: 'dot', dtype: 'float64' }, Q: seeded(6, 8, 1), K: seeded(6, 8, 2), V: seeded(6, 8, 3) }, false)!;
    assert.deepEqual(attentionGraph(outputOnly.shapeClass).outputNames, ['output']);
  });
});

describe('backend selection', () => {
  const problem = (n: number, dtype: 'float32' | 'float64'): AttentionSpec => ({ options: { heads: 2, score: 'scaled_dot', dtype }, X: seeded(n, 32, 1), WQ: [seeded(32, 32, 2)], WK: [seeded(32, 32, 3)], WV: [seeded(32, 32, 4)] });

  it('as measured: float32 output-only runs beyond 2 MFLOP natively; the panel\'s runs and float64 on the WebAssembly kernels; small problems on the reference', async () => {
    await forced(undefined, async () => {
      assert.equal(backendFor(problem(256, 'float32'), false), 'onnxruntime');
      assert.equal(backendFor(problem(256, 'float64'), false), 'wasm');
      assert.equal(backendFor(problem(4, 'float32'), false), 'wasm');
      assert.equal((await runAttentionOnBackend(problem(256, 'float32'))).backend?.name, 'wasm');
      assert.equal((await runAttentionOnBackend(problem(256, 'float64'))).backend?.name, 'wasm');
      assert.equal((await runAttentionOnBackend(problem(4, 'float32'))).backend, undefined);
    });
  });

  it('leaves the reference-only cases (gradients, other scores, variants) to the reference engine', async () => {
    const spec = problem(64, 'float32');
    const graded = await forced('native', () => runAttentionOnBackend({ ...spec, options: { ...spec.options, gradients: true } }));
    assert.equal(graded.backend, undefined);
    assert.ok(graded.gradients);
  });

  it('reports shapes that do not fit with the reference engine\'s message', async () => {
    const spec = problem(16, 'float32');
    await assert.rejects(forced('native', () => runAttentionOnBackend({ ...spec, WK: [seeded(31, 32, 3)] })), /W_K|31/);
  });

  it('gives ONNX Runtime every core, but one left to the editor beyond 2', () => {
    assert.deepEqual([1, 2, 3, 4, 16].map((cores) => nativeThreads(cores)), [1, 2, 2, 3, 15]);
  });
});

function toJson(m: Matrix): number[][] {
  return Array.from({ length: m.rows }, (_, r) => Array.from(m.data.subarray(r * m.cols, (r + 1) * m.cols)));
}

describe('native results in the panel', () => {
  it('a view travels as a rule only where the rule gives its every bit; otherwise its numbers travel', async () => {
    const spec: AttentionSpec = { options: { heads: 2, score: 'scaled_dot', dtype: 'float32' }, X: seeded(48, 16, 1), WQ: [seeded(16, 16, 2)], WK: [seeded(16, 16, 3)], WV: [seeded(16, 16, 4)] };
    const result = await forced('native', () => runAttentionOnBackend(spec));
    assert.equal(result.backend?.name, 'onnxruntime');
    const view = resultViewOf(result, undefined);
    const rebuilt = withRuledNumbers(withoutRuledNumbers(view));
    view.heads.forEach((head, i) => {
      for (const step of ['scores', 'scaled'] as const) {
        const sent = rebuilt.heads[i][step].data;
        const computed = result.heads[i][step].data;
        assert.equal(sent.length, computed.length, `${step} of head ${i + 1}`);
        // Bit for bit (as float32 values), whether the rule or the numbers carried them.
        computed.forEach((x, p) => assert.ok(Object.is(sent[p], x), `${step} of head ${i + 1} [${p}]: ${sent[p]} vs ${x} (${head[step].rule?.kind ?? 'numbers'})`));
      }
    });
  });
});
