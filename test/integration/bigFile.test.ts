// A large file in the editor (generated here, never committed): it is read in the worker, gets
// CodeLens on what was read and, past attentionLens.maxFileMB, one warning at the cut that names
// the setting; then typing in it reaches the worker as edits and the diagnostics follow.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as vscode from 'vscode';
import { writeNumberFile } from '../../bench/inputs';
import { parseDocument } from '../../src/core/parse';
import { activateApi, closeAllEditors, codeLenses, eventually, ourDiagnostics, rowsOf } from './support';

describe('a large file', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => {
    await activateApi();
    dir = mkdtempSync(join(tmpdir(), 'attention-lens-big-'));
  });
  afterEach(async () => {
    await closeAllEditors();
    await vscode.workspace.getConfiguration('attentionLens').update('maxFileMB', undefined, vscode.ConfigurationTarget.Global);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('past attentionLens.maxFileMB: CodeLens on the part read, one warning at the cut naming the setting', async () => {
    const file = join(dir, 'tokens.py');
    // W_Q, then X: 3000 tokens × 256 (~6.4 MB), which the 5 MB limit cuts.
    const bytes = writeNumberFile(file, 'X', 3000, 256, 1, 'W_Q = [[1, 0], [0, 1]]\n');
    await vscode.workspace.getConfiguration('attentionLens').update('maxFileMB', 5, vscode.ConfigurationTarget.Global);
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    await vscode.window.showTextDocument(document);
    const warning = await eventually(() => ourDiagnostics(document.uri).find((d) => d.code === 'file-too-large'), 'the size warning');
    const cutLine = warning.range.start.line;
    assert.ok(cutLine > 1 && cutLine < 3000, String(cutLine));
    assert.equal(
      warning.message,
      `This file is ${Number((bytes / 2 ** 20).toPrecision(3))} MB, more than attentionLens.maxFileMB = 5 MB: ` +
        `Attention Lens read its first ${cutLine.toLocaleString('en-US')} lines. Raise attentionLens.maxFileMB to read it all.`,
    );
    assert.equal(warning.severity, vscode.DiagnosticSeverity.Warning);
    const titles = (await codeLenses(document.uri)).map((lens) => lens.title);
    assert.ok(titles.includes('W_Q · 2×2'), JSON.stringify(titles));
    assert.ok(!titles.some((title) => title.startsWith('X ·')), 'X was cut, yet it has a CodeLens');
    assert.deepEqual(ourDiagnostics(document.uri).filter((d) => d.severity === vscode.DiagnosticSeverity.Error), [], 'the cut X was called an error');

    // Raising the setting, as the warning says, reads the whole file at once.
    await vscode.workspace.getConfiguration('attentionLens').update('maxFileMB', 50, vscode.ConfigurationTarget.Global);
    await eventually(async () => ((await codeLenses(document.uri)).some((lens) => lens.title === 'X · 3000 tokens × 256') ? true : undefined), 'the CodeLens of X');
    assert.deepEqual(ourDiagnostics(document.uri).filter((d) => d.code === 'file-too-large'), []);
  });

  it("edits reach the worker's copy exactly: several at once, line breaks, CRLF", async () => {
    const file = join(dir, 'crlf.py');
    writeFileSync(file, 'X = [[1, 2, 3],\r\n     [4, 5, 6]]\r\nW_Q = [[1, 0],\r\n       [0, 1],\r\n       [2, 2]]\r\n');
    const api = await activateApi();
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    const editor = await vscode.window.showTextDocument(document);
    assert.equal(document.eol, vscode.EndOfLine.CRLF);
    const readingOf = () => eventually(() => {
      const run = api.results.get(document.uri.toString());
      return run && run.version === document.version ? run.parse : undefined;
    }, 'the reading of the current version');
    await readingOf();
    // One edit of three places (as multi-cursor typing makes), then a line break, then a deletion across lines.
    await editor.edit((edit) => {
      edit.replace(new vscode.Range(0, 9, 0, 10), '20');
      edit.replace(new vscode.Range(1, 9, 1, 10), '50');
      edit.replace(new vscode.Range(4, 11, 4, 12), '7');
    });
    await editor.edit((edit) => edit.insert(new vscode.Position(1, 15), ',\r\n     [7, 8, 9]'));
    await editor.edit((edit) => edit.delete(new vscode.Range(3, 13, 4, 13)));
    const expected = parseDocument(document.getText());
    const read = await readingOf();
    const valuesOf = (parse: typeof expected) => parse.problems.map((problem) => problem.matrices.map((def) => [def.name, rowsOf(def.value)]));
    assert.deepEqual(valuesOf(read), valuesOf(expected));
    assert.deepEqual(valuesOf(read), [[['X', [[1, 20, 3], [4, 50, 6], [7, 8, 9]]], ['W_Q', [[1, 0], [2, 7]]]]]);
  });

  it('typing in it: the edits reach the worker and the diagnostics follow', async () => {
    const file = join(dir, 'typing.py');
    writeNumberFile(file, 'X', 2000, 256);
    // Printed, not asserted (no timing thresholds in tests): this thread is the extension host,
    // so the delay includes VS Code's own work on the 4 MB document as well as the extension's.
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    const editor = await vscode.window.showTextDocument(document);
    await eventually(async () => ((await codeLenses(document.uri)).some((lens) => lens.title === 'X · 2000 tokens × 256') ? true : undefined), 'the first read');
    // Delete the last number of row 1000: that row is now ragged, an error at its exact range.
    const line = document.lineAt(1000);
    const end = line.text.lastIndexOf(']');
    const lastComma = line.text.lastIndexOf(',', end);
    await editor.edit((edit) => edit.delete(new vscode.Range(1000, lastComma, 1000, end)));
    const ragged = await eventually(() => ourDiagnostics(document.uri).find((d) => d.code === 'ragged-row'), 'the ragged-row error');
    assert.equal(ragged.message, 'Row 1000 of X has 255 entries but row 1 has 256: every row needs the same length.');
    assert.equal(ragged.range.start.line, 1000);
    await vscode.commands.executeCommand('undo');
    await eventually(() => (ourDiagnostics(document.uri).some((d) => d.code === 'ragged-row') ? undefined : true), 'the fix to clear it');
    delay.disable();
    console.log(`      extension host event-loop delay, opening and editing a ${(document.getText().length / 2 ** 20).toFixed(1)} MB file: max ${(delay.max / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms (load ${loadavg()[0].toFixed(1)})`);
  });
});
