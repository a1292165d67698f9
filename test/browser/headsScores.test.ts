// The heads page's "Head scores" tab (webview/heads/scores.ts) in Chromium: the page asks the
// worker for the scores, shows a row per head, sorts by any score and filters by a condition —
// "induction > 0.4" leaves only the planted induction head — and draws the rollout's bars.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { contentSecurityPolicy, htmlPage, newNonce } from '../../src/panel/html';
import { analyseStack } from '../../src/core/heads/analysis';
import type { StackInfo } from '../../src/protocol';
import { referenceCase, stackOf } from '../unit/heads/references';
import { launchChromium, openPanel, ORIGIN, type PanelPage, ROOT } from './harness';

const planted = referenceCase('planted');
const stack = stackOf(planted.weights, 'float64', planted.ids);
const tokens = planted.ids!.map((id) => (id === 0 ? '<s>' : `t${id}`));
const info: StackInfo = { title: 'planted.pt', source: 'saved', tokens, keyTokens: tokens, layerCount: 2, headCount: 3, queryCount: 13, keyCount: 13, notes: [] };

/** The heads page as src/features/heads.ts serves it, its bundle inline and a stand-in for acquireVsCodeApi. */
function headsHtml(): string {
  const nonce = newNonce();
  const shim = `window.posted = []; window.acquireVsCodeApi = () => ({ postMessage: (m) => window.posted.push(m), getState: () => undefined, setState: () => {} });`;
  return htmlPage({
    csp: contentSecurityPolicy({ nonce, resourceSource: ORIGIN }),
    title: 'heads',
    head: `<style>${readFileSync(path.join(ROOT, 'media', 'heads.css'), 'utf8')}</style>`,
    bodyAttributes: 'data-mode="heads"',
    body: `<script nonce="${nonce}">${shim}</script><script type="module" nonce="${nonce}">${readFileSync(path.join(ROOT, 'dist', 'heads.js'), 'utf8')}</script>`,
  });
}

async function shownHeads(panel: PanelPage): Promise<string[]> {
  return panel.page.$$eval('#scores-table tr[data-layer]', (rows) => rows.map((row) => `${row.getAttribute('data-layer')}.${row.getAttribute('data-head')}`));
}

describe('heads page: head scores', function () {
  let browser: Browser;
  let panel: PanelPage;
  before(async () => {
    browser = await launchChromium();
    panel = await openPanel(browser, { html: headsHtml() });
    await panel.page.waitForFunction(() => (window as unknown as { posted: { type: string }[] }).posted.some((m) => m.type === 'ready'));
    await panel.page.evaluate((m) => window.postMessage(m, '*'), { type: 'stack', info });
    await panel.page.waitForFunction(() => (window as unknown as { posted: { requestId?: number }[] }).posted.some((m) => m.requestId === 1_000_001));
    const { scores, rollout } = analyseStack(stack);
    await panel.page.evaluate((m) => window.postMessage(m, '*'), { type: 'answer', requestId: 1_000_001, answer: { kind: 'scores', scores, rollout } });
    await panel.page.click('#tab-heads-scores');
    await panel.page.waitForSelector('#scores-table tr[data-layer]');
  });
  after(async () => {
    await panel?.close();
    await browser?.close();
  });

  it('lists every head, sorted by the chosen score, highest or lowest first', async () => {
    await panel.page.selectOption('#scores-shown', 'previous_token');
    assert.equal((await shownHeads(panel))[0], '0.0');
    assert.equal((await shownHeads(panel)).length, 6);
    await panel.page.click('#scores-order');
    assert.equal((await shownHeads(panel))[0], '1.2'); // previous_token 0.061, the lowest
  });

  it('filters: induction > 0.4 leaves the planted induction head alone', async () => {
    await panel.page.selectOption('#scores-filter-name', 'induction');
    await panel.page.fill('#scores-threshold', '0.4');
    assert.deepEqual(await shownHeads(panel), ['1.0']);
    assert.match(await panel.page.textContent('#scores-count') ?? '', /^1 of 6 heads shown/);
    // The filter drives the model view: its Layers and Heads become the matching head's, and it asks for that grid.
    await panel.page.click('#scores-to-model-view');
    assert.deepEqual([await panel.page.inputValue('#grid-layers'), await panel.page.inputValue('#grid-heads')], ['1', '0']);
    await panel.page.waitForFunction(() =>
      (window as unknown as { posted: { query?: { kind: string; layers?: number[]; heads?: number[] } }[] }).posted.some((m) => m.query?.kind === 'grid' && m.query.layers?.join() === '1' && m.query.heads?.join() === '0'),
    );
    assert.equal(await panel.page.isVisible('#heads-model'), true);
    await panel.page.click('#tab-heads-scores');
    await panel.page.selectOption('#scores-filter-side', '<');
    assert.deepEqual((await shownHeads(panel)).sort(), ['0.0', '0.1', '0.2', '1.1', '1.2']);
    await panel.page.fill('#scores-threshold', '');
    assert.equal((await shownHeads(panel)).length, 6);
  });

  it('exports every score as CSV and JSON through the host', async () => {
    await panel.page.click('[data-export="scores-csv"]');
    await panel.page.click('[data-export="scores-json"]');
    const posted = await panel.page.evaluate(() => (window as unknown as { posted: { type: string; format?: string; fileName?: string; text?: string }[] }).posted.filter((m) => m.type === 'export'));
    assert.deepEqual(posted.map((m) => [m.format, m.fileName]), [['csv', 'planted.pt-head-scores.csv'], ['json', 'planted.pt-head-scores.json']]);
    const lines = posted[0].text!.trim().split('\n');
    assert.equal(lines[0], 'layer,head,previous_token,duplicate_token,induction,first_token,entropy,local');
    assert.equal(lines.length, 7);
    assert.deepEqual(JSON.parse(posted[1].text!), { scores: analyseStack(stack).scores });
  });

  it('shows the rollout bars over the input tokens, token labels as written', async () => {
    const labels = await panel.page.$$eval('#scores-rollout-bars .bar-label', (nodes) => nodes.map((node) => node.textContent));
    assert.equal(labels.length, 13);
    assert.equal(labels[0], '“<s>” (0)');
    assert.deepEqual(panel.errors, []);
  });
});
