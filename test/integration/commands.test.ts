// Every `Attention: …` command executed in a real VS Code: results compared with numpy fixtures,
// edits checked to the character and undone in one step, exports read back from disk.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { RunOutcome } from '../../src/features/runner';
import { activateApi, assertClose, closeAllEditors, engineFixture, eventually, lineStartingWith, openExample, openUntitled, ourDiagnostics, rowsOf } from './support';

const EXAMPLE_IDS = ['single-head', 'causal', 'multi-head', 'cross-attention', 'grouped-query'];

async function run(command: string, ...args: unknown[]): Promise<RunOutcome> {
  const outcome = await vscode.commands.executeCommand<RunOutcome>(command, ...args);
  assert.ok(outcome, `${command} returned nothing`);
  return outcome;
}

function panelOpen(): boolean {
  return vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .some((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.includes('attentionLens'));
}

describe('commands', () => {
  before(activateApi);
  afterEach(closeAllEditors);

  it('Run on This File computes what numpy computes', async () => {
    const { document } = await openExample('01-worked-example.md');
    const outcome = await run('attentionLens.runFile');
    assert.deepEqual(outcome.failures, []);
    const result = outcome.run?.runs[0]?.result;
    assert.ok(result);
    const expected = engineFixture('worked-example').expected;
    assertClose(rowsOf(result.heads[0].weights), expected.heads[0].weights, 1e-12, 'weights');
    assertClose(rowsOf(result.output), expected.output, 1e-12, 'output');
    assert.equal(outcome.run?.uri, document.uri.toString());
    // Run from a CodeLens or the palette, the result travels to the workbench as JSON: the summary
    // alone (the matrices made it take ~45 s for 2048 tokens).
    assert.equal(JSON.stringify(outcome), '{"failures":[],"cancelled":false}');
  });

  it('Run Problem at Cursor runs only the problem under the cursor', async () => {
    const editor = await openUntitled('markdown', '');
    await vscode.commands.executeCommand('attentionLens.insertExample', 'single-head');
    await vscode.commands.executeCommand('attentionLens.insertExample', 'causal');
    const line = editor.document.lineCount - 2; // inside the causal example's W_V
    editor.selection = new vscode.Selection(line, 2, line, 2);
    const outcome = await run('attentionLens.runProblem');
    assert.equal(outcome.run?.runs.length, 2);
    assert.equal(outcome.run?.runs[0], undefined);
    const weights = outcome.run?.runs[1]?.result?.heads[0].weights;
    assert.ok(weights);
    assert.deepEqual(rowsOf(weights)[0], [1, 0, 0, 0], 'the first query of a causal mask sees only itself');
  });

  it('Show Heatmap Panel opens the panel beside the editor', async () => {
    await openExample('02-causal-mask.md');
    await vscode.commands.executeCommand('attentionLens.showPanel');
    await eventually(() => (panelOpen() ? true : undefined), 'an Attention Lens webview tab');
  });

  it('Insert Example… inserts each worked example at the cursor as one undoable edit, and each runs cleanly', async () => {
    for (const id of EXAMPLE_IDS) {
      const editor = await openUntitled('python', 'import numpy as np\n');
      const { document } = editor;
      editor.selection = new vscode.Selection(1, 0, 1, 0);
      assert.equal(await vscode.commands.executeCommand('attentionLens.insertExample', id), true);
      assert.equal(document.lineAt(1).text.startsWith('# attention: name="'), true, document.lineAt(1).text);
      const outcome = await run('attentionLens.runFile');
      assert.deepEqual(outcome.failures, [], id);
      assert.deepEqual(ourDiagnostics(document.uri), [], id);
      assert.equal(outcome.run?.runs[0]?.result?.checks.rowsSumToOne, true, id);
      // The run opened the panel: undo acts on the focused editor, so the file's editor first.
      await vscode.window.showTextDocument(document);
      await vscode.commands.executeCommand('undo');
      assert.equal(document.getText(), 'import numpy as np\n', `${id}: one undo removes the whole example`);
      await closeAllEditors();
    }
  });

  it('Set Options… edits the directive in place, one undoable edit per change', async () => {
    const editor = await openUntitled('markdown', '');
    await vscode.commands.executeCommand('attentionLens.insertExample', 'multi-head');
    const { document } = editor;
    editor.selection = new vscode.Selection(3, 0, 3, 0);
    const directive = () => document.lineAt(lineStartingWith(document, '<!-- attention:')).text;
    assert.equal(directive(), '<!-- attention: name="Two heads with W_O" heads=2 -->');

    await vscode.commands.executeCommand('attentionLens.setOptions', { option: 'causal', value: 'bottom-right' });
    assert.equal(directive(), '<!-- attention: name="Two heads with W_O" heads=2 causal=bottom-right -->');
    await vscode.commands.executeCommand('attentionLens.setOptions', { option: 'heads', value: '4' });
    assert.equal(directive(), '<!-- attention: name="Two heads with W_O" heads=4 causal=bottom-right -->');
    await vscode.commands.executeCommand('attentionLens.setOptions', { option: 'name', value: '' });
    assert.equal(directive(), '<!-- attention: heads=4 causal=bottom-right -->');
    await vscode.commands.executeCommand('undo');
    assert.equal(directive(), '<!-- attention: name="Two heads with W_O" heads=4 causal=bottom-right -->');

    const outcome = await run('attentionLens.runFile');
    assert.deepEqual(outcome.failures, []);
    assert.equal(outcome.run?.runs[0]?.result?.heads.length, 4);
  });

  it('Set Options… writes the variant options (rope, window, sinks, softcap, alibi), and the run uses them', async () => {
    const editor = await openUntitled('python', '# attention: causal\nX = [[1, 0], [0, 1], [1, 1], [0, 2]]\nW_Q = [[1, 0], [0, 1]]\nW_K = [[1, 0], [0, 1]]\nW_V = [[1, 2], [3, 4]]\n');
    editor.selection = new vscode.Selection(2, 0, 2, 0);
    for (const [option, value] of [['rope', 'on'], ['rope_layout', 'interleaved'], ['window', '2'], ['sinks', '1'], ['softcap', '5'], ['alibi', 'on']]) {
      await vscode.commands.executeCommand('attentionLens.setOptions', { option, value });
    }
    assert.equal(editor.document.lineAt(0).text, '# attention: causal rope rope_layout=interleaved window=2 sinks=1 softcap=5 alibi');
    await vscode.commands.executeCommand('attentionLens.setOptions', { option: 'rope', value: '500000' });
    await vscode.commands.executeCommand('attentionLens.setOptions', { option: 'alibi', value: 'off' });
    assert.equal(editor.document.lineAt(0).text, '# attention: causal rope=500000 rope_layout=interleaved window=2 sinks=1 softcap=5');
    const outcome = await run('attentionLens.runFile');
    assert.deepEqual(outcome.failures, []);
    const weights = outcome.run?.runs[0]?.result?.heads[0].weights;
    assert.ok(weights);
    // Query 4 sees itself, query 3 (the window of 2) and key 1 (the sink), not key 2.
    assert.deepEqual([0, 1, 2, 3].map((j) => weights.data[3 * 4 + j] > 0), [true, false, true, true]);
  });

  it('Set Options… writes a directive above a problem that has none', async () => {
    const editor = await openUntitled('python', 'X = [[1, 0], [0, 1]]\nW_Q = [[1, 0], [0, 1]]\nW_K = [[1, 0], [0, 1]]\nW_V = [[1, 2], [3, 4]]\n');
    editor.selection = new vscode.Selection(2, 0, 2, 0);
    await vscode.commands.executeCommand('attentionLens.setOptions', { option: 'dtype', value: 'float32' });
    assert.equal(editor.document.lineAt(0).text, '# attention: dtype=float32');
    const outcome = await run('attentionLens.runFile');
    assert.equal(outcome.run?.runs[0]?.result?.dtype, 'float32');
  });

  it('Set Options… in JSON writes and edits the "attention" key', async () => {
    const editor = await openUntitled('json', '{"X": [[1, 0], [0, 1], [1, 1]], "W_Q": [[1, 0], [0, 1]], "W_K": [[0, 1], [1, 0]], "W_V": [[1, 2], [3, 4]]}\n');
    await vscode.commands.executeCommand('attentionLens.setOptions', { option: 'heads', value: '2' });
    assert.equal(editor.document.lineAt(0).text.slice(0, 38), '{"attention": "heads=2", "X": [[1, 0],');
    await vscode.commands.executeCommand('attentionLens.setOptions', { option: 'name', value: 'Two "heads"' });
    assert.equal(editor.document.lineAt(0).text.slice(0, 50), `{"attention": "heads=2 name='Two ’heads’'", "X": [`);
    const outcome = await run('attentionLens.runFile');
    assert.deepEqual(outcome.failures, []);
    assert.equal(outcome.run?.runs[0]?.result?.heads.length, 2);
  });

  it('Export Results… writes JSON, one CSV per matrix, and a standalone HTML report', async () => {
    const { document } = await openExample('01-worked-example.md');
    const folder = mkdtempSync(join(tmpdir(), 'attention-lens-export-'));
    const expected = engineFixture('worked-example').expected;

    const json = vscode.Uri.file(join(folder, 'results.json'));
    await vscode.commands.executeCommand('attentionLens.exportResults', { format: 'json', target: json });
    const exported = JSON.parse(readFileSync(json.fsPath, 'utf8'));
    assert.equal(exported.problems.length, 1);
    assertClose(exported.problems[0].heads[0].weights, expected.heads[0].weights, 1e-12, 'JSON weights');
    assertClose(exported.problems[0].output, expected.output, 1e-12, 'JSON output');

    const csvFolder = vscode.Uri.file(join(folder, 'csv'));
    await vscode.commands.executeCommand('attentionLens.exportResults', { format: 'csv', target: csvFolder });
    const files = readdirSync(csvFolder.fsPath).sort();
    assert.ok(files.includes('problem1-head1-weights.csv'), files.join(', '));
    const [header, ...rows] = readFileSync(join(csvFolder.fsPath, 'problem1-head1-weights.csv'), 'utf8').trim().split('\n');
    assert.equal(header, ',I,love,cats', 'a header of key tokens');
    assert.deepEqual(rows.map((row) => row.split(',')[0]), ['I', 'love', 'cats'], 'a first column of query tokens');
    const weights = rows.map((row) => row.split(',').slice(1).map(Number));
    assertClose(weights, expected.heads[0].weights, 1e-12, 'CSV weights');

    const html = vscode.Uri.file(join(folder, 'report.html'));
    await vscode.commands.executeCommand('attentionLens.exportResults', { format: 'html', target: html });
    const page = readFileSync(html.fsPath, 'utf8');
    assert.match(page, /^<!DOCTYPE html>/i);
    assert.match(page, /Content-Security-Policy/);
    assert.equal(document.isDirty, false, 'exporting never touches the source file');
  });

  it('Toggle Live Update flips the setting', async () => {
    const config = () => vscode.workspace.getConfiguration('attentionLens');
    const before = config().get<boolean>('liveUpdate');
    const after = await vscode.commands.executeCommand<boolean>('attentionLens.toggleLiveUpdate');
    assert.equal(after, !before);
    assert.equal(config().get<boolean>('liveUpdate'), !before);
    await vscode.commands.executeCommand('attentionLens.toggleLiveUpdate');
    assert.equal(config().get<boolean>('liveUpdate'), before);
  });
});
