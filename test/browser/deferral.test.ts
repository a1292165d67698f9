// On-screen views first, in Chromium: an update whose off-screen views the host held back
// (src/views/deferral.ts) shows its new numbers on screen at once, keeps the last numbers off
// screen marked out of date, asks for the rest, and once they arrive shows exactly the new result.
import assert from 'node:assert/strict';
import { runAttention } from '../../src/core/engine';
import { parseDocument } from '../../src/core/parse';
import { buildSpec } from '../../src/core/spec';
import { deferOffScreen } from '../../src/views/deferral';
import { heldBackWithoutRuledNumbers, withoutRuledNumbers } from '../../src/views/derived';
import { panelDataOf } from '../../src/views/model';
import type { HostToWebview, PanelData, WebviewToHost } from '../../src/protocol';
import { causalNote } from '../fixtures/causalNote';
import { choose, heatmapZ, panelPages, type PanelPage } from './harness';

/** The panel data of a 96-token, 2-head causal note; `seed` makes each edit's numbers. */
function dataOf(seed: number): PanelData {
  const problems = parseDocument(causalNote(96, seed, 2)).problems;
  const { spec } = buildSpec(problems[0]);
  assert.ok(spec);
  return panelDataOf({ uri: 'file:///notes/long.md', fileName: 'long.md', problems, problemIndex: 0, result: runAttention(spec) });
}

/** The z plotly holds for a card, as the numbers of that view (null for −∞ gaps). */
function zOf(data: PanelData, head: number, key: 'scores' | 'scaled' | 'weights'): (number | null)[][] {
  const view = data.result!.heads[head][key];
  return Array.from({ length: view.rows }, (_, r) => Array.from(view.data.subarray(r * view.cols, (r + 1) * view.cols), (v) => (Number.isFinite(v) ? v : null)));
}

async function waitForPosted<T extends WebviewToHost['type']>(panel: PanelPage, type: T, accept: (message: Extract<WebviewToHost, { type: T }>) => boolean): Promise<Extract<WebviewToHost, { type: T }>> {
  for (;;) {
    const found = (await panel.posted()).filter((m): m is Extract<WebviewToHost, { type: T }> => m.type === type).find(accept);
    if (found) return found;
    await panel.page.waitForTimeout(20);
  }
}

/** Two heatmaps a row, the first row on screen (the panel beside an editor on a laptop). */
const VIEWPORT = { viewport: { width: 1100, height: 700 } };

const deliver = (panel: PanelPage, message: HostToWebview) => panel.page.evaluate((m) => window.postMessage(m, '*'), message);

