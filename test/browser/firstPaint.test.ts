// The panel paints before it polishes (design §4): the numbers are on screen before plotly has
// even loaded, plotly then takes the same place without a jump, and updates change the existing
// plots in place — keeping scroll, zoom and head — or only mark the result out of date.
import assert from 'node:assert/strict';
import type { AttentionResult } from '../../src/core/types';
import { panelDataOf } from '../../src/views/model';
import type { PanelData } from '../../src/protocol';
import { cellText } from '../../webview/format';
import { loadFixture } from './fixtures';
import { heatmapZ, hoverCell, hoverPreviewCell, panelPages, type PanelPage } from './harness';

const fixture = loadFixture();

function dataOf(result: AttentionResult = fixture.results[0]): PanelData {
  return panelDataOf({ uri: 'file:///notes/attention.md', fileName: 'attention.md', problems: fixture.problems, problemIndex: 0, result });
}

/** The same problem with other numbers, as after a live edit: every weight of head 1 changed. */
function editedResult(): AttentionResult {
  const result = structuredClone(fixture.results[0]);
  const weights = result.heads[0].weights;
  for (let row = 0; row < weights.rows; row++) {
    // Uniform over the keys the causal mask lets row `row` see: still a valid softmax row.
    for (let col = 0; col < weights.cols; col++) weights.data[row * weights.cols + col] = col <= row ? 1 / (row + 1) : 0;
  }
  return result;
}

const post = (panel: PanelPage, message: unknown) => panel.page.evaluate((m) => window.postMessage(m, '*'), message);

