// The heads page's "Head scores" tab (webview/heads/scores.ts) in Chromium: the page asks the
// worker for the scores, shows a row per head, sorts by any score and filters by a condition —
// "induction > 0.4" leaves only the planted induction head — and draws the rollout's bars.
import assert from 'node:assert/strict';
import { analyseStack } from '../../src/core/heads/analysis';
import { referenceCase, stackOf } from '../unit/heads/references';
import { type HeadsPage, openHeads } from './headsPage';

const planted = referenceCase('planted');
const tokens = planted.ids!.map((id) => (id === 0 ? '<s>' : `t${id}`));
const stack = { ...stackOf(planted.weights, 'float64', planted.ids), tokens, keyTokens: tokens };

async function shownHeads(panel: HeadsPage): Promise<string[]> {
  return panel.page.$$eval('#scores-table tr[data-layer]', (rows) => rows.map((row) => `${row.getAttribute('data-layer')}.${row.getAttribute('data-head')}`));
}

describe('heads page: head scores', function () {
  let panel: HeadsPage;
  before(async () => {
    // The test answers the page's queries with the worker's own code (answerQuery), scores included.
    panel = await openHeads(stack);
    await panel.page.click('#tab-heads-scores');
    await panel.page.waitForSelector('#scores-table tr[data-layer]');
  });
  after(async () => {
    await panel?.close();
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
    await panel.page.waitForSelector('#grid-canvas[data-painted]');
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
    const posted = (await panel.sent()).flatMap((m) => (m.type === 'export' ? [m] : []));
    assert.deepEqual(posted.map((m) => [m.format, m.fileName]), [['csv', 'test.pt-head-scores.csv'], ['json', 'test.pt-head-scores.json']]);
    const lines = posted[0].text!.trim().split('\n');
    assert.equal(lines[0], 'layer,head,previous_token,duplicate_token,induction,first_token,entropy,local');
    assert.equal(lines.length, 7);
    assert.deepEqual(JSON.parse(posted[1].text!), { scores: (await analyseStack(stack)).scores });
  });

  it('shows the rollout bars over the input tokens, token labels as written', async () => {
    const labels = await panel.page.$$eval('#scores-rollout-bars .bar-label', (nodes) => nodes.map((node) => node.textContent));
    assert.equal(labels.length, 13);
    assert.equal(labels[0], '“<s>” (0)');
    assert.deepEqual(panel.errors, []);
  });
});
