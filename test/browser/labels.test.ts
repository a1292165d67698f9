// Token labels that look like markup, in Chromium: plotly reads its own pseudo-HTML in every text
// it draws, so `<s>` used to vanish from an axis and `a<br>b` to read "ab". Each view must show
// the user's text as written, on the axes and in the hover text, in the panel and in a report.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { runAttention } from '../../src/core/engine';
import { parseDocument } from '../../src/core/parse';
import { buildSpec } from '../../src/core/spec';
import { panelDataOf } from '../../src/views/model';
import { renderReportHtml } from '../../src/report/standaloneHtml';
import { hoverCell, hoverPreviewCell, panelPages, ROOT, type PanelPage } from './harness';

const TOKENS = [
  '<s>',
  '</s>',
  '<b>x</b>',
  'a<br>b',
  '<a href="https://example.com/?a=1&b=2">link</a>',
  'x &amp; y',
  '<|endoftext|>',
  '&#60;i&#62; &lt;pad&gt; 5 &times; 3',
  'a long token that goes on well past the width the axis keeps for its labels',
  'שלום עולם',
];

/** A causal, windowed problem over TOKENS (the window gives it a Variants tab), as the host sends it. */
function hostile() {
  const note = [
    'attention: causal window=3',
    `X = ${JSON.stringify(TOKENS.map((_, i) => [(i % 3) - 1, ((i * 7) % 5) - 2]))}`,
    'W_Q = [[1, 0], [0, 1]]',
    'W_K = [[0.5, 1], [1, -0.5]]',
    'W_V = [[1, 2], [3, 4]]',
    `tokens = ${JSON.stringify(TOKENS)}`,
  ].join('\n');
  const { problems, diagnostics } = parseDocument(note);
  assert.deepEqual(diagnostics, []);
  assert.deepEqual(problems[0].tokens, TOKENS, 'the reader keeps the tokens as written');
  const result = runAttention(buildSpec(problems[0]).spec!);
  return { problems, result, data: panelDataOf({ uri: 'file:///hostile.md', fileName: 'hostile.md', problems, problemIndex: 0, result }) };
}

/** The tick labels of a plot's axis as the page shows them (the SVG's text). */
function tickTexts(page: Page, selector: string, axis: 'x' | 'y'): Promise<string[]> {
  return page.$$eval(`${selector} g.${axis}tick text`, (texts) => texts.map((text) => text.textContent ?? ''));
}

/** The text of plotly's own hover label after moving over cell (row, col) of a small plot. */
async function plotlyHover(page: Page, selector: string, [rows, cols]: [number, number], [row, col]: [number, number]): Promise<string> {
  const area = await page.locator(`${selector} .nsewdrag`).first().boundingBox();
  if (!area) throw new Error('no plot area');
  await page.mouse.move(0, 0);
  await page.mouse.move(area.x + ((col + 0.5) / cols) * area.width, area.y + ((row + 0.5) / rows) * area.height, { steps: 2 });
  await page.waitForSelector(`${selector} .hoverlayer .hovertext`);
  return page.$eval(`${selector} .hoverlayer .hovertext text.nums`, (text) => text.textContent ?? '');
}

describe('panel: labels shown as written, in Chromium', function () {
  const pages = panelPages();

  it('the steps’ axes and tooltips show every token as written, in the first paint and in plotly’s plot', async () => {
    const { data } = hostile();
    let release = () => {};
    const plotlyHeld = new Promise<void>((resolve) => (release = resolve));
    const panel: PanelPage = await pages.open({ beforeServe: (pathname) => (/plotly/.test(pathname) ? plotlyHeld : Promise.resolve()) });
    await panel.page.evaluate((m) => window.postMessage(m, '*'), { type: 'data', data });
    await panel.page.waitForSelector('body[data-painted]');
    const firstPaint = await hoverPreviewCell(panel.page, 'card-h1-weights', [TOKENS.length, TOKENS.length], 4, 3);
    await panel.rendered(async () => release());
    assert.deepEqual(await tickTexts(panel.page, '#card-h1-weights .plot', 'y'), TOKENS);
    assert.deepEqual(await tickTexts(panel.page, '#card-h1-weights .plot', 'x'), TOKENS);
    const plotted = await hoverCell(panel.page, 'card-h1-weights', 4, 3);
    assert.match(plotted, /^query 5 \(<a href="https:\/\/example\.com\/\?a=1&b=2">link<\/a>\) → key 4 \(a<br>b\): /);
    assert.equal(firstPaint, plotted, 'the first paint’s tooltip is the plot’s');
  });

  it('the Variants tab’s axes and plotly’s hover label show them as written', async () => {
    const { data } = hostile();
    const panel = await pages.open();
    await panel.send({ type: 'data', data });
    await panel.rendered(() => panel.page.click('vscode-button[data-view="variants"]'));
    assert.deepEqual(await tickTexts(panel.page, '#card-v-mask .plot', 'y'), TOKENS);
    assert.deepEqual(await tickTexts(panel.page, '#card-v-mask .plot', 'x'), TOKENS);
    const hover = await plotlyHover(panel.page, '#card-v-mask .plot', [TOKENS.length, TOKENS.length], [5, 5]);
    assert.equal(hover, 'query 6 (x &amp; y) → key 6 (x &amp; y): key may attend');
  });

  it('a standalone report’s axes show them as written', async () => {
    const { problems, result } = hostile();
    const html = renderReportHtml([{ problem: problems[0], result }], {
      script: readFileSync(path.join(ROOT, 'dist', 'webview.js'), 'utf8'),
      css: readFileSync(path.join(ROOT, 'media', 'panel.css'), 'utf8'),
    });
    const report = await pages.open({ html });
    await report.page.waitForFunction(() => Number(document.body.dataset.rendered ?? 0) > 0);
    assert.deepEqual(await tickTexts(report.page, '#card-h1-weights .plot', 'y'), TOKENS);
    assert.deepEqual(await tickTexts(report.page, '#card-h1-weights .plot', 'x'), TOKENS);
  });
});
