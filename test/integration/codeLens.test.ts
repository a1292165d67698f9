// CodeLenses read through VS Code's own provider command: exact titles on exact lines, commands
// that run, and the summary that appears after a run.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { activateApi, closeAllEditors, codeLenses, lineStartingWith, openExample } from './support';

describe('CodeLens', () => {
  before(activateApi);
  afterEach(closeAllEditors);

  it('puts Run/Show above the problem and role · shape above every matrix', async () => {
    const { document } = await openExample('02-causal-mask.md');
    const lenses = await codeLenses(document.uri);
    const directive = lineStartingWith(document, '<!-- attention:');
    assert.deepEqual(
      lenses.map(({ line, title }) => ({ line, title })),
      [
        { line: directive, title: '▶ Run attention' },
        { line: directive, title: 'Show heatmap' },
        { line: lineStartingWith(document, 'X ='), title: 'X · 4 tokens × 4' },
        { line: lineStartingWith(document, 'W_Q ='), title: 'W_Q · 4×2' },
        { line: lineStartingWith(document, 'W_K ='), title: 'W_K · 4×2' },
        { line: lineStartingWith(document, 'W_V ='), title: 'W_V · 4×2' },
      ],
    );
    const run = lenses.find((lens) => lens.title === '▶ Run attention')!;
    assert.equal(run.command, 'attentionLens.runProblem');
    assert.equal((run.args[0] as vscode.Uri).toString(), document.uri.toString());
    assert.equal(run.args[1], 0);
  });

  it('names per-head matrices with their head', async () => {
    const { document } = await openExample('06-grouped-query.md');
    const titles = (await codeLenses(document.uri)).map((lens) => lens.title);
    for (const title of ['W_Q1 · 4×2 · head 1', 'W_Q4 · 4×2 · head 4', 'W_K2 · 4×2 · head 2', 'W_V1 · 4×2 · head 1']) {
      assert.ok(titles.includes(title), `missing ${title} in ${JSON.stringify(titles)}`);
    }
  });

  it('runs from the lens and then shows a one-line summary of the run', async () => {
    const { document } = await openExample('02-causal-mask.md');
    const run = (await codeLenses(document.uri)).find((lens) => lens.title === '▶ Run attention')!;
    await vscode.commands.executeCommand(run.command, ...run.args);
    const directive = lineStartingWith(document, '<!-- attention:');
    const summary = (await codeLenses(document.uri)).filter((lens) => lens.line === directive).map((lens) => lens.title)[2];
    assert.match(summary, /^1 head · causal · rows sum to 1 ✓ · \d+(\.\d)? ms$/);
  });

  it('summarises multi-head and grouped-query runs', async () => {
    const { document } = await openExample('06-grouped-query.md');
    await vscode.commands.executeCommand('attentionLens.runFile', document.uri);
    const titles = (await codeLenses(document.uri)).map((lens) => lens.title);
    assert.ok(titles.some((title) => /^4 heads · rows sum to 1 ✓ · \d+(\.\d)? ms$/.test(title)), JSON.stringify(titles));
  });
});
