// End to end: a model run leaves its weights resident in the worker (core/model/resident.ts), and
// the status bar says so — the folder's name and the memory held, the tooltip how — until a click
// on it (Release Resident Models) lets them go, when the item leaves the status bar. Runs in the
// real workbench (code-server in Chromium) on the GPT-2 fixture.
import * as assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { clickCodeLensUntilWebview, openFile, openGpt2Note, recordFailure } from './workbench.mjs';

describe('resident models in the status bar, end to end', function () {
  this.timeout(300_000);
  let workbench;
  let folder;

  before(async () => {
    ({ folder, workbench } = await openGpt2Note());
  });
  afterEach(async function () {
    await recordFailure(this.currentTest, workbench);
  });
  after(async () => {
    await workbench?.close();
  });

  it('a run puts the model in the status bar with the memory it holds; a click releases it and the item goes', async () => {
    const { page } = workbench;
    const item = page.locator('.statusbar-item', { hasText: /gpt2 · [\d.]+ [KMG]iB/ });
    assert.equal(await item.count(), 0, 'nothing is resident before a run');
    await openFile(page, 'model.md');
    await clickCodeLensUntilWebview(page, '▶ Run model', '#grid-canvas[data-painted]');
    await item.waitFor();
    // The figure is the weights the worker holds: at least the checkpoint's float32 bytes on disk
    // (the fixture is float32, so widening adds nothing), and not more than twice them.
    const [, figure, unit] = (await item.innerText()).match(/([\d.]+) ([KMG])iB/);
    const shown = Number(figure) * 1024 ** ' KMG'.indexOf(unit);
    const fileBytes = statSync(join(folder, 'model.safetensors')).size;
    assert.ok(shown >= fileBytes * 0.99 && shown <= fileBytes * 2, `status bar says ${shown} bytes for a ${fileBytes}-byte checkpoint`);
    await item.hover();
    await page.locator('.monaco-hover', { hasText: `${folder}:` }).waitFor();
    await item.click();
    await item.waitFor({ state: 'detached' });
    await page.locator('.statusbar-item', { hasText: 'resident models released' }).waitFor();
    assert.deepEqual(workbench.pageErrors, []);
  });
});
