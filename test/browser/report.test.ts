// The standalone report (src/report/standaloneHtml.ts) opened as a file would be: no VS Code, no
// network — every view works from the data inlined in the page, under the same kind of CSP.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderReportHtml } from '../../src/report/standaloneHtml';
import { loadFixture } from './fixtures';
import { heatmapZ, hoverCell, openPanel, ROOT, type PanelPage } from './harness';

const fixture = loadFixture();
const assets = {
  script: readFileSync(path.join(ROOT, 'dist', 'webview.js'), 'utf8'),
  css: readFileSync(path.join(ROOT, 'media', 'panel.css'), 'utf8'),
};
const runs = fixture.problems.map((problem, i) => ({ problem, result: fixture.results[i] }));

describe('standalone HTML report in Chromium', function () {
  let report: PanelPage | undefined;
  afterEach(async () => {
    await report?.close();
    report = undefined;
  });

  it('is one file: scripts only inline with its nonce, no eval, no external resource', () => {
    const html = renderReportHtml(runs, assets);
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1].replace(/&#39;/g, "'");
    const nonce = /script-src 'nonce-([0-9a-f]{32})'/.exec(csp ?? '')?.[1];
    assert.ok(nonce, csp);
    assert.ok(csp?.startsWith("default-src 'none'"), csp);
    assert.doesNotMatch(csp!, /unsafe-eval/);
    const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((match) => match[1].trim());
    assert.deepEqual(scripts, ['type="application/json" id="attention-lens-data"', `type="module" nonce="${nonce}"`]);
    assert.doesNotMatch(html, /<(link|img)\b|src="http/);
    assert.notEqual(nonce, /nonce-([0-9a-f]{32})/.exec(renderReportHtml(runs, assets))?.[1], 'a fresh nonce per report');
  });

  it('renders every problem offline with the engine values, tooltips and no CSP violation', async () => {
    report = await openPanel({ html: renderReportHtml(runs, assets) });
    await report.page.waitForFunction(() => Number(document.body.dataset.rendered ?? 0) > 0);
    assert.deepEqual(await heatmapZ(report.page, 'card-h1-weights'), toZ(fixture.results[0].heads[0].weights));
    assert.match(await hoverCell(report.page, 'card-h1-weights', 1, 0), /^query 2 \(am\) → key 1 \(I\): score /);
    await report.rendered(async () => {
      await report!.page.click('vscode-dropdown[data-control="Problem"]');
      await report!.page.locator('vscode-dropdown[data-control="Problem"] vscode-option', { hasText: 'One head, no mask' }).click();
    });
    assert.equal(await report.page.textContent('header h2'), 'One head, no mask');
    assert.deepEqual(await heatmapZ(report.page, 'card-h1-weights'), toZ(fixture.results[1].heads[0].weights));
    assert.deepEqual(await report.violations(), []);
    assert.deepEqual(report.errors, []);
  });

  it('downloads a matrix as CSV from the page itself', async () => {
    report = await openPanel({ html: renderReportHtml(runs.slice(1), assets) });
    await report.page.waitForFunction(() => Number(document.body.dataset.rendered ?? 0) > 0);
    const [download] = await Promise.all([
      report.page.waitForEvent('download'),
      report.page.locator('#card-h1-weights vscode-button', { hasText: 'CSV' }).click(),
    ]);
    const text = readFileSync((await download.path())!, 'utf8');
    const weights = fixture.results[1].heads[0].weights;
    const lines = text.trim().split('\n');
    assert.equal(lines[0], ',k1,k2,k3');
    assert.deepEqual(lines[1].split(',').slice(1).map(Number), Array.from(weights.data.subarray(0, 3)));
  });
});

function toZ(matrix: { rows: number; cols: number; data: ArrayLike<number> }): number[][] {
  return Array.from({ length: matrix.rows }, (_, r) => Array.from({ length: matrix.cols }, (_, c) => matrix.data[r * matrix.cols + c]));
}
