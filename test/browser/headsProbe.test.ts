// The heads page's "Induction probe" tab (webview/heads/probe.ts) in Chromium: on a model run's
// page, one click asks the host for the probe with the R and seed typed; saved attentions have no
// model to probe, and the tab says so.
import assert from 'node:assert/strict';
import type { AttentionStack, StackSource } from '../../src/core/heads/stack';
import { stackOf } from '../unit/heads/references';
import { openHeads } from './headsPage';

const uniform = [0, 1].map(() => [0, 1].map(() => [0, 1, 2, 3].map(() => [0.25, 0.25, 0.25, 0.25])));
const stackFrom = (source: StackSource): AttentionStack => ({ ...stackOf(uniform, 'float64', [50256, 7, 8, 7]), source });

describe('heads page: induction probe', function () {
  it('on a model run, asks the host for the probe with the R and seed typed', async () => {
    const panel = await openHeads(stackFrom({ kind: 'model', architecture: 'gpt2', folder: '/models/gpt2' }));
    try {
      await panel.page.click('#tab-heads-probe');
      await panel.page.fill('#probe-repeat', '12');
      await panel.page.fill('#probe-seed', '3');
      await panel.page.click('#probe-run');
      assert.deepEqual((await panel.sent()).filter((m) => m.type === 'probe'), [{ type: 'probe', repeat: 12, seed: 3 }]);
    } finally {
      await panel.close();
    }
  });

  it('on saved attentions, says the probe needs a model and offers no button', async () => {
    const panel = await openHeads(stackFrom({ kind: 'saved', file: 'attn.pt' }));
    try {
      await panel.page.click('#tab-heads-probe');
      assert.match((await panel.page.textContent('#probe-unavailable')) ?? '', /runs a model/);
      assert.equal(await panel.page.$('#probe-run'), null);
    } finally {
      await panel.close();
    }
  });
});
