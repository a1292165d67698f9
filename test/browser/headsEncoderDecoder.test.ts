// The heads page of an encoder–decoder run in Chromium: saved attentions of encoder, decoder and
// cross-attention (scripts/gen_saved_encoder_decoder.py) answered by the worker's code
// (headsPage.ts). The Encoder / Decoder / Cross selector switches every view to that kind and
// every question the page asks names it; the head view labels its columns target and source; the
// alignment view draws the target × source map of one head or a layer's mean with the tokens on
// both axes, the weights PyTorch wrote on hover, and PNG/SVG exports; the rollout says why cross-
// attention has none. A model run (the Marian fixture): hovering a target token shows the next
// target token's top 5, as PyTorch's logits give them; the encoder's tokens predict nothing.
// Screenshots: test-output/screenshots/heads-alignment*.png.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadSavedAttentions } from '../../src/core/heads/load';
import { runModel, type ModelRun } from '../../src/core/model/run';
import { folderFiles } from '../../src/node/modelFiles';
import { seq2seqFixture, seq2seqReference } from '../unit/seq2seq/fixtures';
import { shownToken } from '../../src/core/words';
import { DEFAULT_LIMITS } from '../../src/core/parse/tensors';
import type { HeadsViewToHost } from '../../src/protocol';
import { quoted, weightText } from '../../webview/heads/page';
import { ROOT } from './harness';
import { closeChecked, type HeadsPage, openHeads } from './headsPage';

const DIR = path.join(ROOT, 'test', 'fixtures', 'heads', 'encoder-decoder');
const SHOTS = path.join(ROOT, 'test-output', 'screenshots');
const expected = JSON.parse(readFileSync(path.join(DIR, 'expected.json'), 'utf8')) as {
  tokens: string[];
  target_tokens: string[];
  kinds: Record<'encoder' | 'decoder' | 'cross', { layers: number; heads: number; weights: number[][][] }>;
};
const run = loadSavedAttentions(path.join(DIR, 'ids', 'outputs.pt'), DEFAULT_LIMITS).stack;
const SOURCE = expected.tokens.length;

const sentQueries = async (panel: HeadsPage) => (await panel.sent()).flatMap((m: HeadsViewToHost) => (m.type === 'query' ? [m.query] : []));
const label = (token: string, index: number) => `“${shownToken(token)}” (${index})`;

/** The mean over heads of PyTorch's cross-attention weights of `layer`, at target row, source column. */
function crossMean(layer: number, row: number, col: number): number {
  const heads = expected.kinds.cross.weights[layer];
  return heads.reduce((sum, weights) => sum + weights[row * SOURCE + col], 0) / heads.length;
}

/** Hovers the centre of cell (row, col) of a labelled map and reads its hover line. */
async function hoverCell(panel: HeadsPage, id: string, rows: number, cols: number, row: number, col: number): Promise<string> {
  const canvas = panel.page.locator(`#${id}-canvas`);
  // Scrolled into view first: a tall map may reach past the viewport.
  await canvas.scrollIntoViewIfNeeded();
  const box = (await canvas.boundingBox())!;
  await canvas.hover({ position: { x: ((col + 0.5) * box.width) / cols, y: ((row + 0.5) * box.height) / rows } });
  return panel.page.locator(`#${id}-hover`).innerText();
}

