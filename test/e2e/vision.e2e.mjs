// End to end: a vision model folder (the ViT classifier fixture, scripts/gen_vision_fixtures.py)
// copied into the workspace; its model.safetensors opens in the tensor view, whose "Run model"
// offers the pictures in and beside the folder; running it on one opens the heads page on the
// model view, every layer × head drawn as the picture under the class token's attention.
import * as assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { openQuickInput, openWorkbench, pickQuickItem, recordFailure, visionFixture, webviewFrame } from './workbench.mjs';

describe('a vision model on a picture, end to end', function () {
  this.timeout(300_000);
  let workbench;

  before(async () => {
    const folder = visionFixture('vit-classifier');
    workbench = await openWorkbench();
    cpSync(folder, join(workbench.folder, 'vit'), { recursive: true });
  });
  afterEach(async function () {
    await recordFailure(this.currentTest, workbench);
  });
  after(async () => {
    await workbench?.close();
  });

  it("the tensor view's Run model on a picture beside the folder → the model view drawn over the picture", async () => {
    const { page } = workbench;
    await openQuickInput(page, 'Control+P');
    await pickQuickItem(page, 'model.safetensors');
    const view = await webviewFrame(page, '#model-picture');
    assert.match(await view.locator('#model').innerText(), /vit vision model/);
    const offered = await view.locator('#model-picture option').allInnerTexts();
    assert.ok(offered.includes('rgba.png') && offered.at(-1) === 'Choose a picture…', offered.join(', '));
    await view.locator('#model-picture').selectOption({ label: 'rgba.png' });
    await view.locator('#run-model').click();
    const heads = await webviewFrame(page, '#grid-canvas[data-overlay="0"]');
    assert.match(await heads.locator('#grid-legend').innerText(), /2 layers × 2 heads: each thumbnail the picture under that head's attention from \[CLS\]/);
    assert.match(await heads.locator('h1').innerText(), /vit/);
    assert.deepEqual(workbench.pageErrors, []);
  });
});
