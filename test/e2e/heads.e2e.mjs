// End to end: saved attentions (numpy.savez, one array per layer, tokens.json beside; written by
// scripts/gen_saved_attentions.py) open in the tensor file view of the real workbench
// (code-server in Chromium); Show heads opens the heads page, whose model view paints every
// layer × head; a click on a head shows its heatmap, whose hover reads the weight numpy wrote.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { paths } from '../runner/paths.mjs';
import { openQuickInput, openWorkbench, pickQuickItem, recordFailure, webviewFrame } from './workbench.mjs';

const fixtures = join(paths.repoRoot, 'test', 'fixtures', 'heads', 'saved');
const expected = JSON.parse(readFileSync(join(fixtures, 'expected.json'), 'utf8'));

describe('heads views, end to end', function () {
  this.timeout(300_000);
  let workbench;

  before(async () => {
    workbench = await openWorkbench({
      files: {
        'saved/layers.npz': readFileSync(join(fixtures, 'sidecar', 'layers.npz')),
        'saved/tokens.json': readFileSync(join(fixtures, 'sidecar', 'tokens.json')),
      },
    });
  });
  afterEach(async function () {
    await recordFailure(this.currentTest, workbench);
  });
  after(async () => {
    await workbench?.close();
  });

  it('opens saved attentions → model view → a click on a head → its heatmap', async () => {
    const { page } = workbench;
    await openQuickInput(page, 'Control+P');
    await pickQuickItem(page, 'layers.npz');
    const tensorView = await webviewFrame(page, '#show-heads');
    await tensorView.locator('#show-heads').click();
    const heads = await webviewFrame(page, '#grid-canvas[data-painted="6"]');
    assert.match(await heads.locator('#heads-notes').innerText(), /Tokens: tokens\.json beside the file/);
    // Layer 1, head 2: thumbnails of 48 px after a 28 px label margin, 6 px apart.
    const box = await heads.locator('#grid-canvas').boundingBox();
    await page.mouse.click(box.x + 28 + 2 * 54 + 10, box.y + 28 + 54 + 10);
    await heads.locator('#heads-head[data-layer="1"][data-head="2"] #head-canvas').waitFor();
    const map = await heads.locator('#head-canvas').boundingBox();
    await page.mouse.move(map.x + map.width * 0.3, map.y + map.height * 0.7); // query 3, key 1
    const weight = expected.weights[1][2][3 * 5 + 1];
    await heads.locator('#head-hover', { hasText: `query “on” (3) → key “cat” (1): ${weight.toFixed(3)}` }).waitFor();
    assert.deepEqual(workbench.pageErrors, []);
  });
});
