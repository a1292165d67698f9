// The heads page's "Picture" tab (webview/heads/picture.ts) in Chromium, on a real vision run (the
// ViT classifier fixture on its RGBA picture): the picture with its patch grid, the class token's
// attention of a chosen head as a translucent overlay equal to the run's weights, the opacity
// control, a click on a patch choosing that patch's attention, the rollout, the top labels, and a
// PNG export. The page's queries are answered by the worker's own code (headsPage.ts).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { runModel, type ModelRun } from '../../src/core/model/run';
import { folderFiles } from '../../src/node/modelFiles';
import { overlayColor } from '../../webview/heads/picture';
import { visionFixture } from '../unit/vision/fixtures';
import { ROOT } from './harness';
import { type HeadsPage, openHeads } from './headsPage';

const SCREENSHOTS = path.join(ROOT, 'test-output', 'screenshots');

/** The canvas's RGBA at the centre of patch (r, c) of a rows × cols grid covering the whole canvas. */
async function patchPixel(panel: HeadsPage, r: number, c: number, rows: number, cols: number): Promise<number[]> {
  return panel.page.$eval(
    '#picture-canvas',
    (canvas, [r, c, rows, cols]) => {
      const el = canvas as HTMLCanvasElement;
      const x = Math.floor(((c + 0.5) * el.width) / cols);
      const y = Math.floor(((r + 0.5) * el.height) / rows);
      return Array.from(el.getContext('2d')!.getImageData(x, y, 1, 1).data);
    },
    [r, c, rows, cols],
  );
}

describe('heads page: the picture of a vision run', function () {
  let panel: HeadsPage;
  let run: ModelRun;
  before(async () => {
    const folder = visionFixture('vit-classifier');
    run = await runModel(folderFiles(folder), { image: { name: 'rgba.png', bytes: readFileSync(path.join(folder, 'rgba.png')) } });
    panel = await openHeads(run);
    await panel.page.click('#tab-heads-picture');
    await panel.page.waitForSelector('#picture-canvas[data-painted="head:0:0:0"]');
    await panel.page.waitForFunction(() => /L0 H0: attention from \[CLS\]/.test(document.getElementById('picture-status')!.textContent ?? ''));
  });
  after(async () => {
    await panel?.close();
  });

  it("lays the class token's attention of the chosen head over the picture, brightest where the run's weight is largest", async () => {
    const n = run.queryCount;
    const row = run.weights(1, 1).subarray(0, n);
    await panel.page.selectOption('#picture-layer', '1');
    await panel.page.selectOption('#picture-head', '1');
    await panel.page.waitForSelector('#picture-canvas[data-painted="head:1:1:0"]');
    await panel.page.waitForFunction(() => /L1 H1: attention/.test(document.getElementById('picture-status')!.textContent ?? ''));
    const patches = Array.from(row.subarray(1));
    const top = patches.indexOf(Math.max(...patches));
    const low = patches.indexOf(Math.min(...patches));
    // Opacity 1: the overlay's colour dominates; the top patch is drawn in the ramp's brightest colour.
    await panel.page.fill('#picture-opacity', '1');
    await panel.page.dispatchEvent('#picture-opacity', 'input');
    const [bright, dim] = [await patchPixel(panel, Math.floor(top / 4), top % 4, 4, 4), await patchPixel(panel, Math.floor(low / 4), low % 4, 4, 4)];
    const expected = overlayColor(1, 1, 1);
    assert.ok(Math.abs(bright[0] - expected[0]) <= 2 && Math.abs(bright[1] - expected[1]) <= 2 && Math.abs(bright[2] - expected[2]) <= 2, `top patch ${bright} vs ${expected}`);
    assert.notDeepEqual(dim, bright);
    // Opacity 0: the picture alone.
    await panel.page.fill('#picture-opacity', '0');
    await panel.page.dispatchEvent('#picture-opacity', 'input');
    const bare = await patchPixel(panel, Math.floor(top / 4), top % 4, 4, 4);
    assert.notDeepEqual(bare, bright);
    await panel.page.fill('#picture-opacity', '0.6');
    await panel.page.dispatchEvent('#picture-opacity', 'input');
    mkdirSync(SCREENSHOTS, { recursive: true });
    await panel.page.screenshot({ path: path.join(SCREENSHOTS, 'heads-picture-cls.png') });
  });

  it('a click on a patch shows that patch’s attention; hovering names the patch and its weight', async () => {
    const box = (await panel.page.locator('#picture-canvas').boundingBox())!;
    await panel.page.mouse.click(box.x + box.width * (2.5 / 4), box.y + box.height * (1.5 / 4));
    assert.equal(await panel.page.inputValue('#picture-query'), String(1 + 1 * 4 + 2)); // [CLS] then (1,2)
    await panel.page.waitForSelector('#picture-canvas[data-painted="head:1:1:7"]');
    assert.match(await panel.page.textContent('#picture-tip') ?? '', /^\(1,2\): 0\.\d{4}$/);
    await panel.page.screenshot({ path: path.join(SCREENSHOTS, 'heads-picture-patch.png') });
  });

  it('shows the rollout over the picture, the top labels, and exports the overlay as PNG', async () => {
    await panel.page.selectOption('#picture-query', '0');
    await panel.page.selectOption('#picture-mode', 'rollout');
    await panel.page.waitForSelector('#picture-canvas[data-painted="rollout:1:1:0"]');
    await panel.page.waitForFunction(() => /^Rollout from \[CLS\]/.test(document.getElementById('picture-status')!.textContent ?? ''));
    const labels = await panel.page.$$eval('#picture-labels li', (items) => items.map((item) => item.textContent));
    assert.equal(labels.length, 5);
    assert.equal(labels[0], `${run.predictions[0].top[0].token} — ${(100 * run.predictions[0].top[0].probability).toFixed(1)}%`);
    await panel.page.click('#picture-export');
    const exported = (await panel.sent()).flatMap((m) => (m.type === 'export' ? [m] : []));
    assert.equal(exported.at(-1)?.format, 'png');
    assert.match(exported.at(-1)?.fileName ?? '', /-rollout-overlay\.png$/);
    assert.ok((exported.at(-1)?.base64 ?? '').length > 1000);
    await panel.page.screenshot({ path: path.join(SCREENSHOTS, 'heads-picture-rollout.png') });
  });
});
