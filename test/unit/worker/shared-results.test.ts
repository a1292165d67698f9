// Fast results reach the host as views on their run's shared memory: the worker must never write
// that memory again. Consecutive runs (the later ones on memory the worker faulted in ahead of
// time) leave every earlier result exactly as it arrived, and compute their own numbers right.
import * as assert from 'node:assert/strict';
import { join } from 'node:path';
import { runAttention } from '../../../src/core/engine';
import type { AttentionResult, AttentionSpec, Matrix } from '../../../src/core/types';
import { AttentionWorker } from '../../../src/worker/client';

/** Numbers in [−1, 1] that differ with the seed. */
function inputs(rows: number, cols: number, seed: number): Matrix {
  return { rows, cols, data: Float64Array.from({ length: rows * cols }, (_, p) => Math.sin(seed * 7919 + p * 0.37)) };
}

/** 256 tokens, d_k = 64: large enough for the fast path (it leaves tiny problems to the reference). */
function specOf(seed: number): AttentionSpec {
  const options = { heads: 1, score: 'scaled_dot' as const, dtype: 'float32' as const };
  return { options, Q: inputs(256, 64, seed), K: inputs(256, 64, seed + 1), V: inputs(256, 64, seed + 2) };
}

/** Every matrix of the result as plain numbers, at this moment. */
function snapshot(result: AttentionResult): number[][] {
  const { Q, K, V, scores, weights, output } = result.heads[0];
  return [Q, K, V, scores, weights, output, result.output].map((m) => Array.from(m.data));
}

describe('worker: fast results stay as they arrived', function () {
  this.timeout(60_000);
  let worker: AttentionWorker;
  // The WebAssembly backend's results are the shared ones (its thread copies the environment it starts with).
  const chosen = process.env.ATTENTION_LENS_BACKEND;
  before(() => (process.env.ATTENTION_LENS_BACKEND = 'wasm'));
  after(() => {
    if (chosen === undefined) delete process.env.ATTENTION_LENS_BACKEND;
    else process.env.ATTENTION_LENS_BACKEND = chosen;
  });
  beforeEach(() => {
    worker = new AttentionWorker(join(__dirname, 'tsWorker.cjs'), { maxOldGenerationSizeMb: 512 }, () => undefined);
  });
  afterEach(() => worker.dispose());

  async function run(spec: AttentionSpec): Promise<AttentionResult> {
    const [outcome] = await worker.run('document', [{ index: 0, spec }]).outcomes;
    assert.ok(outcome && 'result' in outcome, JSON.stringify(outcome));
    return outcome.result;
  }

  it('later runs of the same document leave the earlier results intact, and are right themselves', async () => {
    const first = await run(specOf(1));
    assert.ok(first.output.data.buffer instanceof SharedArrayBuffer, 'the result is shared memory (else this test proves nothing)');
    const results = [first];
    const seen = [snapshot(first)];
    for (const seed of [10, 20, 30]) {
      const result = await run(specOf(seed));
      const reference = runAttention(specOf(seed));
      result.output.data.forEach((x, p) => assert.ok(Math.abs(x - reference.output.data[p]) <= 1e-5, `run ${seed}: output[${p}] ${x} vs ${reference.output.data[p]}`));
      results.push(result);
      seen.push(snapshot(result));
    }
    results.forEach((result, k) => assert.deepEqual(snapshot(result), seen[k], `result ${k + 1} changed after it arrived`));
  });
});
