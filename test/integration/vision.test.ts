// A vision model on a picture in the editor: the explorer's "Attention: Run Vision Model on
// Image…" (its command with the picture and a folder), "▶ Run on image…" above a vision folder's
// config.json, and the note directive `model="…" image="…"`, each running the ViT classifier
// fixture (scripts/gen_vision_fixtures.py) to a summary whose tokens are its patches.
import * as assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ModelRunOutcome } from '../../src/features/models';
import { visionFixture, visionReferences } from '../unit/vision/fixtures';
import { activateApi, closeAllEditors, codeLenses, eventually } from './support';

describe('vision models on a picture', function () {
  this.timeout(120_000);
  before(activateApi);
  afterEach(closeAllEditors);

  it('the explorer command runs a vision folder on the picture: patch tokens, the top 5 labels', async () => {
    const folder = visionFixture('vit-classifier');
    const reference = visionReferences('vit-classifier').find((r) => r.picture === 'rgba.png')!;
    const outcome = await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runVisionOnImage', vscode.Uri.file(join(folder, 'rgba.png')), folder);
    assert.equal(outcome?.error, undefined);
    assert.deepEqual(outcome?.summary?.tokens, reference.tokens);
    assert.equal(outcome?.summary?.predictions[0]?.kind, 'label');
    assert.deepEqual(outcome?.summary?.predictions[0]?.top.map((t) => t.id), reference.top5);
  });

  it('a vision config.json gets "▶ Run on image…", its folder as the argument', async () => {
    const config = vscode.Uri.file(join(visionFixture('siglip'), 'config.json'));
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(config));
    const lenses = await eventually(async () => {
      const found = (await codeLenses(config)).filter((lens) => lens.command === 'attentionLens.runVisionOnImage');
      return found.length > 0 ? found : undefined;
    }, 'the vision config.json CodeLens');
    assert.equal(lenses[0].title, '▶ Run on image…');
    assert.equal(lenses[0].args[0], undefined);
    assert.equal((lenses[0].args[1] as vscode.Uri).fsPath, config.fsPath);
  });

  it('a note\'s directive model="…" image="…" runs the folder on that picture', async () => {
    const folder = visionFixture('deit-teacher');
    const reference = visionReferences('deit-teacher')[0];
    const path = join(mkdtempSync(join(tmpdir(), 'attention-lens-vision-')), 'note.md');
    writeFileSync(path, `# A picture\n<!-- attention: model="${folder}" image="${join(folder, reference.picture)}" -->\n`);
    const { document } = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(vscode.Uri.file(path)));
    await eventually(async () => ((await codeLenses(document.uri)).length > 0 ? true : undefined), 'the directive read');
    const outcome = await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runProblem', document.uri, 0);
    assert.equal(outcome?.error, undefined);
    assert.deepEqual(outcome?.summary?.tokens.slice(0, 3), ['[CLS]', '[DIST]', '(0,0)']);
    assert.equal(outcome?.summary?.tokens.length, reference.tokens.length);
  });
});
