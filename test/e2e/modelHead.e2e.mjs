// End to end: a note pins the GPT-2 fixture model (random weights in Hugging Face's layout, with
// PyTorch's own attentions beside it: scripts/gen_model_fixtures.py) and its text's token ids;
// its "▶ Run model" CodeLens runs it in the real workbench (code-server in Chromium) and opens the
// heads page. A click on a head shows that head's heatmap in the page first, whose hover reads
// PyTorch's weight, and then the step-by-step panel on the same head, whose weights table is
// PyTorch's to the printed digits.
import * as assert from 'node:assert/strict';
import { assertMatrixClose, clickCodeLensUntilWebview, openFile, openGpt2Note, recordFailure, tableValues, webviewFrame, weightsCard } from './workbench.mjs';

describe('a model run\'s head, end to end', function () {
  this.timeout(300_000);
  let workbench;
  let reference;

  before(async () => {
    ({ reference, workbench } = await openGpt2Note());
  });
  afterEach(async function () {
    await recordFailure(this.currentTest, workbench);
  });
  after(async () => {
    await workbench?.close();
  });

  it('▶ Run model → model view → a click on a head → its heatmap in the page, then step by step with PyTorch\'s weights', async () => {
    const { page } = workbench;
    await openFile(page, 'model.md');
    const heads = await clickCodeLensUntilWebview(page, '▶ Run model', '#grid-canvas[data-painted]');
    // Layer 1, head 0: thumbnails of 48 px after a 28 px label margin, 6 px apart.
    const box = await heads.locator('#grid-canvas').boundingBox();
    await page.mouse.click(box.x + 28 + 10, box.y + 28 + 54 + 10);
    await heads.locator('#heads-head[data-layer="1"][data-head="0"] #head-canvas').waitFor();
    // The click opens the step-by-step panel in a new group beside, which narrows the heads page:
    // measure the head's map once that layout has settled, or the hover lands on another key.
    const panel = await webviewFrame(page, 'section.card.heatmap[data-key="weights"]');
    const n = reference.token_ids.length;
    const map = await heads.locator('#head-canvas').boundingBox();
    await page.mouse.move(map.x + map.width / (2 * n), map.y + map.height * (1 - 1 / (2 * n))); // the last query, key 0
    const weight = reference.attentions[1][0][n - 1][0];
    await heads.locator('#head-hover', { hasText: new RegExp(`\\(${n - 1}\\) → key .* \\(0\\): ${weight.toFixed(3)}$`) }).waitFor();

    assertMatrixClose(await tableValues(weightsCard(panel, 0)), reference.attentions[1][0], 'L1 H0 weights', 'PyTorch');
    assert.deepEqual(workbench.pageErrors, []);
  });
});
