// Diagnostics in the Problems panel at exact ranges, updated as you type; and with live update,
// the result follows the edit — checked against the numpy fixture of the same numbers.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { RunOutcome } from '../../src/features/runner';
import { activateApi, assertClose, closeAllEditors, codeLenses, engineFixture, eventually, openExample, openUntitled, ourDiagnostics, rowsOf } from './support';

interface WorkedSpec {
  X: number[][];
  WQ: number[][][];
  WK: number[][][];
  WV: number[][][];
}

function workedExampleNote(wv: string): string {
  const { spec } = engineFixture('worked-example') as unknown as { spec: WorkedSpec };
  return [
    '<!-- attention: name="Typing test" -->',
    'tokens = ["I", "love", "cats"]',
    `X = ${JSON.stringify(spec.X)}`,
    `W_Q = ${JSON.stringify(spec.WQ[0])}`,
    `W_K = ${JSON.stringify(spec.WK[0])}`,
    `W_V = ${wv}`,
    '',
  ].join('\n');
}

describe('diagnostics and live update', () => {
  before(activateApi);
  afterEach(closeAllEditors);

  it('the bundled examples read without a single diagnostic', async function () {
    this.timeout(90_000); // seven editors on a busy machine
    for (const name of ['01-worked-example.md', '02-causal-mask.md', '03-padding-mask.md', '04-multi-head.md', '05-cross-attention.py', '06-grouped-query.md', '07-gradients.md']) {
      const { document } = await openExample(name);
      await vscode.commands.executeCommand('vscode.executeCodeLensProvider', document.uri); // reads it now
      assert.deepEqual(ourDiagnostics(document.uri).map((d) => `${d.range.start.line}: ${d.message}`), [], name);
    }
  });

  it('a ragged row is reported at its exact range, and typing the fix clears it and updates the result', async () => {
    const api = await activateApi();
    const { spec } = engineFixture('worked-example') as unknown as { spec: WorkedSpec };
    const good = JSON.stringify(spec.WV[0]);
    // Row 2 of W_V loses its last entry.
    const ragged = good.replace(/\],\[([^\]]*),[^,\]]*\]/, '],[$1]');
    const editor = await openUntitled('markdown', workedExampleNote(ragged));
    const { document } = editor;
    const line = 5;
    const text = document.lineAt(line).text;
    const rowText = ragged.split('],[')[1];

    const [diagnostic] = await eventually(() => {
      const found = ourDiagnostics(document.uri);
      return found.length > 0 ? found : undefined;
    }, 'the ragged-row diagnostic');
    assert.equal(diagnostic.code, 'ragged-row');
    assert.equal(diagnostic.severity, vscode.DiagnosticSeverity.Error);
    assert.equal(diagnostic.message, 'Row 2 of W_V has 1 entry but row 1 has 2: every row needs the same length.');
    const start = text.indexOf('],[') + 3; // row 2's entries
    assert.deepEqual(
      [diagnostic.range.start.line, diagnostic.range.start.character, diagnostic.range.end.line, diagnostic.range.end.character],
      [line, start, line, start + rowText.length],
    );

    const refused = await vscode.commands.executeCommand<RunOutcome>('attentionLens.runFile', document.uri);
    assert.ok(refused);
    assert.match(refused.failures[0].error, /problem 1 \("Typing test"\) cannot run: /);

    await editor.edit((edit) => edit.replace(new vscode.Range(line, 0, line, text.length), `W_V = ${good}`));
    await eventually(() => (ourDiagnostics(document.uri).length === 0 ? true : undefined), 'diagnostics to clear');
    const run = await eventually(() => {
      const current = api.results.get(document.uri.toString());
      const problemRun = current?.runs[0];
      return problemRun?.result && problemRun.version === document.version ? problemRun.result : undefined;
    }, 'live update to run the fixed problem');
    const expected = engineFixture('worked-example').expected;
    assertClose(rowsOf(run.heads[0].weights), expected.heads[0].weights, 1e-12, 'weights');
    assertClose(rowsOf(run.output), expected.output, 1e-12, 'output');
  });

  it('a shape mismatch names both matrices at the name of the one that does not fit, until it is fixed', async () => {
    const api = await activateApi();
    const { spec } = engineFixture('worked-example') as unknown as { spec: WorkedSpec };
    const editor = await openUntitled('markdown', workedExampleNote(JSON.stringify(spec.WV[0])));
    const { document } = editor;
    await vscode.commands.executeCommand('attentionLens.runFile', document.uri);
    const line = 3; // W_Q
    const original = document.lineAt(line).text;
    const fiveRows = `W_Q = ${JSON.stringify([...spec.WQ[0], [1, 1]])}`;

    await editor.edit((edit) => edit.replace(document.lineAt(line).range, fiveRows));
    const [diagnostic] = await eventually(() => {
      const found = ourDiagnostics(document.uri);
      return found.length > 0 ? found : undefined;
    }, 'the shape-mismatch diagnostic');
    assert.equal(diagnostic.code, 'shape-mismatch');
    assert.equal(diagnostic.message, 'X is 3×4 but W_Q has 5 rows: W_Q needs one row per column of X (4).');
    assert.deepEqual([diagnostic.range.start.line, diagnostic.range.start.character, diagnostic.range.end.line, diagnostic.range.end.character], [line, 0, line, 3]);
    // Live update leaves text with errors alone: the last good result stays on screen.
    const kept = api.results.get(document.uri.toString())?.runs[0];
    assert.ok(kept?.result);
    assert.ok(kept.version < document.version);
    const refused = await vscode.commands.executeCommand<RunOutcome>('attentionLens.runFile', document.uri);
    assert.match(refused?.failures[0]?.error ?? '', /cannot run: X is 3×4 but W_Q has 5 rows/);

    const edited = Date.now();
    await editor.edit((edit) => edit.replace(document.lineAt(line).range, original));
    await eventually(() => {
      const problemRun = api.results.get(document.uri.toString())?.runs[0];
      return problemRun?.result && problemRun.version === document.version ? true : undefined;
    }, 'the fixed problem to run again');
    console.log(`      edit → new result in Results: ${Date.now() - edited} ms (polled every 50 ms)`);
    assert.deepEqual(ourDiagnostics(document.uri), []);
  });

  it('with live update off, an edit keeps the last result and its CodeLens says it is outdated until run again', async () => {
    const api = await activateApi();
    const config = vscode.workspace.getConfiguration('attentionLens');
    await config.update('liveUpdate', false, vscode.ConfigurationTarget.Global);
    try {
      const { spec } = engineFixture('worked-example') as unknown as { spec: WorkedSpec };
      const editor = await openUntitled('markdown', workedExampleNote(JSON.stringify(spec.WV[0])));
      const { document } = editor;
      await vscode.commands.executeCommand('attentionLens.runFile', document.uri);
      const ranVersion = api.results.get(document.uri.toString())?.runs[0]?.version;
      assert.equal(ranVersion, document.version);

      const line = 5; // W_V
      await editor.edit((edit) => edit.replace(document.lineAt(line).range, 'W_V = [[2, 0], [0, 1], [1, 1], [0, 2]]'));
      // The lens of the run before the edit shows until the edited text has been read.
      const summary = await eventually(async () => (await codeLenses(document.uri)).find((lens) => lens.line === 0 && lens.title.includes('rows sum') && lens.title.includes('outdated'))?.title, 'the summary lens marked outdated');
      assert.match(summary, / · outdated: run again$/);
      assert.equal(api.results.get(document.uri.toString())?.runs[0]?.version, ranVersion, 'no run without live update');

      await vscode.commands.executeCommand('attentionLens.runFile', document.uri);
      assert.equal(api.results.get(document.uri.toString())?.runs[0]?.version, document.version);
      const fresh = (await codeLenses(document.uri)).find((lens) => lens.line === 0 && lens.title.includes('rows sum'))?.title;
      assert.doesNotMatch(fresh ?? '', /outdated/);
    } finally {
      await config.update('liveUpdate', undefined, vscode.ConfigurationTarget.Global);
    }
  });
});