describe('panel: on-screen views first (Chromium)', function () {
  const pages = panelPages();

  it('draws the new numbers on screen, marks the held cards, asks for them, then shows the whole new result', async () => {
    const panel = await pages.open(VIEWPORT);
    const [first, second] = [dataOf(1), dataOf(2)];
    await panel.send({ type: 'data', data: first, update: 1 });
    const report = await waitForPosted(panel, 'onScreen', (m) => m.update === 1);
    assert.deepEqual(report.views, [{ head: 0, key: 'scores' }, { head: 0, key: 'scaled' }], 'the top of the Steps view: head 1’s scores and scaled scores');

    const split = deferOffScreen(second.result!, first.result!, report.views);
    assert.ok(split.deferred.length > 0);
    const before = await panel.page.evaluate(() => Number(document.body.dataset.rendered));
    // As the session posts it: the scores and scaled scores on screen as rules (views/derived.ts).
    const posted = withoutRuledNumbers(split.update);
    assert.equal(posted.heads[0].scores.data.length + posted.heads[0].scaled.data.length, 0);
    await deliver(panel, { type: 'data', data: { ...second, result: posted }, update: 2 });
    await panel.page.waitForFunction(() => document.body.hasAttribute('data-outdated'));
    assert.deepEqual(await heatmapZ(panel.page, 'card-h1-scores'), zOf(second, 0, 'scores'), 'on screen: the new scores');
    assert.deepEqual(await heatmapZ(panel.page, 'card-h1-scaled'), zOf(second, 0, 'scaled'), 'on screen: the new scaled scores, computed by the page');
    assert.deepEqual(await heatmapZ(panel.page, 'card-h1-weights'), zOf(first, 0, 'weights'), 'held back: the last weights');
    assert.equal(await panel.page.getAttribute('#card-h1-weights', 'data-outdated'), '');
    assert.match((await panel.page.textContent('#card-h1-weights .note.outdated')) ?? '', /Updating/);
    assert.equal(await panel.page.getAttribute('#card-h1-scores', 'data-outdated'), null);
    assert.equal(await panel.page.evaluate(() => Number(document.body.dataset.rendered)), before, 'not marked rendered while views are missing');

    await waitForPosted(panel, 'requestDeferred', (m) => m.update === 2);
    // As the session answers: head 2's scores and scaled scores as rules, computed by the page.
    const reply = heldBackWithoutRuledNumbers(split.deferred);
    assert.deepEqual(reply.filter(({ view }) => view.data.length === 0).flatMap(({ refs }) => refs), [{ head: 1, key: 'scores' }, { head: 1, key: 'scaled' }]);
    await panel.rendered(() => deliver(panel, { type: 'deferredViews', update: 2, views: reply }));
    assert.deepEqual(await heatmapZ(panel.page, 'card-h1-weights'), zOf(second, 0, 'weights'));
    assert.equal(await panel.page.$('[data-outdated]'), null);
    assert.deepEqual(await heatmapZ(panel.page, 'card-h1-scores'), zOf(second, 0, 'scores'));
    await choose(panel, 'Head', 'Head 2');
    for (const key of ['scores', 'scaled', 'weights'] as const) assert.deepEqual(await heatmapZ(panel.page, `card-h2-${key}`), zOf(second, 1, key), `head 2's ${key}`);
  });

  it('an out-of-date card scrolled into view asks for the held views at once, and the report follows the scroll', async () => {
    const panel = await pages.open(VIEWPORT);
    const [first, second] = [dataOf(3), dataOf(4)];
    await panel.send({ type: 'data', data: first, update: 1 });
    const report = await waitForPosted(panel, 'onScreen', (m) => m.update === 1);
    const split = deferOffScreen(second.result!, first.result!, report.views);
    // Scrolled into view the moment the update marks its cards out of date, in the page itself.
    await panel.page.evaluate((m) => new Promise<void>((resolve) => {
      new MutationObserver((_, observer) => {
        if (!document.body.hasAttribute('data-outdated')) return;
        observer.disconnect();
        document.getElementById('card-h1-weights')!.scrollIntoView();
        resolve();
      }).observe(document.body, { attributes: true, attributeFilter: ['data-outdated'] });
      window.postMessage(m, '*');
    }), { type: 'data', data: { ...second, result: split.update }, update: 2 } satisfies HostToWebview);
    // At once: the page reports what the scroll brought on screen and asks for the held views in
    // one go, so the messages it has posted by the moment the report is there hold the request,
    // right after the report (the idle request of views held back off screen comes later, alone).
    const posted = JSON.parse(await (await panel.page.waitForFunction(() => {
      const messages = (window as unknown as { posted: WebviewToHost[] }).posted;
      return messages.some((m) => m.type === 'onScreen' && m.update === 2 && m.views.some((v) => v.key === 'weights')) && JSON.stringify(messages);
    })).jsonValue() as string) as WebviewToHost[];
    const at = posted.findIndex((m) => m.type === 'onScreen' && m.update === 2 && m.views.some((v) => v.key === 'weights'));
    const scrolled = posted[at] as Extract<WebviewToHost, { type: 'onScreen' }>;
    assert.ok(!scrolled.views.some((v) => v.key === 'scores'), 'the scores scrolled out of view');
    assert.deepEqual(posted[at + 1], { type: 'requestDeferred', update: 2 }, `the request right after the scroll's report: ${JSON.stringify(posted.map((m) => m.type))}`);
    // A superseded update's views are never asked for: a newer update replaces them.
    await panel.send({ type: 'data', data: dataOf(5), update: 3 });
    await deliver(panel, { type: 'deferredViews', update: 2, views: split.deferred });
    // The page takes its messages in order: a render the user asks for after them draws whatever
    // the late views left in the panel's data.
    await choose(panel, 'Colour scale', 'Cividis');
    assert.deepEqual(await heatmapZ(panel.page, 'card-h1-weights'), zOf(dataOf(5), 0, 'weights'), 'views of update 2 arriving late change nothing');
  });
});
