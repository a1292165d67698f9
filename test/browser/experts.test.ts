// The heads page's Experts tab (webview/heads/experts.ts) in Chromium, on a real Qwen2-MoE run of
// the fixture (a dense layer between two sparse ones): a layers × tokens grid coloured by each
// token's top expert, the hover naming the token, the layer, its experts and weights as the run
// recorded them, and per expert the tokens that chose it. A dense model's page has no such tab.
import assert from 'node:assert/strict';
import path from 'node:path';
import { routingPairs } from '../../src/core/model/experts';
import { runModel, type ModelRun } from '../../src/core/model/run';
import { folderFiles } from '../../src/node/modelFiles';
import { expertCounts } from '../../webview/heads/experts';
import { quoted, weightText } from '../../webview/heads/page';
import { modelFixture, modelReference } from '../unit/model/fixtures';
import { type HeadsPage, openHeads } from './headsPage';

const SCREENSHOTS = path.join(__dirname, '..', '..', 'test-output', 'screenshots');

describe('heads page: experts', function () {
  let run: ModelRun;
  let panel: HeadsPage;
  before(async () => {
    run = await runModel(folderFiles(modelFixture('qwen2-moe-sharded-f16')), { ids: modelReference('qwen2-moe-sharded-f16').token_ids });
    panel = await openHeads(run);
    await panel.page.click('#tab-heads-experts');
    await panel.page.waitForSelector('#experts-canvas[data-painted]');
  });
  after(async () => {
    await panel?.close();
  });

  it('draws one cell per layer and token, coloured by the top expert, and says each cell\'s experts on hover', async () => {
    const pairs = routingPairs(run.routing!, run.queryCount);
    assert.equal(await panel.page.getAttribute('#experts-canvas', 'data-painted'), String(3 * run.queryCount));
    const box = (await panel.page.locator('#experts-canvas').boundingBox())!;
    const cell = (box.width - 44) / run.queryCount;
    const hover = async (layer: number, t: number) => {
      await panel.page.mouse.move(box.x + 44 + (t + 0.5) * cell, box.y + (layer + 0.5) * 18);
      return panel.page.textContent('#experts-tooltip');
    };
    assert.equal(await hover(2, 4), `${quoted(run.tokens[4])} (4) · layer 2: ${pairs[2][4].map(([e, w]) => `E${e} ${weightText(w)}`).join(', ')}`);
    assert.match((await hover(2, 4)) ?? '', /E\d 0\.\d{3}, E\d 0\.\d{3}, E\d 0\.\d{3}$/);
    assert.equal(await hover(1, 0), `${quoted(run.tokens[0])} (0) · layer 1: dense MLP (no experts)`);
    // The top expert's colour at a cell's centre.
    const [e] = pairs[0][3][0];
    const rgb = await panel.page.evaluate(([x, y, expert]) => {
      const canvas = document.getElementById('experts-canvas') as HTMLCanvasElement;
      const scale = canvas.width / canvas.getBoundingClientRect().width;
      const probe = document.createElement('canvas').getContext('2d')!;
      probe.fillStyle = `hsl(${Math.round((expert * 137.508) % 360)}, 70%, 50%)`;
      probe.fillRect(0, 0, 1, 1);
      return [Array.from(canvas.getContext('2d')!.getImageData(Math.floor(x * scale), Math.floor(y * scale), 1, 1).data.slice(0, 3)), Array.from(probe.getImageData(0, 0, 1, 1).data.slice(0, 3))];
    }, [44 + 3.5 * cell, 9, e] as const);
    assert.deepEqual(rgb[0], rgb[1]);
    await panel.page.screenshot({ path: path.join(SCREENSHOTS, 'heads-experts.png'), fullPage: true });
  });

  it('counts per expert the tokens that chose it, over all layers or one', async () => {
    const pairs = routingPairs(run.routing!, run.queryCount);
    const shown = () => panel.page.$$eval('#experts-counts tr[data-expert] td.count', (cells) => cells.map((c) => Number(c.textContent)));
    assert.deepEqual(await shown(), expertCounts(6, pairs).any);
    assert.equal((await shown()).reduce((a, b) => a + b, 0), 2 * 3 * run.queryCount, 'two sparse layers, 3 experts per token');
    await panel.page.selectOption('#experts-layer', '2');
    assert.deepEqual(await shown(), expertCounts(6, [pairs[2]]).any);
    assert.deepEqual(await panel.page.$$eval('#experts-layer option', (o) => o.map((x) => (x as HTMLOptionElement).value)), ['all', '0', '2']);
    assert.deepEqual(panel.errors, []);
  });

  it('a dense model\'s page has no Experts tab', async () => {
    const dense = await openHeads(await runModel(folderFiles(modelFixture('qwen3')), { ids: modelReference('qwen3').token_ids }));
    try {
      assert.equal(await dense.page.$('#tab-heads-experts'), null);
    } finally {
      await dense.close();
    }
  });
});
