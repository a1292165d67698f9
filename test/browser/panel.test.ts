// The built panel (the HTML of src/views/html.ts with dist/panel/main.js and media/panel.css) in Debian's
// Chromium, fed the PyTorch reference results of fixtures/attention.json the way the extension
// host feeds it. Run with `npm run test:browser`.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Matrix, Problem } from '../../src/core/types';
import { viewOf } from '../../src/views/matrixView';
import { panelDataOf } from '../../src/views/model';
import { parsePanelState, type PanelData, type PanelState, type WebviewToHost } from '../../src/protocol';
import { num } from '../../webview/format';
import { loadFixture } from './fixtures';
import { choose, heatmapZ, hoverCell, openPanel, ROOT, type PanelPage } from './harness';
import { syntheticResult, syntheticWeights } from './synthetic';

const SCREENSHOTS = path.join(ROOT, 'test-output', 'screenshots');
const fixture = loadFixture();

function dataOf(problemIndex: number): PanelData {
  return panelDataOf({ uri: 'file:///notes/attention.md', fileName: 'attention.md', problems: fixture.problems, problemIndex, result: fixture.results[problemIndex] });
}

/** The matrix as plotly gets it: rows of numbers, null where the value is −∞ (a gap). */
function asZ(matrix: Matrix): (number | null)[][] {
  return Array.from({ length: matrix.rows }, (_, r) =>
    Array.from(matrix.data.subarray(r * matrix.cols, (r + 1) * matrix.cols), (v) => (Number.isFinite(v) ? v : null)));
}

async function heatmapCards(panel: PanelPage): Promise<string[]> {
  return panel.page.$$eval('.card.heatmap', (cards) => cards.map((card) => card.id));
}

async function lastPosted<T extends WebviewToHost['type']>(panel: PanelPage, type: T): Promise<Extract<WebviewToHost, { type: T }> | undefined> {
  const posted = await panel.posted();
  return posted.filter((message): message is Extract<WebviewToHost, { type: T }> => message.type === type).pop();
}

