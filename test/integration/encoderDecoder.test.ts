// Saved attentions of an encoder–decoder model inside a real VS Code (issue 43): Show Heads on the
// outputs dict a PyTorch user saves (encoder_attentions, decoder_attentions, cross_attentions with
// input_ids and decoder_input_ids) is read in the worker and its page opens, titled by the file
// once read; a file whose cross-attention has another source length than its encoder gives one
// message naming both tensors, and no page stays open. The page's views themselves are tested in
// Chromium (test/browser/headsEncoderDecoder.test.ts).
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { activateApi, closeAllEditors, eventually, repoUri } from './support';

const fixture = (...parts: string[]) => repoUri('test', 'fixtures', 'heads', 'encoder-decoder', ...parts);
const headsTabs = () =>
  vscode.window.tabGroups.all.flatMap((group) => group.tabs).filter((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.includes('attentionLens.heads'));

describe('saved encoder–decoder attentions', function () {
  this.timeout(60_000);
  afterEach(closeAllEditors);

  for (const file of [['ids', 'outputs.pt'], ['npz', 'stacked.npz'], ['safetensors', 'layers.safetensors']]) {
    it(`Show Heads reads ${file.join('/')} and opens its page`, async () => {
      const api = await activateApi();
      const before = api.commandErrors.length;
      await vscode.commands.executeCommand('attentionLens.showHeads', fixture(...file));
      await eventually(() => headsTabs().find((tab) => tab.label === `Heads: ${file[1]}`), 'the page titled by the file once read');
      assert.deepEqual(api.commandErrors.slice(before), []);
    });
  }

  it('says in one message why a cross-attention that does not fit its encoder cannot be shown', async () => {
    const api = await activateApi();
    const before = api.commandErrors.length;
    await vscode.commands.executeCommand('attentionLens.showHeads', fixture('bad', 'source-mismatch.pt'));
    assert.deepEqual(api.commandErrors.slice(before), ['The source lengths disagree: `encoder_attentions.0` (1×4×7×7) has 7 source positions but `cross_attentions.0` (1×2×8×6) has 6.']);
    await eventually(() => (headsTabs().length === 0 ? true : undefined), 'the page closed');
  });
});