describe('panel first paint and updates in Chromium', function () {
  const pages = panelPages();

  it('shows every card with its numbers before plotly has loaded, then plotly in the same place', async () => {
    let releasePlotly = () => {};
    const plotlyHeld = new Promise<void>((resolve) => (releasePlotly = resolve));
    const panel = await pages.open({ beforeServe: (pathname) => (/plotly/.test(pathname) ? plotlyHeld : Promise.resolve()) });
    await post(panel, { type: 'data', data: dataOf() });
    await panel.page.waitForSelector('body[data-painted]');
    assert.equal(await panel.page.$('.js-plotly-plot'), null, 'plotly drew although it was held back');
    const weights = fixture.results[0].heads[0].weights;
    const printed = await panel.page.$$eval('#card-h1-weights .plot .preview-cells > span', (cells) => cells.map((cell) => cell.textContent));
    assert.deepEqual(printed, Array.from(weights.data, cellText), 'the preview prints the weights');
    // A hover over the preview already explains its cell, and a click shows where it comes from,
    // as plotly's will.
    const fromPreview = await hoverPreviewCell(panel.page, 'card-h1-weights', [weights.rows, weights.cols], 2, 1);
    assert.match(fromPreview, /^query 3 .* → key 2 .*weight /);
    await panel.page.mouse.down();
    await panel.page.mouse.up();
    const reveals = (await panel.posted()).filter((message) => message.type === 'reveal');
    assert.deepEqual(reveals, [{ type: 'reveal', problemIndex: 0, head: 0, matrix: 'weights', row: 2, col: 1 }]);
    await panel.page.mouse.move(0, 0);
    assert.equal(await panel.page.isHidden('#tooltip'), true, 'leaving the preview hides its tooltip');
    const before = await panel.page.locator('#card-h1-weights .plot').boundingBox();

    await panel.rendered(async () => releasePlotly());
    assert.deepEqual(await heatmapZ(panel.page, 'card-h1-weights'), Array.from({ length: weights.rows }, (_, r) => Array.from(weights.data.subarray(r * weights.cols, (r + 1) * weights.cols))));
    assert.equal(await panel.page.$('#card-h1-weights .preview'), null, 'the preview is gone once plotly drew');
    const after = await panel.page.locator('#card-h1-weights .plot').boundingBox();
    assert.deepEqual(after, before, 'the plot took the preview\'s place without moving or resizing');
    assert.equal(await hoverCell(panel.page, 'card-h1-weights', 2, 1), fromPreview, 'plotly\'s tooltip for that cell says the same');
    assert.deepEqual(await panel.violations(), []);
  });

  it('asks for the toolkit\'s controls before plotly, whose 4.8 MB would hold them back on the way', async () => {
    const requested: string[] = [];
    let releaseToolkit = () => {};
    let toolkitAsked = () => {};
    const toolkitHeld = new Promise<void>((resolve) => (releaseToolkit = resolve));
    const asked = new Promise<void>((resolve) => (toolkitAsked = resolve));
    const panel = await pages.open({
      beforeServe: (pathname) => {
        requested.push(pathname.split('/').pop()!);
        if (!/toolkit/.test(pathname)) return Promise.resolve();
        toolkitAsked();
        return toolkitHeld;
      },
    });
    await post(panel, { type: 'data', data: dataOf() });
    await panel.page.waitForSelector('body[data-painted]');
    // The toolkit's request has reached the server, and the page has since run a frame and a task
    // of its own (as its loader schedules itself): plotly, asked for then, would be in the page.
    await asked;
    await panel.page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve))));
    const scripts = await panel.page.evaluate(() => Array.from(document.querySelectorAll<HTMLScriptElement>('script[src]'), (script) => script.src.split('/').pop()!));
    assert.ok(scripts.includes('toolkit.js') && !scripts.includes('plotly.min.js'), scripts.join(', '));
    assert.deepEqual(requested, ['toolkit.js']);
    await panel.rendered(async () => releaseToolkit());
    assert.deepEqual(requested, ['toolkit.js', 'plotly.min.js']);
  });

  it('updates the existing plots in place on new numbers, keeping scroll, zoom, head and open tables', async () => {
    const panel = await pages.open({ viewport: { width: 700, height: 700 } });
    await panel.send({ type: 'data', data: dataOf() });
    // Zoom into the weights (a drag over its top-left cells), open its table, scroll to it.
    const plot = panel.page.locator('#card-h1-weights .plot');
    await plot.scrollIntoViewIfNeeded();
    const area = (await panel.page.locator('#card-h1-weights .plot .nsewdrag').boundingBox())!;
    await panel.page.mouse.move(area.x + 2, area.y + 2);
    await panel.page.mouse.down();
    await panel.page.mouse.move(area.x + area.width * 0.45, area.y + area.height * 0.45, { steps: 6 });
    await panel.page.mouse.up();
    await panel.page.waitForFunction(() => {
      const state = (window as unknown as { savedState?: { zoom: Record<string, unknown> } }).savedState;
      return state?.zoom['h1-weights'] !== undefined;
    });
    await panel.page.click('#card-h1-weights details.table-view summary');
    await panel.page.evaluate(() => {
      (document.querySelector('#card-h1-weights .plot') as HTMLElement).dataset.marker = 'first';
    });
    const range = () => panel.page.$eval('#card-h1-weights .plot', (element) => (element as unknown as { layout: { xaxis: { range: number[] } } }).layout.xaxis.range);
    // The zoom is kept as the cells it covers (source coordinates), as a reload keeps it.
    const zoom = await panel.page.evaluate(() => (window as unknown as { savedState: { zoom: Record<string, { colStart: number; colEnd: number }> } }).savedState.zoom['h1-weights']);
    const zoomed = [zoom.colStart - 0.5, zoom.colEnd - 0.5];
    assert.ok(zoom.colEnd - zoom.colStart < 4, 'the drag zoomed in');
    const scrolled = await panel.page.evaluate(() => window.scrollY);
    assert.ok(scrolled > 0, 'the weights card is below the first screen');

    await panel.send({ type: 'data', data: dataOf(editedResult()) });
    const weights = editedResult().heads[0].weights;
    assert.deepEqual((await heatmapZ(panel.page, 'card-h1-weights'))[1], Array.from(weights.data.subarray(4, 8)), 'the new numbers are drawn');
    assert.equal(await panel.page.$eval('#card-h1-weights .plot', (element) => (element as HTMLElement).dataset.marker), 'first', 'the plot was rebuilt instead of updated');
    assert.deepEqual(await range(), zoomed, 'the zoom was lost');
    assert.equal(await panel.page.evaluate(() => window.scrollY), scrolled, 'the scroll position was lost');
    assert.ok(await panel.page.$eval('#card-h1-weights details.table-view', (details) => (details as HTMLDetailsElement).open), 'the open table closed');
    const row2 = await panel.page.$$eval('#card-h1-weights details.table-view tr:nth-of-type(3) td', (cells) => cells.map((cell) => cell.textContent));
    assert.deepEqual(row2, ['0.5', '0.5', '0', '0'], 'the table shows the new numbers');
  });

  it('shows an edit\'s numbers over the plots in the first frame, then lets plotly take them over', async () => {
    const panel = await pages.open();
    await panel.send({ type: 'data', data: dataOf() });
    await panel.page.evaluate(() => {
      (document.querySelector('#card-h1-weights .plot') as HTMLElement).dataset.marker = 'first';
    });
    // What the weights' plot shows before plotly redraws: the preview laid over it, caught as it
    // is added (plotly draws a task later at the earliest).
    const overlaid = panel.page.evaluate(() => new Promise<string[]>((resolve) => {
      const plot = document.querySelector('#card-h1-weights .plot') as HTMLElement;
      new MutationObserver((_, observer) => {
        const preview = plot.querySelector(':scope > .preview');
        if (!preview) return;
        observer.disconnect();
        resolve(Array.from(preview.querySelectorAll('span'), (cell) => cell.textContent ?? ''));
      }).observe(plot, { childList: true });
    }));
    const edited = editedResult();
    await panel.send({ type: 'data', data: dataOf(edited) });
    const weights = edited.heads[0].weights;
    assert.deepEqual(await overlaid, Array.from(weights.data, cellText), 'the first frame shows the new weights');
    assert.equal(await panel.page.$eval('#card-h1-weights .plot', (element) => (element as HTMLElement).dataset.marker), 'first', 'the plot was rebuilt instead of updated');
    assert.deepEqual((await heatmapZ(panel.page, 'card-h1-weights'))[2], Array.from(weights.data.subarray(8, 12)), 'plotly drew the new numbers');
    assert.equal(await panel.page.$('.js-plotly-plot > .preview'), null, 'a preview stayed over a drawn plot');
  });

  it('keeps the last good result on screen, marked out of date, until a new one arrives', async () => {
    const panel = await pages.open();
    await panel.send({ type: 'data', data: dataOf() });
    await panel.page.evaluate(() => {
      (document.querySelector('#card-h1-weights .plot') as HTMLElement).dataset.marker = 'good';
    });
    await post(panel, { type: 'stale', stale: 'line 12: Row 2 of X has 5 entries, row 1 has 4.' });
    await panel.page.waitForSelector('body[data-stale] #stale');
    assert.equal(await panel.page.textContent('#stale'), 'Out of date: line 12: Row 2 of X has 5 entries, row 1 has 4. The last good result is shown.');
    assert.equal(await panel.page.$eval('#card-h1-weights .plot', (element) => (element as HTMLElement).dataset.marker), 'good', 'the last good plots stay');
    const good = fixture.results[0].heads[0].weights;
    assert.deepEqual((await heatmapZ(panel.page, 'card-h1-weights'))[1], Array.from(good.data.subarray(4, 8)), 'the last good numbers stay');

    await post(panel, { type: 'stale' });
    await panel.page.waitForSelector('body:not([data-stale])');
    assert.equal(await panel.page.$('#stale'), null);

    // Data that is itself out of date (the panel opened while the text has an error) says so too.
    await panel.send({ type: 'data', data: { ...dataOf(), stale: 'line 3: expected a number.' } });
    assert.match((await panel.page.textContent('#stale')) ?? '', /^Out of date: line 3: expected a number\./);
    await panel.send({ type: 'data', data: dataOf(editedResult()) });
    assert.equal(await panel.page.$('body[data-stale]'), null, 'a new result is current');
  });
});