describe('heads page of an encoder–decoder run', function () {
  let panel: HeadsPage | undefined;
  afterEach(async () => {
    await closeChecked(panel);
    panel = undefined;
  });

  it('opens on cross-attention and switches every view to the kind chosen, asking for that kind', async () => {
    panel = await openHeads(run);
    const kinds = await panel.page.$$eval('#heads-kinds [data-kind]', (buttons) => buttons.map((b) => [b.textContent, b.getAttribute('aria-checked')]));
    assert.deepEqual(kinds, [['Encoder', 'false'], ['Decoder', 'false'], ['Cross', 'true']]);
    assert.match(await panel.page.locator('header .meta').first().innerText(), /^2 layers × 2 heads · 8 queries × 7 keys$/);
    assert.deepEqual((await sentQueries(panel)).filter((q) => q.kind === 'grid'), [{ kind: 'grid', size: 48, mode: 'max', layers: [0, 1], heads: [0, 1], attention: 'cross' }]);
    await panel.page.click('#heads-kinds [data-kind="encoder"]');
    await panel.page.waitForSelector('#heads-kinds [data-kind="encoder"][aria-checked="true"]');
    await panel.page.waitForSelector('#grid-canvas[data-painted="12"]');
    assert.match(await panel.page.locator('header .meta').first().innerText(), /^3 layers × 4 heads · 7 queries × 7 keys$/);
    assert.match(await panel.page.locator('#heads-kind-hint').innerText(), /source tokens attend to source tokens/);
    const grids = (await sentQueries(panel)).filter((q) => q.kind === 'grid');
    assert.deepEqual(grids[grids.length - 1], { kind: 'grid', size: 48, mode: 'max', layers: [0, 1, 2], heads: [0, 1, 2, 3], attention: 'encoder' });
    // The HTML report of the model view shown names its kind, for the host to title and count it.
    await panel.page.click('#heads-report');
    const report = (await panel.sent()).find((m) => m.type === 'report');
    assert.ok(report?.type === 'report');
    assert.deepEqual([report.fileName, report.attention], ['test.pt_encoder-heads.html', 'encoder']);
    // A head opened on the Decoder page is the decoder's: its map's rows and columns are the target.
    await panel.page.click('#heads-kinds [data-kind="decoder"]');
    await panel.page.waitForSelector('#grid-canvas[data-painted="4"]');
    await panel.page.locator('#grid-canvas').focus();
    await panel.page.keyboard.press('Enter');
    await panel.page.waitForSelector('#heads-head #head-canvas');
    const heads = (await sentQueries(panel)).filter((q) => q.kind === 'head');
    assert.deepEqual(heads[heads.length - 1], { kind: 'head', layer: 0, head: 0, attention: 'decoder' });
    const hovered = await hoverCell(panel, 'head', 8, 8, 5, 2);
    assert.equal(hovered, `target query ${label(expected.target_tokens[5], 5)} → target key ${label(expected.target_tokens[2], 2)}: ${weightText(expected.kinds.decoder.weights[0][0][5 * 8 + 2])}`);
  });

  it('draws cross-attention in the head view between the target column and the source column', async () => {
    panel = await openHeads(run);
    await panel.page.click('#tab-heads-lines');
    assert.equal(await panel.page.locator('#lines-columns').innerText(), 'Left: target tokens; right: source tokens.');
    await panel.page.waitForFunction(() => Number(document.getElementById('lines-canvas')?.dataset.lines) > 0);
    const lines = (await sentQueries(panel)).filter((q) => q.kind === 'lines');
    assert.deepEqual(lines, [{ kind: 'lines', layer: 0, heads: [0], k: 5, attention: 'cross' }]);
    // Hover target token 2 (left column, row 2): its lines go to source tokens.
    const box = (await panel.page.locator('#lines-canvas').boundingBox())!;
    await panel.page.mouse.move(box.x + 40, box.y + 2 * 16 + 8);
    const reading = await panel.page.locator('#lines-hover').innerText();
    assert.ok(reading.startsWith(`Query ${label(expected.target_tokens[2], 2)} →`), reading);
    const row = expected.kinds.cross.weights[0][0].slice(2 * SOURCE, 3 * SOURCE);
    const strongest = row.indexOf(Math.max(...row));
    assert.ok(reading.includes(`head 0: “${shownToken(expected.tokens[strongest])}” ${weightText(row[strongest])}`), reading);
  });

  it('shows the alignment of a layer\'s mean and of one head, with tokens on both axes and PyTorch\'s weights on hover', async () => {
    panel = await openHeads(run);
    // From the Encoder page too: the alignment is always cross-attention's.
    await panel.page.click('#heads-kinds [data-kind="encoder"]');
    await panel.page.waitForSelector('#grid-canvas[data-painted="12"]');
    await panel.page.click('#tab-heads-alignment');
    await panel.page.waitForSelector('#alignment-map[data-layer="1"][data-head="mean"] #alignment-canvas');
    const ticks = (axis: string) => panel!.page.$$eval(`#alignment-map .axis-${axis} .tick:not(.hovered)`, (labels) => labels.map((l) => l.textContent));
    assert.deepEqual(await ticks('rows'), expected.target_tokens.map(shownToken));
    assert.deepEqual(await ticks('columns'), expected.tokens.map(shownToken));
    assert.equal(await hoverCell(panel, 'alignment', 8, 7, 2, 1), `target ${label(expected.target_tokens[2], 2)} → source ${label(expected.tokens[1], 1)}: ${weightText(crossMean(1, 2, 1))}`);
    assert.equal(await panel.page.locator('#alignment-row-hover').innerText(), label(expected.target_tokens[2], 2).replace(/[“”]/g, ''));
    await panel.page.screenshot({ path: path.join(SHOTS, 'heads-alignment.png'), fullPage: true });
    // One head of layer 0.
    await panel.page.selectOption('#alignment-layer', '0');
    await panel.page.waitForSelector('#alignment-map[data-layer="0"][data-head="mean"]');
    await panel.page.selectOption('#alignment-head', '1');
    await panel.page.waitForSelector('#alignment-map[data-layer="0"][data-head="1"]');
    assert.equal(await hoverCell(panel, 'alignment', 8, 7, 6, 4), `target ${label(expected.target_tokens[6], 6)} → source ${label(expected.tokens[4], 4)}: ${weightText(expected.kinds.cross.weights[0][1][6 * SOURCE + 4])}`);
    const asked = (await sentQueries(panel)).filter((q) => q.kind === 'layerMean' || (q.kind === 'head' && q.attention === 'cross'));
    assert.deepEqual(asked, [{ kind: 'layerMean', layer: 1, attention: 'cross' }, { kind: 'layerMean', layer: 0, attention: 'cross' }, { kind: 'head', layer: 0, head: 1, attention: 'cross' }]);
  });

  it('exports the alignment as PNG and SVG with its tokens, named by the run and the kind', async () => {
    panel = await openHeads(run);
    await panel.page.click('#tab-heads-alignment');
    await panel.page.waitForSelector('#alignment-map #alignment-canvas');
    await panel.page.click('[data-export="alignment-svg"]');
    await panel.page.click('[data-export="alignment-png"]');
    await panel.page.waitForFunction(() => (window as unknown as { posted: { type: string }[] }).posted.filter((m) => m.type === 'export').length === 2);
    const [svg, png] = (await panel.sent()).filter((m) => m.type === 'export');
    assert.ok(svg.type === 'export' && svg.format === 'svg' && svg.text);
    assert.equal(svg.fileName, 'test.pt_cross-L1-mean.svg');
    assert.match(svg.text, /<title>test\.pt · cross: layer 1 · mean of 2 heads<\/title>/);
    const texts = [...svg.text.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((match) => match[1]);
    assert.deepEqual(texts, [...expected.target_tokens, ...expected.tokens].map((token) => shownToken(token).replace(/[<>]/g, (c) => `&#${c.charCodeAt(0)};`)));
    assert.ok(png.type === 'export' && png.format === 'png' && png.base64);
    assert.equal(png.fileName, 'test.pt_cross-L1-mean.png');
    const bytes = Buffer.from(png.base64, 'base64');
    const cells = await panel.page.$eval('#alignment-canvas', (canvas) => [(canvas as HTMLCanvasElement).width, (canvas as HTMLCanvasElement).height]);
    // The map with its label margins.
    assert.ok(bytes.readUInt32BE(16) > cells[0] && bytes.readUInt32BE(20) > cells[1]);
  });

  it('says why cross-attention has no rollout, and shows the encoder\'s', async () => {
    panel = await openHeads(run);
    await panel.page.click('#tab-heads-scores');
    await panel.page.waitForSelector('#scores-rollout-note');
    assert.match(await panel.page.locator('#scores-rollout-note').innerText(), /^No rollout for cross-attention: .*do not chain/);
    assert.equal(await panel.page.locator('#scores-rollout-map').count(), 0);
    await panel.page.click('#heads-kinds [data-kind="encoder"]');
    // The page opens the new kind on the tab shown.
    await panel.page.waitForSelector('#scores-rollout-map');
    assert.match(await panel.page.locator('#scores-rollout-note').innerText(), /^The encoder’s self-attention/);
    const scores = (await sentQueries(panel)).filter((q) => q.kind === 'scores');
    assert.deepEqual(scores, [{ kind: 'scores', attention: 'cross' }, { kind: 'scores', attention: 'encoder' }]);
  });

  describe('a model run', function () {
    this.timeout(180_000);
    let marian: ModelRun;
    before(async () => {
      const reference = seq2seqReference('marian-f16');
      marian = await runModel(folderFiles(seq2seqFixture('marian-f16')), { ids: reference.source_ids, target: { ids: reference.target_ids } });
    });

    /** The tooltip once the mouse has rested on query token `index` of the head view. */
    async function restOn(panel: HeadsPage, index: number): Promise<{ hidden: boolean; text: string }> {
      const box = (await panel.page.locator('#lines-canvas').boundingBox())!;
      await panel.page.mouse.move(box.x + 100, box.y + index * 16 + 8);
      await panel.page.clock.runFor(500);
      await panel.page.waitForFunction((at) => (window as unknown as { posted: { type: string; query?: { kind: string; position: number } }[] }).posted.some((m) => m.query?.kind === 'predict' && m.query.position === at), index);
      await panel.page.waitForSelector(`#prediction-tooltip[data-position="${index}"]`, { state: 'attached' });
      return panel.page.$eval('#prediction-tooltip', (tip) => ({ hidden: (tip as HTMLElement).hidden, text: tip.textContent ?? '' }));
    }

    it('shows the next target token\'s top 5 on a target token, as PyTorch\'s logits rank them; nothing on a source token', async () => {
      const reference = seq2seqReference('marian-f16');
      panel = await openHeads(marian, { ownContext: true });
      await panel.page.clock.install();
      await panel.page.clock.pauseAt(Date.now() + 60_000);
      await panel.page.click('#tab-heads-lines');
      const last = marian.queryCount - 1;
      const prediction = (await marian.predictAt(last))!;
      // The top 5 are PyTorch's: the ids of its five largest logits at the last target position, their softmax.
      const logits = reference.logits_last;
      const top = logits.map((value, id) => ({ id, value })).sort((a, b) => b.value - a.value || a.id - b.id).slice(0, 5);
      const norm = logits.reduce((sum, value) => sum + Math.exp(value - top[0].value), 0);
      assert.deepEqual(prediction.top.map((t) => t.id), top.map((t) => t.id));
      prediction.top.forEach((t, k) => assert.ok(Math.abs(t.probability - Math.exp(top[k].value - top[0].value) / norm) < 1e-3, `candidate ${k}`));
      assert.deepEqual(await restOn(panel, last), { hidden: false, text: `after ${quoted(marian.tokens[last])}: ${prediction.top.map((t) => `${t.token} ${weightText(t.probability)}`).join(', ')}` });
      // The encoder's page: its source tokens have no next token to predict.
      await panel.page.click('#heads-kinds [data-kind="encoder"]');
      await panel.page.waitForSelector('#heads-kinds [data-kind="encoder"][aria-checked="true"]');
      await panel.page.click('#tab-heads-lines');
      assert.equal((await restOn(panel, 1)).hidden, true);
      const asked = (await sentQueries(panel)).filter((q) => q.kind === 'predict');
      assert.deepEqual(asked, [{ kind: 'predict', position: last, attention: 'cross' }, { kind: 'predict', position: 1, attention: 'encoder' }]);
    });
  });
});
