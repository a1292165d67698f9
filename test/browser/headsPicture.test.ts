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
import { overlayColor } from '../../webview/heads/overlay';
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

/** The grid canvas's RGB at the centre of patch p of thumbnail (l, h) (the page at device scale 1). */
async function thumbnailPixels(panel: HeadsPage, l: number, h: number, rows: number, cols: number): Promise<number[][]> {
  return panel.page.$eval(
    '#grid-canvas',
    (canvas, [l, h, rows, cols, side, label, gap]) => {
      const g = (canvas as HTMLCanvasElement).getContext('2d')!;
      return Array.from({ length: rows * cols }, (_, p) => {
        const x = Math.floor(label + h * (side + gap) + ((p % cols) + 0.5) * (side / cols));
        const y = Math.floor(label + l * (side + gap) + (Math.floor(p / cols) + 0.5) * (side / rows));
        return Array.from(g.getImageData(x, y, 1, 1).data.subarray(0, 3));
      });
    },
    [l, h, rows, cols, THUMBNAIL, 28, 6],
  );
}

const THUMBNAIL = 48;

async function setGridOpacity(panel: HeadsPage, value: string): Promise<void> {
  await panel.page.fill('#grid-opacity', value);
  await panel.page.dispatchEvent('#grid-opacity', 'input');
}

describe('heads page: the model view of a vision run draws each head over the picture', function () {
  let panel: HeadsPage;
  let run: ModelRun;
  const [rows, cols] = [4, 4];
  /** The picture under each patch centre of each thumbnail (opacity 0), [layer][head][patch]. */
  let bare: number[][][][];

  /** Asserts thumbnail (l, h)'s every patch is the picture blended with that head's row `query`'s colour at opacity 1. */
  async function assertOverlay(l: number, h: number, query: number): Promise<void> {
    const n = run.queryCount;
    const patches = Array.from(run.weights(l, h).subarray(query * n + 1, (query + 1) * n));
    const top = Math.max(...patches);
    const drawn = await thumbnailPixels(panel, l, h, rows, cols);
    patches.forEach((w, p) => {
      const [r, g, b, a] = overlayColor(w, top, 1);
      const expected = [r, g, b].map((value, c) => bare[l][h][p][c] * (1 - a) + value * a);
      const off = Math.max(...expected.map((value, c) => Math.abs(value - drawn[p][c])));
      assert.ok(off <= 2, `L${l} H${h} from ${run.tokens[query]}, patch ${run.tokens[1 + p]}: drawn ${drawn[p]}, expected ${expected.map(Math.round)} (weight ${w.toFixed(4)} of ${top.toFixed(4)})`);
    });
  }

  before(async () => {
    const folder = visionFixture('vit-classifier');
    run = await runModel(folderFiles(folder), { image: { name: 'rgba.png', bytes: readFileSync(path.join(folder, 'rgba.png')) } });
    panel = await openHeads(run);
    await panel.page.waitForSelector('#grid-canvas[data-overlay="0"]');
    await setGridOpacity(panel, '0');
    bare = [];
    for (let l = 0; l < run.layerCount; l++) {
      bare.push([]);
      for (let h = 0; h < run.headCount; h++) bare[l].push(await thumbnailPixels(panel, l, h, rows, cols));
    }
    await setGridOpacity(panel, '1');
  });
  after(async () => {
    await panel?.close();
  });

  it("opens on the class token's attention of every layer × head laid over the picture, each patch its head's weight", async () => {
    assert.match(await panel.page.locator('#grid-legend').innerText(), /attention from \[CLS\] to each patch/);
    // The picture is there under the overlays (opacity 0 left it, not a flat colour).
    assert.ok(new Set(bare[0][0].map((rgb) => rgb.join())).size > 4, `the bare thumbnail ${bare[0][0]}`);
    for (let l = 0; l < run.layerCount; l++) for (let h = 0; h < run.headCount; h++) await assertOverlay(l, h, 0);
    // The page asked for the class token's row of each head over the patches alone, nothing more.
    const asked = (await panel.sent()).flatMap((m) => (m.type === 'query' && m.query.kind === 'rows' ? [m.query] : []));
    assert.deepEqual(asked.at(-1), { kind: 'rows', query: 0, keyStart: 1, layers: [0, 1], heads: [0, 1] });
    await panel.page.screenshot({ path: path.join(SCREENSHOTS, 'heads-model-view-picture.png') });
  });

  it("pointing at a patch shows that patch's attention in every thumbnail; leaving goes back to the class token", async () => {
    assert.equal(run.layerCount, 2, 'the fixture the positions below assume');
    const box = (await panel.page.locator('#grid-canvas').boundingBox())!;
    // Patch (1,2) of thumbnail L1 H0.
    await panel.page.mouse.move(box.x + 28 + (2.5 * THUMBNAIL) / cols, box.y + 28 + THUMBNAIL + 6 + (1.5 * THUMBNAIL) / rows);
    const query = 1 + 1 * cols + 2;
    await panel.page.waitForSelector(`#grid-canvas[data-overlay="${query}"]`);
    for (let l = 0; l < run.layerCount; l++) for (let h = 0; h < run.headCount; h++) await assertOverlay(l, h, query);
    const n = run.queryCount;
    assert.equal(await panel.page.textContent('#grid-tooltip'), `Layer 1 · head 0 · (1,2) → (1,2): ${run.weights(1, 0)[query * n + query].toFixed(3)}`);
    await panel.page.screenshot({ path: path.join(SCREENSHOTS, 'heads-model-view-patch.png') });
    await panel.page.mouse.move(box.x + box.width + 50, box.y + box.height + 50);
    await panel.page.waitForSelector('#grid-canvas[data-overlay="0"]');
    await assertOverlay(1, 1, 0);
  });

  it('a click keeps the clicked patch and opens its head; attention maps are one choice away', async () => {
    const box = (await panel.page.locator('#grid-canvas').boundingBox())!;
    // Patch (3,0) of thumbnail L0 H1.
    await panel.page.mouse.click(box.x + 28 + THUMBNAIL + 6 + (0.5 * THUMBNAIL) / cols, box.y + 28 + (3.5 * THUMBNAIL) / rows);
    assert.equal(await panel.page.inputValue('#grid-query'), String(1 + 3 * cols));
    await panel.page.waitForFunction(() => document.getElementById('heads-status')?.textContent?.includes('Layer 0 · head 1'));
    await panel.page.mouse.move(box.x + box.width + 50, box.y + box.height + 50);
    await panel.page.waitForSelector(`#grid-canvas[data-overlay="${1 + 3 * cols}"]`);
    await assertOverlay(0, 1, 1 + 3 * cols);
    await panel.page.selectOption('#grid-show', 'map');
    await panel.page.waitForFunction(() => document.getElementById('grid-canvas')!.dataset.overlay === undefined);
    assert.match(await panel.page.locator('#grid-legend').innerText(), /17 queries × 17 keys/);
  });
});
