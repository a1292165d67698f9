// On-screen views first. A result's views can be megabytes (a 512-token head: 2 MB per step), and
// in code-server every byte crosses a compressed websocket at ~20 MB/s: posting them all made an
// edit of a 512-token problem wait ~330 ms for views that were mostly off screen. So an update of
// the problem the page already shows carries only the large views of cards the page reported on
// screen; each other large view is posted as a placeholder of the same shape ("deferred"), the
// page keeps showing what it holds there (marked out of date), and asks for the rest once it has
// drawn (src/panel/session.ts, webview/main.ts). Pure: the host and the page share it.
import type { DeferredViews, HeadView, MatrixView, ResultView, ViewRef } from '../protocol';
import { sourcesOf, withoutNumbers } from './derived';
import { GRADIENT_KEYS, isGradientKey, isLayerKey, LAYER_KEYS, viewAt } from './matrixKeys';

/** Views smaller than this (cells) always travel with their update: too small to be worth a wait. */
export const DEFER_MIN_CELLS = 4096;

const HEAD_KEYS = ['Q', 'K', 'V', 'scores', 'scaled', 'mask', 'masked', 'weights', 'output', 'givenWeights'] as const;

/** A view posted without its numbers: the page holds a view of this shape at the same place. */
export type DeferredView = MatrixView & { deferred: true };

export const isDeferred = (view: MatrixView): view is DeferredView => (view as Partial<DeferredView>).deferred === true;

/** Every (ref, view) of a result's heads, gradients and layer, heads first. */
export function viewEntries(result: ResultView): { ref: ViewRef; view: MatrixView }[] {
  const entries: { ref: ViewRef; view: MatrixView }[] = [];
  result.heads.forEach((head, index) => {
    for (const key of HEAD_KEYS) {
      const view = head[key];
      if (view) entries.push({ ref: { head: index, key }, view });
    }
    for (const key of GRADIENT_KEYS) {
      const view = head.gradients?.[key];
      if (view) entries.push({ ref: { head: index, key }, view });
    }
  });
  for (const key of LAYER_KEYS) {
    const view = result[key];
    if (view) entries.push({ ref: { head: 0, key }, view });
  }
  return entries;
}

/** The result with the views at these refs replaced (a new object; the rest shared). */
export function withViews(result: ResultView, replacements: { ref: ViewRef; view: MatrixView }[]): ResultView {
  const heads: HeadView[] = result.heads.map((head) => ({ ...head, ...(head.gradients ? { gradients: { ...head.gradients } } : {}) }));
  const replaced: ResultView = { ...result, heads };
  for (const { ref, view } of replacements) {
    if (isLayerKey(ref.key)) Object.assign(replaced, { [ref.key]: view });
    else if (isGradientKey(ref.key)) Object.assign(heads[ref.head]?.gradients ?? {}, { [ref.key]: view });
    else if (heads[ref.head]) Object.assign(heads[ref.head], { [ref.key]: view });
  }
  return replaced;
}

const refId = (ref: ViewRef): string => (isLayerKey(ref.key) ? ref.key : `${ref.head}:${ref.key}`);

const sameShape = (a: MatrixView, b: MatrixView): boolean =>
  a.sourceRows === b.sourceRows && a.sourceCols === b.sourceCols && a.rowStart === b.rowStart && a.colStart === b.colStart &&
  a.rowBlock === b.rowBlock && a.colBlock === b.colBlock && a.rows === b.rows && a.cols === b.cols;

/**
 * Splits `result` for a page that holds `held` and shows `onScreen`: the update to post now (large
 * off-screen views replaced by placeholders) and what it held back. A view is held back only where
 * the page holds one of the same shape at the same place, so the page always has something true
 * to show there, only older.
 */
export function deferOffScreen(result: ResultView, held: ResultView, onScreen: ViewRef[]): { update: ResultView; deferred: DeferredViews } {
  const shown = new Set(onScreen.map(refId));
  const entries = viewEntries(result);
  // A view shared with an on-screen place (the heads' one mask) goes out now, everywhere it is
  // used, and so do the views an on-screen view is computed from on the page (derived.ts).
  const onScreenViews = new Set(
    entries.filter(({ ref }) => shown.has(refId(ref))).flatMap(({ ref, view }) => [view, ...(isLayerKey(ref.key) ? [] : sourcesOf(result.heads[ref.head], view))]),
  );
  const placeholders = new Map<MatrixView, { placeholder: DeferredView; refs: ViewRef[] }>();
  const replacements: { ref: ViewRef; view: MatrixView }[] = [];
  for (const { ref, view } of entries) {
    if (view.rows * view.cols < DEFER_MIN_CELLS || onScreenViews.has(view)) continue;
    const heldView = viewAt(held, ref.head, ref.key);
    if (!heldView || !sameShape(heldView, view)) continue;
    let entry = placeholders.get(view);
    if (!entry) placeholders.set(view, (entry = { placeholder: { ...withoutNumbers(view), deferred: true }, refs: [] }));
    entry.refs.push(ref);
    replacements.push({ ref, view: entry.placeholder });
  }
  const deferred = Array.from(placeholders, ([view, { refs }]) => ({ view, refs }));
  return { update: replacements.length ? withViews(result, replacements) : result, deferred };
}

/**
 * Whether two results lay out the same cards: the same views at the same places, each of the same
 * shape. The page's report of what it has on screen then holds for either (another head of one
 * model's run opened in the step-by-step panel).
 */
export function sameLayout(a: ResultView, b: ResultView): boolean {
  const aEntries = viewEntries(a);
  const bEntries = viewEntries(b);
  return aEntries.length === bEntries.length && aEntries.every(({ ref, view }, i) => refId(ref) === refId(bEntries[i].ref) && sameShape(view, bEntries[i].view));
}

/**
 * What the page shows for an update with deferred views: each placeholder replaced by the view
 * it holds at that place (`stale` is told each of those, to mark them out of date).
 */
export function fillDeferred(update: ResultView, held: ResultView | undefined, stale: (view: MatrixView) => void): ResultView {
  const fills: { ref: ViewRef; view: MatrixView }[] = [];
  for (const { ref, view } of viewEntries(update)) {
    if (!isDeferred(view)) continue;
    const heldView = held && viewAt(held, ref.head, ref.key);
    // The host defers only what the page holds; should it not, NaN until the rest arrives.
    const shown = heldView && sameShape(heldView, view) ? heldView : { ...view, data: new Float64Array(view.rows * view.cols).fill(NaN) };
    stale(shown);
    fills.push({ ref, view: shown });
  }
  return fills.length ? withViews(update, fills) : update;
}
