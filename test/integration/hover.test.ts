// Hovers read through VS Code's hover provider command: the matrix name, a number, and after a run
// the weights of a query — compared with the numpy fixture of the same example.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { activateApi, closeAllEditors, engineFixture, hoverText, lineStartingWith, openExample } from './support';

describe('hover', () => {
  before(activateApi);
  afterEach(closeAllEditors);

  it('on a matrix name: role, shape, min/max/mean and how it enters', async () => {
    const { document } = await openExample('02-causal-mask.md');
    const line = lineStartingWith(document, 'W_Q =');
    assert.equal(
      await hoverText(document.uri, new vscode.Position(line, 1)),
      '**W\\_Q · 4×2** — query projection\n\nmin 0 · max 1 · mean 0.5\n\n`Q = X · W_Q`',
    );
  });

  it('on a number: its row and column with the token label', async () => {
    const { document } = await openExample('02-causal-mask.md');
    const line = lineStartingWith(document, '[0.0, 2.0');
    const character = document.lineAt(line).text.indexOf('2.0') + 1;
    // (After a run of this file the hover goes on with query 2's weights: see below.)
    const [first] = (await hoverText(document.uri, new vscode.Position(line, character))).split('\n\n');
    assert.equal(first, '**X** row 2 (“cat”), column 2: `2`');
  });

  it('on a key-padding entry: the key token it blocks, as a boolean', async () => {
    const { document } = await openExample('03-padding-mask.md');
    const line = lineStartingWith(document, 'padding =');
    const character = document.lineAt(line).text.indexOf('true') + 1;
    assert.equal(await hoverText(document.uri, new vscode.Position(line, character)), '**padding** row 1, column 3 (“\\<pad\\>”): `true`');
  });

  it('after a multi-head run, on a row of X: the weights of that query in every head, as computed', async () => {
    const api = await activateApi();
    const { document } = await openExample('04-multi-head.md');
    await vscode.commands.executeCommand('attentionLens.runFile', document.uri);
    const result = api.results.get(document.uri.toString())?.runs[0]?.result;
    assert.ok(result);
    const line = lineStartingWith(document, 'X =');
    const hover = await hoverText(document.uri, new vscode.Position(line, document.lineAt(line).text.search(/\d/)));
    for (const [h, head] of result.heads.entries()) {
      assert.ok(hover.includes(`**Head ${h + 1}: query 1** attends most to`), hover);
      const cells = Array.from(head.weights.data.subarray(0, head.weights.cols), (w) => ` ${Number(w.toFixed(4))} `);
      for (const cell of cells) assert.ok(hover.includes(cell), `${cell} missing in ${hover}`);
    }
  });

  it('outside any matrix: nothing', async () => {
    const { document } = await openExample('02-causal-mask.md');
    assert.equal(await hoverText(document.uri, new vscode.Position(0, 2)), '');
  });

  it("after a run, on X's row i: query i's weights as numpy computes them, and its top-3 keys", async () => {
    const { document } = await openExample('01-worked-example.md');
    await vscode.commands.executeCommand('attentionLens.runFile', document.uri);
    const weights = engineFixture('worked-example').expected.heads[0].weights;
    const tokens = ['I', 'love', 'cats'];
    const firstRow = lineStartingWith(document, 'X =');
    for (let row = 0; row < 3; row++) {
      const text = document.lineAt(firstRow + row).text;
      const position = new vscode.Position(firstRow + row, text.search(/\d/));
      const expectedRow = weights[row];
      const order = [0, 1, 2].sort((a, b) => expectedRow[b] - expectedRow[a]);
      const top = order.map((key) => `“${tokens[key]}” ${(expectedRow[key] * 100).toFixed(0)}%`).join(', ');
      const table = expectedRow.map((weight, key) => {
        const filled = Math.round(weight * 10);
        return `| ${tokens[key]} | ${Number(weight.toFixed(4))} | ${'█'.repeat(filled)}${'░'.repeat(10 - filled)} |`;
      });
      const hover = await hoverText(document.uri, position);
      assert.ok(hover.startsWith(`**X** row ${row + 1} (“${tokens[row]}”), column 1: `), hover);
      assert.ok(
        hover.endsWith([`**Query ${row + 1}** attends most to ${top}`, '', '| key | weight | |', '|---|---:|---|', ...table].join('\n')),
        hover,
      );
    }
  });
});
