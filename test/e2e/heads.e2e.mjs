// End to end: saved attentions (numpy.savez, one array per layer, tokens.json beside; written by
// scripts/gen_saved_attentions.py) open in the tensor file view of the real workbench
// (code-server in Chromium); Show heads opens the heads page, whose model view paints every
// layer × head; a click on a head shows its heatmap, whose hover reads the weight numpy wrote.
// Then the Compare tab: "Compare with another file…" through the workbench's own open dialog, a
// second file of the same shape (torch.save'd batch2.pt, batch item 0), the heads ranked, and a
// head's B − A whose hover reads both weights the script wrote.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { paths } from '../runner/paths.mjs';
import { eventually, openQuickInput, openWorkbench, pickQuickItem, recordFailure, webviewFrame } from './workbench.mjs';

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
        'saved/batch2.pt': readFileSync(join(fixtures, 'pt', 'batch2.pt')),
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

  it('compares with another file: the Compare tab ranks the heads and hovers B − A', async () => {
    const { page } = workbench;
    const heads = await webviewFrame(page, '#grid-canvas[data-painted="6"]');
    await heads.locator('#tab-heads-compare').click();
    await heads.locator('#compare-file').click();
    // The workbench's open dialog: a quick input holding the first file's folder, ending in "/".
    const input = page.locator('.quick-input-widget input.input').filter({ visible: true });
    await eventually(async () => assert.match(await input.inputValue(), /saved\/$/));
    await input.press('End');
    await page.keyboard.type('batch2.pt');
    await page.keyboard.press('Enter');
    await heads.locator('#compare-ranking li').first().waitFor();
    assert.equal(await heads.locator('#compare-run-a').innerText(), 'A: layers.npz');
    assert.equal(await heads.locator('#compare-run-b').innerText(), 'B: batch2.pt');
    assert.equal(await heads.locator('#compare-ranking li').count(), 6);
    await heads.locator('#compare-ranking li[data-layer="1"][data-head="2"]').click();
    const map = await heads.locator('#compare-head[data-layer="1"][data-head="2"] #compare-difference-canvas');
    await map.scrollIntoViewIfNeeded();
    const box = await map.boundingBox();
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.7); // query 3, key 1
    const a = expected.weights[1][2][3 * 5 + 1];
    const b = expected.files['pt/batch2.pt'].weights[1][2][3 * 5 + 1];
    const change = `${b > a ? '+' : '−'}${Math.abs(b - a).toFixed(3)}`;
    await heads.locator('#compare-hover', { hasText: `query “on” (3) → key “cat” (1): A ${a.toFixed(3)}, B ${b.toFixed(3)}, B − A ${change}` }).waitFor();
    assert.deepEqual(workbench.pageErrors, []);
  });
});
