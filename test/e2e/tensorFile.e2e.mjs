// End to end: a .safetensors file opens in the tensor view in the real workbench (code-server in
// Chromium); its table lists the tensors; Show attention with X from an open note (whose X is
// itself loaded from acts.npy) opens the panel with the weights PyTorch computes from the same
// files (scripts/gen_tensor_fixtures.py → test/fixtures/tensors/expected.json).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { paths } from '../runner/paths.mjs';
import { openFile, openQuickInput, openWorkbench, pickQuickItem, recordFailure, tableValues, webviewFrame, weightsCard } from './workbench.mjs';

const expected = JSON.parse(readFileSync(join(paths.repoRoot, 'test', 'fixtures', 'tensors', 'expected.json'), 'utf8')).attention.example;

describe('tensor file view, end to end', function () {
  this.timeout(240_000);
  let workbench;
  let page;

  before(async () => {
    workbench = await openWorkbench();
    page = workbench.page;
  });
  afterEach(async function () {
    await recordFailure(this.currentTest, workbench);
  });

  after(async () => {
    await workbench?.close();
  });

  it('lists the tensors of a .safetensors with dtype, shape and statistics', async () => {
    // The note first: its X (loaded from acts.npy) is then offered as the view's X.
    await openFile(page, 'notes.md');
    await openQuickInput(page, 'Control+P');
    await pickQuickItem(page, 'attention.safetensors');
    const view = await webviewFrame(page, '#tensors td.key');
    const rows = await view.locator('#tensors tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    const q = rows.find((row) => row[0] === 'layers.0.self_attn.q_proj.weight');
    assert.deepEqual(q?.slice(1, 3), ['float32', '8×8']);
    assert.ok(Number.isFinite(Number(q?.[3])), `min ${q?.[3]}`);
    assert.match(await view.locator('#roles').innerText(), /W_Q ← layers\.0\.self_attn\.q_proj\.weight \(transposed: nn\.Linear stores Wᵀ\)/);
  });

  it('Show attention with X from the open note opens the panel with PyTorch weights', async () => {
    const view = await webviewFrame(page, '#tensors td.key');
    const option = view.locator('#input option', { hasText: /^X \(5×8\) — tensors\/notes\.md/ });
    await option.waitFor({ state: 'attached' });
    await view.locator('#input').selectOption(await option.getAttribute('value'));
    await view.locator('#heads').fill('2');
    await view.locator('#show').click();
    await view.locator('#status li', { hasText: 'transposed' }).first().waitFor();
    const panel = await webviewFrame(page, 'section.card.heatmap[data-key="weights"]');
    // The Steps view shows head 1; 4 printed decimals, half a unit in the last place.
    const shown = await tableValues(weightsCard(panel, 0));
    assert.equal(shown.flat().length, 25);
    shown.flat().forEach((value, i) => assert.ok(Math.abs(value - expected.weights[0].flat()[i]) <= 5.01e-5, `head 1 weight ${i}: ${value}`));
    // The conventions applied are stated in the panel, with the run's warnings.
    await panel.locator('text=nn.Linear stores W transposed').first().waitFor();
    assert.deepEqual(workbench.pageErrors, []);
  });
});
