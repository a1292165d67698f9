// Token choice (decoding.ts), by property: greedy is the largest logit with a tie to the lowest
// id, topIds agrees with a full sort, a sampled token always lies inside the step's top-k and
// top-p set, that set is the smallest reaching p, and a seed gives the same draws again.
import * as assert from 'node:assert/strict';
import * as fc from 'fast-check';
import { greedyToken, probabilitiesOf, sampledToken, samplingSet, samplingProblem, tokenChooser, topIds } from '../../../src/core/model/decoding';

/** Logits with ties likely: a few distinct values over a small vocabulary. */
const logitsArb = fc.array(fc.integer({ min: -40, max: 40 }).map((v) => v / 4), { minLength: 1, maxLength: 40 }).map((values) => Float32Array.from(values));
const samplingArb = fc.record({
  temperature: fc.double({ min: 0.05, max: 4, noNaN: true }),
  topK: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
  topP: fc.option(fc.double({ min: 0.01, max: 1, noNaN: true }), { nil: undefined }),
  seed: fc.integer(),
});

/** Every id sorted by logit, largest first, a tie to the lowest id. */
function sortedIds(logits: Float32Array): number[] {
  return [...logits.keys()].sort((a, b) => logits[b] - logits[a] || a - b);
}

describe('token choice', () => {
  it('greedy is the largest logit, a tie going to the lowest id', () => {
    fc.assert(fc.property(logitsArb, (logits) => greedyToken(logits) === sortedIds(logits)[0]));
    assert.equal(greedyToken(Float32Array.from([1, 3, 3, 2])), 1);
  });

  it('topIds are the first k of a full sort', () => {
    fc.assert(fc.property(logitsArb, fc.integer({ min: 1, max: 45 }), (logits, k) => assert.deepEqual(topIds(logits, k), sortedIds(logits).slice(0, k))));
  });

  it('a sampled token lies inside the top-k and top-p set', () => {
    fc.assert(
      fc.property(logitsArb, samplingArb, fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (logits, sampling, u) => {
        const id = sampledToken(logits, sampling, u);
        const sorted = sortedIds(logits);
        if (sampling.topK !== undefined) assert.ok(sorted.slice(0, sampling.topK).some((top) => logits[top] === logits[id]), `${id} outside the top ${sampling.topK}`);
        assert.ok(samplingSet(logits, sampling).ids.includes(id));
      }),
    );
  });

  it("top-p keeps the smallest set of the most probable tokens whose probabilities reach p", () => {
    fc.assert(
      fc.property(logitsArb, fc.double({ min: 0.01, max: 0.99, noNaN: true }), fc.double({ min: 0.1, max: 3, noNaN: true }), (logits, topP, temperature) => {
        const { ids, probabilities } = samplingSet(logits, { temperature, topP, seed: 0 });
        const whole = probabilitiesOf(logits, ids, temperature);
        const mass = whole.reduce((a, b) => a + b, 0);
        assert.ok(mass >= topP - 1e-12, `${mass} < ${topP}`);
        assert.ok(mass - whole[whole.length - 1] < topP + 1e-12, 'one fewer would already reach p');
        assert.ok(Math.abs(probabilities.reduce((a, b) => a + b, 0) - 1) < 1e-9);
        assert.deepEqual(ids, sortedIds(logits).slice(0, ids.length));
      }),
    );
  });

  it('top-p alone over a large vocabulary looks past its first 64 tokens', () => {
    const logits = Float32Array.from({ length: 1000 }, (_, id) => -id / 1000);
    const { ids } = samplingSet(logits, { temperature: 1, topP: 0.5, seed: 0 });
    const whole = probabilitiesOf(logits, ids);
    assert.ok(ids.length > 64 && whole.reduce((a, b) => a + b, 0) >= 0.5 && whole.reduce((a, b) => a + b, 0) - whole[whole.length - 1] < 0.5, `${ids.length} tokens`);
  });

  it('the same seed draws the same tokens; the draws follow the probabilities', () => {
    const logits = Float32Array.from([0, Math.log(3), 0.5, -1]);
    const draw = (seed: number) => {
      const choose = tokenChooser({ temperature: 1, seed });
      return Array.from({ length: 4000 }, () => choose(logits));
    };
    assert.deepEqual(draw(42), draw(42));
    assert.notDeepEqual(draw(42), draw(43));
    const counts = [0, 0, 0, 0];
    for (const id of draw(42)) counts[id]++;
    probabilitiesOf(logits, [0, 1, 2, 3]).forEach((p, id) => assert.ok(Math.abs(counts[id] / 4000 - p) < 0.03, `token ${id}: ${counts[id] / 4000} against ${p}`));
  });

  it('names each option it cannot sample with', () => {
    assert.match(samplingProblem({ temperature: 0, seed: 1 })!, /temperature must be a number above 0/);
    assert.match(samplingProblem({ temperature: 1, topK: -1, seed: 1 })!, /top-k must be a whole number of at least 0 \(0: no top-k\), not -1/);
    assert.equal(samplingProblem({ temperature: 1, topK: 0, seed: 1 }), undefined, 'top-k 0: no top-k, as transformers reads it');
    assert.deepEqual(samplingSet([0.5, 2, 1], { temperature: 1, topK: 0, seed: 1 }), samplingSet([0.5, 2, 1], { temperature: 1, seed: 1 }));
    assert.match(samplingProblem({ temperature: 1, topP: 0, seed: 1 })!, /top-p must be above 0/);
    assert.match(samplingProblem({ temperature: 1, seed: 0.5 })!, /seed must be a whole number/);
    assert.equal(samplingProblem({ temperature: 0.7, topK: 40, topP: 0.9, seed: 3 }), undefined);
  });
});
