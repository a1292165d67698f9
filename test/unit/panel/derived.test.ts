// Scaled scores posted as a rule: only where scores × scale, rounded to the dtype, gives every
// entry's very bits — for both engines and dtypes — and the page's rebuild is those bits.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAttention } from '../../../src/core/engine';
import { runAttentionFast } from '../../../src/core/engine/fast';
import { parseDocument } from '../../../src/core/parse';
import { buildSpec } from '../../../src/core/spec';
import type { AttentionResult } from '../../../src/core/types';
import { deferOffScreen } from '../../../src/panel/deferral';
import { withScaledAsRule, withScaledNumbers } from '../../../src/panel/derived';
import { resultViewOf } from '../../../src/panel/model';
import type { ResultView } from '../../../src/protocol';
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

/** Every head's scaled view rebuilt from the rule has the engine's bits; true when a rule went out. */
function assertRoundTrip(views: ResultView): boolean {
  const posted = withScaledAsRule(views);
  const shown = withScaledNumbers(posted);
  views.heads.forEach((head, h) => {
    const rebuilt = shown.heads[h];
    assert.equal(rebuilt.scaled.data.length, head.scaled.data.length);
    head.scaled.data.forEach((value, i) => assert.ok(Object.is(rebuilt.scaled.data[i], value), `head ${h + 1} scaled[${i}]: ${rebuilt.scaled.data[i]} for ${value}`));
    head.masked.data.forEach((value, i) => assert.ok(Object.is(rebuilt.masked.data[i], value), `head ${h + 1} masked[${i}]`));
    assert.equal(rebuilt.scores, head.scores);
  });
  return posted.heads.some((head) => head.scaled.data.length === 0);
}

describe('scaled scores posted as a rule (panel/derived)', () => {
  it('float64, 1/√2 (not a power of two): posted as a rule, rebuilt bit for bit', () => {
    assert.ok(assertRoundTrip(viewsOf(runAttention(specOf(example('01-worked-example.md'))))));
  });

  for (const dtype of ['float32', 'float64'] as const) {
    it(`${dtype} on the WebAssembly kernels, 4 causal heads of 96 tokens: a rule, rebuilt bit for bit`, async () => {
      const spec = specOf(causalNote(96, 3));
      spec.options.dtype = dtype;
      const result = await runAttentionFast(spec, { referenceBelowFlops: 0 });
      assert.ok(result.heads[0].scores.data.buffer instanceof SharedArrayBuffer, 'the fast path computed it');
      assert.ok(assertRoundTrip(viewsOf(result)));
    });
  }

  it('a softcapped score is no multiple of the raw one: its numbers go out', () => {
    const views = viewsOf(runAttention(specOf(example('10-softcap.md'))));
    assert.equal(assertRoundTrip(views), false);
    assert.equal(withScaledAsRule(views), views);
  });

  it('the masked step follows a rule only where it is the scaled view itself', () => {
    const causal = viewsOf(runAttention(specOf(causalNote(20, 1, 2))));
    const posted = withScaledAsRule(causal);
    assert.equal(posted.heads[0].scaled.data.length, 0);
    assert.equal(posted.heads[0].masked, causal.heads[0].masked, 'a masked view of its own goes out as it is');
  });

  it('leaves a view held back for later alone', () => {
    const [held, next] = [1, 2].map((seed) => viewsOf(runAttention(specOf(causalNote(96, seed)))));
    const { update } = deferOffScreen(next, held, [{ head: 0, key: 'scaled' }]);
    const posted = withScaledAsRule(update);
    assert.equal(posted.heads[0].scaled, update.heads[0].scaled, 'its scores were held back: the scaled numbers go out');
    assert.equal(posted.heads[1].scaled, update.heads[1].scaled, 'held back too');
  });
});
