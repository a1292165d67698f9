// Views posted as a rule: only where the rule gives every entry's very bits — for both engines
// and dtypes — and the page's rebuild is those bits.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAttention } from '../../../src/core/engine';
import { runAttentionFast } from '../../../src/core/engine/fast';
import { kernelsFlavour } from '../../../src/core/engine/fast/pool';
import { parseDocument } from '../../../src/core/parse';
import { buildSpec } from '../../../src/core/spec';
import type { AttentionResult } from '../../../src/core/types';
import { deferOffScreen, fillDeferred, viewEntries, withViews } from '../../../src/views/deferral';
import { heldBackWithoutRuledNumbers, withoutRuledNumbers, withRuledNumbers } from '../../../src/views/derived';
import { resultViewOf } from '../../../src/views/model';
import type { MatrixView, ResultView } from '../../../src/protocol';
import { causalNote } from '../../fixtures/causalNote';

const root = join(__dirname, '..', '..', '..');

function specOf(text: string) {
  const [problem] = parseDocument(text).problems;
  const { spec } = buildSpec(problem);
  assert.ok(spec);
  return spec;
}

const example = (name: string) => readFileSync(join(root, 'examples', name), 'utf8');
const viewsOf = (result: AttentionResult): ResultView => resultViewOf(result, undefined);

const sameBits = (a: MatrixView, b: MatrixView, what: string) => {
  assert.equal(a.data.length, b.data.length, what);
  a.data.forEach((value, i) => assert.ok(Object.is(value, b.data[i]), `${what}[${i}]: ${value} for ${b.data[i]}`));
};

/** Posted without ruled numbers, rebuilt on the page: every head's steps have the engine's bits.
 * The names of the views that went as rules. */
function roundTrip(views: ResultView): string[] {
  const posted = withoutRuledNumbers(views);
  const shown = withRuledNumbers(posted);
  const ruled: string[] = [];
  views.heads.forEach((head, h) => {
    for (const key of ['scores', 'scaled', 'masked'] as const) {
      sameBits(shown.heads[h][key], head[key], `head ${h + 1} ${key}`);
      if (posted.heads[h][key].data.length === 0 && key !== 'masked') ruled.push(`${key}${head[key].rule?.kind === 'QK' ? ` (${(head[key].rule as { rounding: string }).rounding})` : ''}`);
    }
  });
  return [...new Set(ruled)];
}

describe('views posted as rules (views/derived)', () => {
  it('reference engine, float64 (1/√2 scale, not a power of two): scores and scaled as rules, rebuilt bit for bit', () => {
    assert.deepEqual(roundTrip(viewsOf(runAttention(specOf(example('01-worked-example.md'))))), ['scores (sum)', 'scaled']);
  });

  it('reference engine, float32: summed in float64, rounded once', () => {
    const spec = specOf(causalNote(40, 2));
    spec.options.dtype = 'float32';
    assert.deepEqual(roundTrip(viewsOf(runAttention(spec))), ['scores (sum)', 'scaled']);
  });

  for (const dtype of ['float32', 'float64'] as const) {
    // Fused float64 multiply-adds (the relaxed-SIMD build) have no rule in JavaScript: numbers.
    const fused = kernelsFlavour() === 'relaxed';
    const scores = dtype === 'float32' ? [`scores (${fused ? 'fused' : 'steps'})`] : fused ? [] : ['scores (sum)'];
    it(`${dtype} on the ${fused ? 'relaxed-SIMD' : '128-bit SIMD'} kernels, 4 causal heads of 96 tokens: ${[...scores, 'scaled'].join(', ')} as rules, rebuilt bit for bit`, async () => {
      const spec = specOf(causalNote(96, 3));
      spec.options.dtype = dtype;
      const result = await runAttentionFast(spec, { referenceBelowFlops: 0 });
      assert.ok(result.heads[0].scores.data.buffer instanceof SharedArrayBuffer, 'the fast path computed it');
      assert.deepEqual(roundTrip(viewsOf(result)), [...scores, 'scaled']);
    });
  }

  it('a softcapped score is no multiple of the raw one, and RoPE-turned scores no product of the Q shown: their numbers go out', () => {
    assert.deepEqual(roundTrip(viewsOf(runAttention(specOf(example('10-softcap.md'))))), ['scores (sum)']);
    assert.ok(!roundTrip(viewsOf(runAttention(specOf(example('08-rope-gqa.md'))))).some((name) => name.startsWith('scores')));
  });

  it('the masked step follows the scaled rule only where it is the scaled view itself', () => {
    const causal = viewsOf(runAttention(specOf(causalNote(20, 1, 2))));
    const posted = withoutRuledNumbers(causal);
    assert.equal(posted.heads[0].scaled.data.length, 0);
    assert.equal(posted.heads[0].masked, causal.heads[0].masked, 'a masked view of its own goes out as it is');
  });

  it('a view whose sources are held back goes with its numbers; a held-back view is never a rule', () => {
    const [held, next] = [1, 2].map((seed) => viewsOf(runAttention(specOf(causalNote(96, seed)))));
    const { update } = deferOffScreen(next, held, [{ head: 0, key: 'scaled' }]);
    assert.ok(update.heads[0].scores.data.length > 0 && update.heads[0].Q.data.length > 0, 'what the scaled scores on screen follow from goes now');
    const posted = withoutRuledNumbers(update);
    assert.equal(posted.heads[0].scaled.data.length, 0);
    assert.equal(posted.heads[1].scaled, update.heads[1].scaled, 'held back: stays a placeholder');
  });

  it('held-back views go as rules when the page asks for them, and the page then holds the new result bit for bit', () => {
    const [held, next] = [1, 2].map((seed) => viewsOf(runAttention(specOf(causalNote(128, seed)))));
    const { update, deferred } = deferOffScreen(next, held, [{ head: 0, key: 'scores' }]);
    const reply = heldBackWithoutRuledNumbers(deferred);
    const bytes = (views: typeof deferred) => views.reduce((sum, { view }) => sum + view.data.byteLength, 0);
    assert.deepEqual(
      reply.filter(({ view }) => view.data.length === 0).map(({ refs }) => refs.map((ref) => `${ref.head}:${ref.key}`).join()),
      deferred.filter(({ view }) => view.rule).map(({ refs }) => refs.map((ref) => `${ref.head}:${ref.key}`).join()),
      'exactly the ruled views go without numbers',
    );
    assert.ok(reply.some(({ view }) => view.data.length === 0) && bytes(reply) < bytes(deferred));
    // The page: the update over what it held, then the reply over that.
    const shown = withRuledNumbers(fillDeferred(withoutRuledNumbers(update), held, () => {}));
    const complete = withRuledNumbers(withViews(shown, reply.flatMap(({ refs, view }) => refs.map((ref) => ({ ref, view })))));
    const expected = viewEntries(next);
    viewEntries(complete).forEach(({ ref, view }, i) => sameBits(view, expected[i].view, `head ${ref.head + 1} ${ref.key}`));
  });
});
