// On-screen views first: an update of the problem a page shows carries the large views of the
// heatmaps on screen; the others go out once the page asks, and the page shows what it held there
// meanwhile. Real results of the engine, two edits of one 96-token, 4-head causal problem.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { runAttention } from '../../../src/core/engine';
import { parseDocument } from '../../../src/core/parse';
import { buildSpec } from '../../../src/core/spec';
import { deferOffScreen, DEFER_MIN_CELLS, fillDeferred, isDeferred, sameLayout, viewEntries, withViews } from '../../../src/views/deferral';
import { resultViewOf } from '../../../src/views/model';
import type { MatrixView, ResultView, ViewRef } from '../../../src/protocol';
import { causalNote } from '../../fixtures/causalNote';

/** Views of a causal problem of `tokens` tokens and 4 heads; `seed` changes every number. */
function resultOf(tokens: number, seed: number, heads = 4): ResultView {
  const [problem] = parseDocument(causalNote(tokens, seed, heads)).problems;
  const { spec } = buildSpec(problem);
  assert.ok(spec);
  return resultViewOf(runAttention(spec), undefined);
}

const large = (view: MatrixView) => view.rows * view.cols >= DEFER_MIN_CELLS;
const id = (ref: ViewRef) => `${ref.head}:${ref.key}`;

describe('on-screen views first (views/deferral)', () => {
  const held = resultOf(96, 1);
  const next = resultOf(96, 2);
  const onScreen: ViewRef[] = [{ head: 0, key: 'scores' }, { head: 0, key: 'scaled' }];

  it('holds back exactly the large views off screen, each once however many heads share it', () => {
    const { update, deferred } = deferOffScreen(next, held, onScreen);
    const shown = new Set(onScreen.map(id));
    const sharedWithScreen = new Set(viewEntries(next).filter(({ ref }) => shown.has(id(ref))).map(({ view }) => view));
    for (const { ref, view } of viewEntries(next)) {
      const posted = viewEntries(update).find((entry) => id(entry.ref) === id(ref))!.view;
      const heldBack = large(view) && !sharedWithScreen.has(view);
      assert.equal(isDeferred(posted), heldBack, `${id(ref)}: ${heldBack ? 'held back' : 'posted'}`);
      if (!heldBack) assert.equal(posted, view, `${id(ref)} goes out as it is`);
      else assert.equal(posted.data.length, 0);
    }
    // Head 1's scores and scaled on screen; everything else of n×n size waits: 4 heads × (scores,
    // scaled, masked, weights) less the two on screen, and the heads' one causal mask, once.
    assert.equal(deferred.length, 4 * 4 - 2 + 1);
    const mask = deferred.find(({ view }) => view === next.heads[0].mask)!;
    assert.deepEqual(mask.refs.map(id), ['0:mask', '1:mask', '2:mask', '3:mask']);
    const heldBytes = deferred.reduce((sum, { view }) => sum + view.data.byteLength, 0);
    assert.ok(heldBytes > 0.8 * 17 * 96 * 96 * 8 - 1, `${heldBytes} bytes held back`);
  });

  it('the page shows the held views in their places, then exactly the new result once the rest arrives', () => {
    const { update, deferred } = deferOffScreen(next, held, onScreen);
    const stale: MatrixView[] = [];
    const shown = fillDeferred(update, held, (view) => stale.push(view));
    for (const { ref, view } of viewEntries(shown)) {
      const expected = stale.includes(view) ? viewEntries(held) : viewEntries(next);
      assert.equal(view, expected.find((entry) => id(entry.ref) === id(ref))!.view, id(ref));
      assert.ok(!isDeferred(view));
    }
    assert.equal(stale.length, deferred.reduce((sum, { refs }) => sum + refs.length, 0));
    const complete = withViews(shown, deferred.flatMap(({ refs, view }) => refs.map((ref) => ({ ref, view }))));
    assert.deepEqual(viewEntries(complete).map(({ ref, view }) => [id(ref), view]), viewEntries(next).map(({ ref, view }) => [id(ref), view]));
  });

  it('holds back nothing the page does not hold in the same shape (a token added, a new problem)', () => {
    const longer = resultOf(97, 2);
    const { update, deferred } = deferOffScreen(longer, held, onScreen);
    assert.equal(deferred.length, 0);
    assert.equal(update, longer);
    const fewerHeads = resultOf(96, 2, 2);
    const split = deferOffScreen(next, fewerHeads, []);
    assert.ok(split.deferred.every(({ refs }) => refs.every((ref) => ref.head < 2)), 'heads 3 and 4 are new to the page: posted');
  });

  it('says two results are laid out alike only when every view is at the same place in the same shape', () => {
    assert.ok(sameLayout(next, held), 'other numbers, the same cards');
    assert.ok(!sameLayout(resultOf(97, 2), held), 'a token more');
    assert.ok(!sameLayout(resultOf(96, 2, 2), held), 'fewer heads');
  });

  it('posts small problems whole', () => {
    const small = resultOf(32, 2);
    assert.equal(deferOffScreen(small, resultOf(32, 1), []).deferred.length, 0);
  });

  it('whatever is on screen: the update, filled from the held views and then completed, is the new result', () => {
    const refs = viewEntries(next).map(({ ref }) => ref);
    fc.assert(
      fc.property(fc.subarray(refs), (visible) => {
        const { update, deferred } = deferOffScreen(next, held, visible);
        const shown = fillDeferred(update, held, () => {});
        for (const ref of visible) {
          const entry = viewEntries(shown).find((e) => id(e.ref) === id(ref))!;
          assert.equal(entry.view, viewEntries(next).find((e) => id(e.ref) === id(ref))!.view, `${id(ref)} on screen is new`);
        }
        const complete = withViews(shown, deferred.flatMap((d) => d.refs.map((ref) => ({ ref, view: d.view }))));
        for (const [i, { view }] of viewEntries(complete).entries()) assert.equal(view, viewEntries(next)[i].view);
      }),
      { numRuns: 60 },
    );
  });
});
