// A vision model on a picture in the editor: the explorer's "Attention: Run Vision Model on
// Image…" (its command with the picture and a folder), "▶ Run on image…" above a vision folder's
// config.json, and the note directive `model="…" image="…"`, each running the ViT classifier
// fixture (scripts/gen_vision_fixtures.py) to a summary whose tokens are its patches.
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ModelRunOutcome } from '../../src/features/models';
import { visionFixture, visionReferences } from '../unit/vision/fixtures';
import { activateApi, closeAllEditors, codeLenses, EXTENSION_ID, eventually } from './support';

/**
 * Runs `start` (a command that shows a quick pick and then runs) and accepts the picker's first
 * item, as Enter does, once it shows: the accept is repeated until the command settles (before
 * the picker shows it does nothing).
 */
async function acceptingFirst<T>(start: () => Thenable<T>): Promise<T> {
  let settled = false;
  const running = Promise.resolve(start()).finally(() => (settled = true));
  for (let waited = 0; !settled && waited < 60_000; waited += 100) {
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return running;
}

/** A scratch folder holding a copy of `picture` and, when given, a copy of a fixture folder beside it. */
function scratchPicture(picture: string, besideFolder?: string): { picture: string; folder?: string } {
  const scratch = mkdtempSync(join(tmpdir(), 'attention-lens-picture-'));
  cpSync(picture, join(scratch, 'photo.png'));
  if (!besideFolder) return { picture: join(scratch, 'photo.png') };
  cpSync(besideFolder, join(scratch, 'my-vit'), { recursive: true });
  return { picture: join(scratch, 'photo.png'), folder: join(scratch, 'my-vit') };
}

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

  it('the explorer command asks for the folder in a quick pick: the vision folders beside the picture first, then the recently run', async () => {
    const recent = visionFixture('deit-teacher');
    const siglip = visionFixture('siglip');
    // The most recently run vision folder is DeiT's.
    await vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runVisionOnImage', vscode.Uri.file(join(siglip, visionReferences('siglip')[0].picture)), recent);
    // A picture with no model beside it: the first choice is the most recent folder.
    const alone = scratchPicture(join(siglip, visionReferences('siglip')[0].picture));
    const first = await acceptingFirst(() => vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runVisionOnImage', vscode.Uri.file(alone.picture)));
    assert.equal(first?.error, undefined);
    assert.equal(first?.summary?.folder, recent);
    assert.equal(first?.summary?.tokens.length, visionReferences('deit-teacher')[0].tokens.length);
    // A picture beside a vision folder: that folder comes first, before the recent ones.
    const beside = scratchPicture(join(siglip, visionReferences('siglip')[0].picture), visionFixture('vit-classifier'));
    const second = await acceptingFirst(() => vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runVisionOnImage', vscode.Uri.file(beside.picture)));
    assert.equal(second?.error, undefined);
    assert.equal(second?.summary?.folder, beside.folder);
    assert.equal(second?.summary?.architecture, 'vit');
  });

  it("a picture open in VS Code's image preview has the command in its title bar, and runs on that picture", async () => {
    const reference = visionReferences('vit-classifier').find((r) => r.picture === 'rgba.png')!;
    const { picture, folder } = scratchPicture(join(visionFixture('vit-classifier'), 'rgba.png'), visionFixture('vit-classifier'));
    await vscode.commands.executeCommand('vscode.openWith', vscode.Uri.file(picture), 'imagePreview.previewEditor');
    const preview = await eventually(() => {
      const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
      return input instanceof vscode.TabInputCustom ? input : undefined;
    }, 'the image preview');
    // The title bar's button shows where this editor is in front: the menu names its real id.
    const menus = (vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { menus: Record<string, { command: string; when: string }[]> } }).contributes.menus;
    const button = menus['editor/title'].find((item) => item.command === 'attentionLens.runVisionOnImage');
    assert.equal(button?.when, `activeCustomEditorId == '${preview.viewType}'`);
    // With nothing given (the palette), the previewed picture is the one run.
    const outcome = await acceptingFirst(() => vscode.commands.executeCommand<ModelRunOutcome>('attentionLens.runVisionOnImage'));
    assert.equal(outcome?.error, undefined);
    assert.equal(outcome?.summary?.folder, folder);
    assert.deepEqual(outcome?.summary?.tokens, reference.tokens);
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