describe('attention panel in Chromium', function () {
  let panel: PanelPage | undefined;

  afterEach(async () => {
    if (panel) assert.deepEqual(panel.errors, [], 'the page logged errors');
    await panel?.close();
    panel = undefined;
  });

  it('draws every step of head 1 with the reference values and dimensions', async () => {
    panel = await openPanel();
    await panel.send({ type: 'data', data: dataOf(0) });
    const head = fixture.results[0].heads[0];
    const expected: [string, Matrix][] = [
      ['card-input', fixture.results[0].input!],
      ['card-h1-Q', head.Q],
      ['card-h1-K', head.K],
      ['card-h1-V', head.V],
      ['card-h1-scores', head.scores],
      ['card-h1-scaled', head.scaled],
      ['card-h1-masked', head.masked],
      ['card-h1-weights', head.weights],
      ['card-h1-output', head.output],
    ];
    assert.deepEqual(await heatmapCards(panel), expected.map(([id]) => id));
    for (const [id, matrix] of expected) assert.deepEqual(await heatmapZ(panel.page, id), asZ(matrix), id);
    // Causal: the masked step shows −∞ in the blocked cells, and the reading names a real row.
    const maskedTexts = await panel.page.$eval('#card-h1-masked .plot', (plot) => (plot as unknown as { data: { text: string[][] }[] }).data[0].text);
    assert.equal(maskedTexts[0][1], '−∞');
    const weights = head.weights.data;
    const reading = await panel.page.textContent('#card-h1-weights .reading');
    const row2 = Array.from(weights.subarray(4, 8));
    const best = row2.indexOf(Math.max(...row2));
    assert.equal(reading, `Row 2 sums to ${row2.reduce((a, b) => a + b, 0).toFixed(6)}; query 2 (am) puts ${Math.round(row2[best] * 100)}% on key ${best + 1} (${['I', 'am', 'a', 'student'][best]}).`);
  });

  it('without a result: a Run button that asks the host to run, none while the run computes', async () => {
    panel = await openPanel();
    const source = { uri: 'file:///notes/attention.md', fileName: 'attention.md', problems: fixture.problems, problemIndex: 0 };
    await panel.send({ type: 'data', data: panelDataOf({ ...source, computing: true }) });
    assert.equal(await panel.page.textContent('#app .message'), 'Computing attention…');
    assert.equal(await panel.page.$('#app .content vscode-button, #app .content button'), null, 'a Run button while the run computes');
    await panel.send({ type: 'data', data: panelDataOf(source) });
    assert.equal(await panel.page.textContent('#app .message'), 'Not run yet: run attention on this problem.');
    await panel.page.click('#app .content :is(vscode-button, button)');
    await panel.page.waitForFunction(() => (window as unknown as { posted: { type: string }[] }).posted.some((m) => m.type === 'run'));
    assert.deepEqual(await lastPosted(panel, 'run'), { type: 'run', problemIndex: 0 });
  });

  it('shows the tooltip "query i (token) → key j (token): score, scaled, mask, weight" on hover', async () => {
    panel = await openPanel();
    await panel.send({ type: 'data', data: dataOf(0) });
    const head = fixture.results[0].heads[0];
    const at = (m: Matrix, r: number, c: number) => num(m.data[r * m.cols + c]);
    for (const [row, col] of [[2, 0], [1, 3]]) {
      const text = await hoverCell(panel.page, 'card-h1-weights', row, col);
      const names = ['I', 'am', 'a', 'student'];
      assert.equal(text, `query ${row + 1} (${names[row]}) → key ${col + 1} (${names[col]}): score ${at(head.scores, row, col)}, scaled ${at(head.scaled, row, col)}, mask ${at(head.mask!, row, col)}, weight ${at(head.weights, row, col)}`);
    }
    const output = await hoverCell(panel.page, 'card-h1-output', 3, 1);
    assert.equal(output, `query 4 (student), dim 2: output ${at(head.output, 3, 1)}`);
  });

  it('switches heads and steps from the control bar', async () => {
    panel = await openPanel();
    await panel.send({ type: 'data', data: dataOf(0) });
    await choose(panel, 'Head', 'Head 2');
    const head2 = fixture.results[0].heads[1];
    assert.deepEqual(await heatmapZ(panel.page, 'card-h2-weights'), asZ(head2.weights));
    assert.match((await panel.page.textContent('#card-h2-weights h3')) ?? '', /head 2/);
    await choose(panel, 'Step', '4 · softmax weights');
    assert.deepEqual(await heatmapCards(panel), ['card-h2-weights']);
    await choose(panel, 'Step', '1 · scores');
    assert.deepEqual(await heatmapCards(panel), ['card-h2-scores']);
    assert.deepEqual(await heatmapZ(panel.page, 'card-h2-scores'), asZ(head2.scores));
  });

  it('keeps head, step, view and colour scale across a reload and across new data (getState/setState)', async () => {
    panel = await openPanel();
    await panel.send({ type: 'data', data: dataOf(0) });
    await choose(panel, 'Head', 'Head 2');
    await choose(panel, 'Step', '5 · output');
    await choose(panel, 'Colour scale', 'Cividis');
    const saved = await panel.page.evaluate(() => (window as unknown as { savedState: unknown }).savedState);
    const state = parsePanelState(saved);
    assert.ok(state, 'the saved state passes the host validator');
    assert.deepEqual({ head: state.head, step: state.step, colorScale: state.colorScale, view: state.view }, { head: 1, step: 'output', colorScale: 'Cividis', view: 'steps' });
    assert.deepEqual(await lastPosted(panel, 'state'), { type: 'state', state });
    // An update of the same problem (live edit) keeps the selection.
    await panel.send({ type: 'data', data: dataOf(0) });
    assert.deepEqual(await heatmapCards(panel), ['card-h2-output']);
    await panel.close();

    panel = await openPanel({ state });
    await panel.send({ type: 'data', data: dataOf(0) });
    assert.deepEqual(await heatmapCards(panel), ['card-h2-output']);
    const colorscale = await panel.page.$eval('#card-h2-output .plot', (plot) => (plot as unknown as { data: { colorscale: unknown }[] }).data[0].colorscale);
    assert.equal(colorscale, 'Cividis');
  });

  it('Heads view: one weights map per head, then concat, W_O, output and residual; a head opens its steps', async () => {
    panel = await openPanel();
    await panel.send({ type: 'data', data: dataOf(0) });
    await panel.rendered(() => panel!.page.click('vscode-button[data-view="heads"]'));
    assert.deepEqual(await heatmapCards(panel), ['card-h1-weights', 'card-h2-weights', 'card-concat', 'card-WO', 'card-layerOutput', 'card-residual']);
    const result = fixture.results[0];
    assert.deepEqual(await heatmapZ(panel.page, 'card-concat'), asZ(result.concat));
    assert.deepEqual(await heatmapZ(panel.page, 'card-layerOutput'), asZ(result.output));
    assert.deepEqual(await heatmapZ(panel.page, 'card-residual'), asZ(result.residual!));
    const residualTip = await hoverCell(panel.page, 'card-residual', 0, 2);
    const at = (m: Matrix) => num(m.data[2]);
    assert.equal(residualTip, `token 1 (I), dim 3: E' ${at(result.residual!)} = E ${at(result.input!)} + ΔE ${at(result.output)}`);
    await panel.rendered(() => panel!.page.locator('vscode-button', { hasText: 'Head 2' }).click());
    assert.ok((await heatmapCards(panel)).includes('card-h2-scores'));
  });

  it('Mask view draws the blocked cells apart from the weights; Gradients and Checks views show their data', async () => {
    panel = await openPanel();
    await panel.send({ type: 'data', data: dataOf(0) });
    await panel.rendered(() => panel!.page.click('vscode-button[data-view="mask"]'));
    const mask = fixture.results[0].heads[0].mask!;
    const blocked = Array.from({ length: 4 }, (_, r) => Array.from({ length: 4 }, (_, c) => (mask.data[r * 4 + c] === -Infinity ? 1 : 0)));
    assert.deepEqual(await heatmapZ(panel.page, 'card-h1-mask'), blocked);
    assert.equal(await hoverCell(panel.page, 'card-h1-mask', 0, 3), 'query 1 (I) → key 4 (student): blocked (mask −∞)');

    await panel.rendered(() => panel!.page.click('vscode-button[data-view="gradients"]'));
    const gradients = fixture.results[0].heads[0].gradients!;
    assert.deepEqual(await heatmapCards(panel), ['card-h1-dS', 'card-h1-dA', 'card-h1-dQ', 'card-h1-dK', 'card-h1-dV']);
    for (const key of ['dS', 'dA', 'dQ', 'dK', 'dV'] as const) assert.deepEqual(await heatmapZ(panel.page, `card-h1-${key}`), asZ(gradients[key]), key);
    assert.match(await hoverCell(panel.page, 'card-h1-dS', 1, 0), new RegExp(`^query 2 \\(am\\) → key 1 \\(I\\): score .*, weight .*, dS ${num(gradients.dS.data[4]).replace(/[.-]/g, '\\$&')}$`));

    await panel.rendered(() => panel!.page.click('vscode-button[data-view="checks"]'));
    const checks = await panel.page.$$eval('table.checks tbody tr', (rows) => rows.map((row) => Array.from(row.children, (cell) => cell.textContent)));
    assert.deepEqual(checks[0].slice(0, 2), ['Rows of A sum to 1', '✓ pass']);
    assert.equal(checks[2][1], 'not applicable');
    assert.match(checks[5][0] ?? '', /^12 layers × 12 heads, n = 512/);
  });

  it('labels the axes q1…, k1…, d1… when the problem has no tokens, and says there is no mask', async () => {
    panel = await openPanel();
    await panel.send({ type: 'data', data: dataOf(1) });
    const ticks = await panel.page.$eval('#card-h1-weights .plot', (plot) => {
      const layout = (plot as unknown as { layout: { xaxis: { ticktext: string[] }; yaxis: { ticktext: string[] } } }).layout;
      return { x: layout.xaxis.ticktext, y: layout.yaxis.ticktext };
    });
    assert.deepEqual(ticks, { x: ['k1', 'k2', 'k3'], y: ['q1', 'q2', 'q3'] });
    assert.equal(await panel.page.textContent('.card:not(.heatmap) .reading'), "No mask: S'' = S'.");
    assert.match(await hoverCell(panel.page, 'card-h1-weights', 0, 2), /^query 1 → key 3: score .*, mask none, weight /);
  });

  it('asks the host to reveal the source of a clicked cell', async () => {
    panel = await openPanel();
    await panel.send({ type: 'data', data: dataOf(0) });
    await hoverCell(panel.page, 'card-h1-weights', 2, 1);
    await panel.page.mouse.down();
    await panel.page.mouse.up();
    await panel.page.waitForFunction(() => (window as unknown as { posted: { type: string }[] }).posted.some((m) => m.type === 'reveal'));
    assert.deepEqual(await lastPosted(panel, 'reveal'), { type: 'reveal', problemIndex: 0, head: 0, matrix: 'weights', row: 2, col: 1 });
  });

  it('exports a heatmap as PNG and SVG and asks the host for CSV/JSON of the full matrix', async () => {
    panel = await openPanel();
    await panel.send({ type: 'data', data: dataOf(1) });
    const card = panel.page.locator('#card-h1-weights');
    for (const label of ['PNG', 'SVG', 'CSV', 'JSON']) await card.locator('vscode-button', { hasText: label }).click();
    await panel.page.waitForFunction(() => (window as unknown as { posted: { type: string }[] }).posted.filter((m) => m.type === 'export').length === 2);
    const posted = await panel.posted();
    const images = posted.filter((m): m is Extract<WebviewToHost, { type: 'export' }> => m.type === 'export');
    const png = images.find((m) => m.format === 'png');
    const svg = images.find((m) => m.format === 'svg');
    assert.equal(Buffer.from(png!.base64!, 'base64').subarray(1, 4).toString(), 'PNG');
    assert.match(svg!.text!, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.equal(png!.fileName, 'attention-h1-weights.png');
    assert.deepEqual(posted.filter((m) => m.type === 'exportMatrix'), [
      { type: 'exportMatrix', format: 'csv', problemIndex: 1, head: 0, matrix: 'weights' },
      { type: 'exportMatrix', format: 'json', problemIndex: 1, head: 0, matrix: 'weights' },
    ]);
  });

  it('blocks an injected inline script and eval under its CSP, while plotly and the toolkit cause no violation', async () => {
    panel = await openPanel();
    await panel.send({ type: 'data', data: dataOf(0) });
    for (const view of ['heads', 'mask', 'gradients', 'checks', 'steps']) {
      await panel.rendered(() => panel!.page.click(`vscode-button[data-view="${view}"]`));
    }
    await hoverCell(panel.page, 'card-h1-weights', 1, 1);
    assert.deepEqual(await panel.violations(), [], 'violations while rendering every view');
    const outcome = await panel.page.evaluate(async () => {
      const script = document.createElement('script');
      script.textContent = 'window.injected = true';
      document.body.append(script);
      // Code run by page.evaluate itself may eval; a task of the page's own may not.
      const evalOutcome = await new Promise<string>((resolve) =>
        setTimeout(() => {
          try {
            // eslint-disable-next-line no-eval -- the point: the page's CSP must refuse it
            (0, eval)('1 + 1');
            resolve('ran');
          } catch (error) {
            resolve((error as Error).name);
          }
        }),
      );
      return { injected: (window as unknown as { injected?: boolean }).injected ?? false, evalOutcome };
    });
    assert.deepEqual(outcome, { injected: false, evalOutcome: 'EvalError' });
    const violations = await panel.violations();
    assert.ok(violations.some((v) => v.startsWith('script-src-elem')), `inline script violation reported: ${violations}`);
    assert.ok(violations.some((v) => v.startsWith('script-src: eval')), `eval violation reported: ${violations}`);
    // Chromium logs each blocked action as a console error, as it should.
    assert.ok(panel.errors.every((error) => error.includes('Content Security Policy')), panel.errors.join('\n'));
    panel.errors.length = 0;
  });

  it('shows a max-pooled overview of a 1024×1024 matrix and the exact values of the zoomed region', async () => {
    const n = 1024;
    const weights = syntheticWeights(n);
    const result = syntheticResult(weights);
    const problem: Problem = { index: 0, name: 'Long sequence', range: fixture.problems[0].range, options: { heads: 1, score: 'scaled_dot', dtype: 'float64' }, matrices: [] };
    const data = panelDataOf({ uri: 'file:///long.md', fileName: 'long.md', problems: [problem], problemIndex: 0, result });
    const state: PanelState = { problemIndex: 0, view: 'steps', head: 0, step: 'weights', colorScale: 'Viridis', showNumbers: true, zoom: {} };
    panel = await openPanel({ state });
    await panel.send({ type: 'data', data });
    const z = await heatmapZ(panel.page, 'card-h1-weights');
    assert.equal(z.length, 512);
    assert.equal(z[0].length, 512);
    assert.deepEqual(z[3].slice(0, 4), asZ(viewOf(weights) as unknown as Matrix)[3].slice(0, 4));
    const block = Math.max(...[6, 7].flatMap((r) => Array.from(weights.data.subarray(r * n + 10, r * n + 12))));
    assert.equal(z[3][5], block, 'cell (3, 5) is the max of rows 6–7 × columns 10–11');
    assert.match((await panel.page.textContent('#card-h1-weights .note')) ?? '', /maximum of a 2×2 block \(max pooling\)/);
    // Cells are under a pixel high here: read which block the tooltip names, check its value.
    const tip = await hoverCell(panel.page, 'card-h1-weights', 300, 200);
    const [, r0, r1, c0, c1, value] = /^queries (\d+)–(\d+) × keys (\d+)–(\d+) \(max of the 2×2 block\): weight (\S+)$/.exec(tip) ?? [];
    assert.ok(value, tip);
    assert.equal(Number(r1) - Number(r0), 1);
    const blockMax = Math.max(...[Number(r0) - 1, Number(r1) - 1].flatMap((r) => Array.from(weights.data.subarray(r * n + Number(c0) - 1, r * n + Number(c1)))));
    assert.equal(value, num(blockMax));

    // Drag a zoom box over the top-left of the overview: the page asks the host for that region.
    const area = (await panel.page.locator('#card-h1-weights .plot .nsewdrag').first().boundingBox())!;
    await panel.page.mouse.move(area.x + 2, area.y + 2);
    await panel.page.mouse.down();
    await panel.page.mouse.move(area.x + area.width * 0.05, area.y + area.height * 0.05, { steps: 5 });
    await panel.page.mouse.up();
    await panel.page.waitForFunction(() => (window as unknown as { posted: { type: string }[] }).posted.some((m) => m.type === 'requestRegion'));
    const request = (await lastPosted(panel, 'requestRegion'))!;
    // The box spans about 5% of 1024 rows and columns from the top-left corner.
    for (const [start, end] of [[request.rowStart, request.rowEnd], [request.colStart, request.colEnd]]) {
      assert.ok(start < 8 && end > 40 && end < 64, JSON.stringify(request));
    }
    const region = viewOf(weights, request);
    await panel.page.evaluate((message) => window.postMessage(message, '*'), { type: 'region', requestId: request.requestId, view: region });
    await panel.page.waitForSelector('#card-h1-weights .detail .plot .nsewdrag');
    const detail = await panel.page.$eval('#card-h1-weights .detail .plot', (plot) => (plot as unknown as { data: { z: number[][] }[] }).data[0].z);
    assert.equal(detail.length, request.rowEnd - request.rowStart);
    assert.equal(detail[0].length, request.colEnd - request.colStart);
    const row = request.rowStart + 5;
    assert.deepEqual(detail[5], Array.from(weights.data.subarray(row * n + request.colStart, row * n + request.colEnd)));
    // The detail's cells are exact weights, while the other steps are overviews: its tooltip gives
    // the weight, and of the rest only what it knows (before, score, scaled and mask read NaN).
    const detailTip = await hoverCell(panel.page, 'card-h1-weights', 5, 3, '.detail .plot');
    const [, tipRow, tipCol, tipWeight] = /^query (\d+)(?: \(\S+\))? → key (\d+)(?: \(\S+\))?: (?:mask none, )?weight (\S+)$/.exec(detailTip) ?? [];
    assert.ok(tipWeight, detailTip);
    assert.deepEqual([Number(tipRow), Number(tipCol)], [row + 1, request.colStart + 4]);
    assert.equal(tipWeight, num(weights.data[row * n + request.colStart + 3]));
    mkdirSync(SCREENSHOTS, { recursive: true });
    await panel.page.screenshot({ path: path.join(SCREENSHOTS, 'panel-overview-1024-light.png'), fullPage: true });
    const saved = parsePanelState(await panel.page.evaluate(() => (window as unknown as { savedState: unknown }).savedState));
    const { rowStart, rowEnd, colStart, colEnd } = request;
    assert.deepEqual(saved?.zoom['h1-weights'], { rowStart, rowEnd, colStart, colEnd });
  });

  it('says how many output rows the permutation check compared in a long sequence', async () => {
    const result = syntheticResult(syntheticWeights(1024));
    result.checks = { ...result.checks, permutationEquivariant: true, permutationMaxError: 3e-8, permutationRowsChecked: 64 };
    const problem: Problem = { index: 0, name: 'Long sequence', range: fixture.problems[0].range, options: { heads: 1, score: 'scaled_dot', dtype: 'float64' }, matrices: [] };
    panel = await openPanel();
    await panel.send({ type: 'data', data: panelDataOf({ uri: 'file:///long.md', fileName: 'long.md', problems: [problem], problemIndex: 0, result }) });
    await panel.rendered(() => panel!.page.click('vscode-button[data-view="checks"]'));
    const checks = await panel.page.$$eval('table.checks tbody tr', (rows) => rows.map((row) => Array.from(row.children, (cell) => cell.textContent)));
    assert.deepEqual(checks[2], ['Permutation equivariance', '✓ pass', "max error after permuting X's rows: 3.00e-8 (64 of the 1024 output rows, spread over the sequence)"]);
  });

  it('the bottom view shows only the weights of the focused head, with the same tooltips', async () => {
    panel = await openPanel({ mode: 'compact', viewport: { width: 700, height: 420 } });
    await panel.send({ type: 'data', data: dataOf(0), focusHead: 1 });
    assert.deepEqual(await heatmapCards(panel), ['card-h2-weights']);
    assert.equal(await panel.page.locator('.controls').count(), 0);
    const head = fixture.results[0].heads[1];
    assert.match(await hoverCell(panel.page, 'card-h2-weights', 3, 0), new RegExp(`^query 4 \\(student\\) → key 1 \\(I\\): .*weight ${num(head.weights.data[12]).replace('.', '\\.')}$`));
    mkdirSync(SCREENSHOTS, { recursive: true });
    await panel.page.screenshot({ path: path.join(SCREENSHOTS, 'bottom-view-light.png') });
  });

  it('reaches every table of values from the keyboard, with visible focus', async () => {
    panel = await openPanel();
    await panel.send({ type: 'data', data: dataOf(1) });
    let focused = '';
    for (let presses = 0; presses < 60 && focused !== 'SUMMARY'; presses++) {
      await panel.page.keyboard.press('Tab');
      focused = await panel.page.evaluate(() => document.activeElement?.tagName ?? '');
    }
    assert.equal(focused, 'SUMMARY', 'a table view is reachable with Tab');
    const outline = await panel.page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    assert.equal(outline, 'solid');
    await panel.page.keyboard.press('Enter');
    // The table is built when its <details> opens (the toggle event fires after the key press).
    await panel.page.waitForFunction(() => document.activeElement?.closest('details')?.querySelector('tr') != null);
    const table = await panel.page.evaluate(() => {
      const details = document.activeElement!.closest('details')!;
      const rows = Array.from(details.querySelectorAll('tr'), (tr) => Array.from(tr.children, (cell) => cell.textContent));
      return { card: details.closest('section')!.id, rows };
    });
    assert.equal(table.card, 'card-input');
    const input = fixture.results[1].input!;
    assert.deepEqual(table.rows[0], ['', 'd1', 'd2']);
    assert.deepEqual(table.rows.slice(1).map((row) => row.slice(1)), [0, 1, 2].map((r) => [num(input.data[2 * r]), num(input.data[2 * r + 1])]));
    const labels = await panel.page.$$eval('.controls vscode-dropdown', (dropdowns) => dropdowns.map((d) => document.getElementById(d.getAttribute('aria-labelledby')!)?.textContent));
    assert.deepEqual(labels, ['Problem', 'Head', 'Step', 'Colour scale', 'dtype']);
  });

  for (const theme of ['light', 'dark', 'high-contrast'] as const) {
    it(`renders readably in the ${theme} theme (screenshots in test-output/screenshots/)`, async () => {
      panel = await openPanel({ theme, viewport: { width: 1280, height: 900 } });
      await panel.send({ type: 'data', data: dataOf(0) });
      const colors = await panel.page.evaluate(() => {
        const style = getComputedStyle(document.body);
        const plot = document.querySelector('#card-h1-weights .plot') as unknown as { layout: { font: { color: string } } };
        return { background: style.backgroundColor, font: plot.layout.font.color };
      });
      const expected = { light: { background: 'rgb(255, 255, 255)', font: '#3b3b3b' }, dark: { background: 'rgb(31, 31, 31)', font: '#cccccc' }, 'high-contrast': { background: 'rgb(0, 0, 0)', font: '#ffffff' } };
      assert.deepEqual(colors, expected[theme]);
      mkdirSync(SCREENSHOTS, { recursive: true });
      await panel.page.screenshot({ path: path.join(SCREENSHOTS, `panel-steps-${theme}.png`), fullPage: true });
      await panel.rendered(() => panel!.page.click('vscode-button[data-view="heads"]'));
      await panel.page.screenshot({ path: path.join(SCREENSHOTS, `panel-heads-${theme}.png`), fullPage: true });
      await panel.rendered(() => panel!.page.click('vscode-button[data-view="mask"]'));
      await panel.page.screenshot({ path: path.join(SCREENSHOTS, `panel-mask-${theme}.png`), fullPage: true });
    });
  }
});
