// A Jupyter notebook in VS Code's own notebook editor (the built-in ipynb support): CodeLens and
// hovers in its cells, diagnostics on the cell at the exact range, a run over matrices from four
// cells (one of them only a printed output) equal to PyTorch's, a cell edit followed live, and a
// newer run from any cell superseding the older.
import * as assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { MatrixDef } from '../../src/core/types';
import { documentHolding } from '../../src/host/notebookCells';
import type { RunOutcome } from '../../src/features/runner';
import { sourceRanges, type SourceRange } from '../../src/panel/reveal';
import { activateApi, assertClose, closeAllEditors, codeLenses, eventually, hoverText, ourDiagnostics, repoUri, rowsOf } from './support';

interface Reference {
  output: number[][];
  edit: { cell: number; source: string; output: number[][] };
}

const reference = (): Reference => JSON.parse(readFileSync(repoUri('test', 'fixtures', 'notebooks', 'example.expected.json').fsPath, 'utf8'));

/** A notebook of the repository (default: the example), copied so that edits never reach its file. */
async function openExampleNotebook(...path: string[]): Promise<vscode.NotebookDocument> {
  const file = join(mkdtempSync(join(tmpdir(), 'attention-lens-notebook-')), 'notes.ipynb');
  copyFileSync(repoUri(...(path.length > 0 ? path : ['examples', '12-notebook.ipynb'])).fsPath, file);
  return showNotebook(file);
}

async function showNotebook(file: string): Promise<vscode.NotebookDocument> {
  const notebook = await vscode.workspace.openNotebookDocument(vscode.Uri.file(file));
  await vscode.window.showNotebookDocument(notebook);
  return notebook;
}

/**
 * The CodeLenses of a cell once the notebook editor has rendered it (the workbench asks the
 * providers only for cells it has a text model of: the cell is revealed first).
 */
async function cellLenses(cell: vscode.NotebookCell): Promise<Awaited<ReturnType<typeof codeLenses>>> {
  vscode.window.activeNotebookEditor?.revealRange(new vscode.NotebookRange(cell.index, cell.index + 1));
  return eventually(() => codeLenses(cell.document.uri).catch(() => undefined), `the CodeLenses of cell ${cell.index + 1}`);
}

/** Replaces a cell's whole text, as typing would (one edit of its document). */
async function replaceCellText(cell: vscode.NotebookCell, text: string): Promise<void> {
  const edit = new vscode.WorkspaceEdit();
  const { document } = cell;
  edit.replace(document.uri, new vscode.Range(0, 0, document.lineCount, 0), text);
  assert.ok(await vscode.workspace.applyEdit(edit));
}

describe('notebooks in the notebook editor', function () {
  // Now and then, after notebooks have been opened and closed, code-server's workbench takes ~30 s
  // to answer the extension host's next command (measured: our command handler starts 31 s after
  // executeCommand, then runs in 6 ms); room for one such stall per test.
  this.timeout(90_000);
  before(activateApi);
  afterEach(closeAllEditors);

  it('CodeLens above the matrices of each cell (the run above X, a printed array above its output), hovers in a cell', async () => {
    const notebook = await openExampleNotebook();
    const xCell = notebook.cellAt(1);
    const lenses = await eventually(async () => {
      const found = await codeLenses(xCell.document.uri);
      return found.some((lens) => lens.title === '▶ Run attention') ? found : undefined;
    }, 'the CodeLenses of the X cell');
    const directive = xCell.document.getText().split('\n').findIndex((line) => line.includes('attention:'));
    assert.deepEqual(
      lenses.map((lens) => [lens.line, lens.title]),
      [[directive, '▶ Run attention'], [directive, 'Show heatmap'], [directive + 1, 'X · 3 tokens × 4']],
    );
    assert.deepEqual(lenses[0].args, [xCell.document.uri, 0]);

    const projections = (await cellLenses(notebook.cellAt(3))).map((lens) => [lens.line, lens.title]);
    assert.deepEqual(projections, [[0, 'W_Q · 4×2'], [1, 'W_K · 4×2']], 'matrix lenses only: the problem starts in another cell');
    const printed = notebook.cellAt(5);
    assert.deepEqual((await cellLenses(printed)).map((lens) => [lens.line, lens.title]), [[printed.document.lineCount - 1, 'W_V · 4×2 · printed output']]);

    const hover = await hoverText(notebook.cellAt(3).document.uri, new vscode.Position(1, 1));
    assert.match(hover, /W\\_K · 4×2/);
    const entry = await hoverText(xCell.document.uri, new vscode.Position(directive + 2, xCell.document.lineAt(directive + 2).text.indexOf('2.0')));
    assert.match(entry, /row 2, column 2: `2`/);
    assert.deepEqual(vscode.languages.getDiagnostics().filter(([uri]) => uri.scheme === 'vscode-notebook-cell').flatMap(([, d]) => d.filter((x) => x.source === 'Attention Lens')), []);
  });

  it('a problem that starts in a Markdown cell: its run lens also above its first matrix in code; a Markdown cell being edited has its own lenses', async () => {
    const notebook = await openExampleNotebook('test', 'fixtures', 'notebooks', 'spanning.ipynb');
    const xCell = notebook.cellAt(1);
    const x = xCell.document.getText().split('\n').findIndex((line) => line.startsWith('X ='));
    assert.deepEqual((await cellLenses(xCell)).map((lens) => [lens.line, lens.title]), [[x, '▶ Run attention'], [x, 'Show heatmap'], [x, 'X · 3 tokens × 4']]);
    // Rendered Markdown shows no CodeLens; in edit mode it does.
    const latex = notebook.cellAt(2);
    const editor = vscode.window.activeNotebookEditor;
    assert.ok(editor);
    editor.selections = [new vscode.NotebookRange(latex.index, latex.index + 1)];
    await vscode.commands.executeCommand('notebook.cell.edit');
    const line = latex.document.getText().split('\n').findIndex((text) => text.includes('W_K'));
    assert.deepEqual((await cellLenses(latex)).map((lens) => [lens.line, lens.title]), [[line, 'W_K · 4×2']]);
  });

  it('runs X, W_Q, W_K from three cells and W_V from a printed output to PyTorch’s numbers; every cell shows the run', async () => {
    const api = await activateApi();
    const notebook = await openExampleNotebook();
    const xCell = notebook.cellAt(1);
    await eventually(async () => ((await codeLenses(xCell.document.uri)).length > 0 ? true : undefined), 'the notebook to be read');
    const outcome = await vscode.commands.executeCommand<RunOutcome>('attentionLens.runProblem', xCell.document.uri, 0);
    assert.deepEqual(outcome?.failures, []);
    const result = outcome?.run?.runs[0]?.result;
    assert.ok(result);
    assertClose(rowsOf(result.output), reference().output, 1e-12, 'output');
    // The cell of W_K (another cell than the one run from) knows the run: its hover and its Results.
    const projections = notebook.cellAt(3).document.uri;
    assert.equal(api.results.get(projections.toString())?.runs[0]?.result, result);
    const summary = await eventually(async () => (await codeLenses(xCell.document.uri)).find((lens) => lens.title.includes('rows sum'))?.title, 'the summary lens');
    assert.match(summary, /rows sum to 1/);
  });

  it('a clicked heatmap cell leads to the entries in the cells that hold them, never into the cell run from', async () => {
    const notebook = await openExampleNotebook();
    const xCell = notebook.cellAt(1);
    await eventually(async () => ((await codeLenses(xCell.document.uri)).length > 0 ? true : undefined), 'the notebook to be read');
    // Run from the cell of W_Q and W_K: the query's row of X is still found in X's own cell.
    const projections = notebook.cellAt(3).document;
    const outcome = await vscode.commands.executeCommand<RunOutcome>('attentionLens.runProblem', projections.uri, 0);
    const problem = outcome?.run?.runs[0]?.problem;
    assert.ok(problem);
    const documentOf = (def: MatrixDef) => documentHolding(projections, def.range);
    const texts = (places: SourceRange[]) => places.map(({ document, range }) => [notebook.getCells().findIndex((cell) => cell.document === document), document.getText(range)]);
    // Q[1][0]: query row 2 of X (cell 1), then column 1 of W_Q (cell 3).
    assert.deepEqual(texts(sourceRanges(documentOf, problem, { key: 'Q', head: 0, row: 1, col: 0 })), [
      [1, '0.0, 2.0, 0.0, 2.0'],
      [3, '1'], [3, '0'], [3, '1'], [3, '0'],
    ]);
    // V[0][1]: row 1 of X; W_V exists only as a printed output, which has no text to select.
    assert.deepEqual(texts(sourceRanges(documentOf, problem, { key: 'V', head: 0, row: 0, col: 1 })), [[1, '1.0, 0.0, 1.0, 0.0']]);
  });

  it('an error in a cell is a diagnostic on that cell at its exact range; fixing it with an edit re-runs live to PyTorch’s numbers', async () => {
    const api = await activateApi();
    const notebook = await openExampleNotebook();
    const xCell = notebook.cellAt(1);
    await eventually(async () => ((await codeLenses(xCell.document.uri)).length > 0 ? true : undefined), 'the notebook to be read');
    await vscode.commands.executeCommand('attentionLens.runProblem', xCell.document.uri, 0);

    const { cell: index, source, output } = reference().edit;
    const cell = notebook.cellAt(index);
    const ragged = source.replace('[0, 1], [0, 1], [1, 0]]', '[0, 1], [0], [1, 0]]');
    assert.notEqual(ragged, source);
    await replaceCellText(cell, ragged);
    const [diagnostic] = await eventually(() => {
      const found = ourDiagnostics(cell.document.uri);
      return found.length > 0 ? found : undefined;
    }, 'the ragged-row diagnostic on the cell');
    assert.equal(diagnostic.code, 'ragged-row');
    const line = cell.document.lineAt(1).text;
    const at = line.indexOf('[0]') + 1;
    assert.deepEqual([diagnostic.range.start.line, diagnostic.range.start.character, diagnostic.range.end.line, diagnostic.range.end.character], [1, at, 1, at + 1]);
    assert.deepEqual(ourDiagnostics(xCell.document.uri), [], 'other cells stay clean');

    await replaceCellText(cell, source);
    await eventually(() => (ourDiagnostics(cell.document.uri).length === 0 ? true : undefined), 'the diagnostic to clear');
    const result = await eventually(() => {
      const current = api.results.get(xCell.document.uri.toString());
      const run = current?.runs[0];
      return run?.result && run.version === current?.version ? run.result : undefined;
    }, 'live update to run the edited notebook');
    assertClose(rowsOf(result.output), output, 1e-12, 'output after the edit');
  });

  it('the run command without arguments runs the problem of the cell the cursor is in', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'attention-lens-notebook-')), 'two.ipynb');
    const code = (source: string) => ({ cell_type: 'code', metadata: {}, outputs: [], execution_count: null, source });
    const problem = (name: string, x: string) => `# attention: name="${name}"\nX = ${x}\nW_Q = [[1, 0], [0, 1]]\nW_K = [[1, 0], [0, 1]]\nW_V = [[1, 0], [0, 1]]`;
    writeFileSync(file, JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [code(problem('first', '[[1, 0], [0, 1]]')), code(problem('second', '[[2, 0], [0, 2]]'))] }));
    const notebook = await showNotebook(file);
    await cellLenses(notebook.cellAt(1));
    // Focus may still move (a panel of an earlier run being revealed): select and edit the cell
    // until its editor is the active one.
    const cellEditor = await eventually(async () => {
      const active = vscode.window.activeTextEditor;
      if (active?.document.uri.toString() === notebook.cellAt(1).document.uri.toString()) return active;
      await vscode.window.showNotebookDocument(notebook, { selections: [new vscode.NotebookRange(1, 2)] });
      await vscode.commands.executeCommand('notebook.cell.edit');
      return undefined;
    }, 'the cell editor');
    cellEditor.selection = new vscode.Selection(1, 2, 1, 2);
    const outcome = await vscode.commands.executeCommand<RunOutcome>('attentionLens.runProblem');
    assert.deepEqual(outcome?.run?.runs.map((run) => run?.problem.name), [undefined, 'second']);
  });

  it('a newer run from another cell of the same notebook cancels the older one, as in one file', async () => {
    // The 512-token example takes long enough that the first run is still going when the second starts.
    const file = join(mkdtempSync(join(tmpdir(), 'attention-lens-notebook-')), 'large.ipynb');
    const code = (source: string) => ({ cell_type: 'code', metadata: {}, outputs: [], execution_count: null, source });
    const large = readFileSync(repoUri('examples', 'large', '512-tokens.py').fsPath, 'utf8');
    writeFileSync(file, JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [code(large), code('print("another cell")')] }));
    const notebook = await showNotebook(file);
    const first = vscode.commands.executeCommand<RunOutcome>('attentionLens.runProblem', notebook.cellAt(0).document.uri, 0);
    const second = vscode.commands.executeCommand<RunOutcome>('attentionLens.runProblem', notebook.cellAt(1).document.uri, 0);
    const [older, newer] = await Promise.all([first, second]);
    assert.equal(older?.cancelled, true);
    assert.equal(newer?.cancelled, false);
    assert.deepEqual(newer?.failures, []);
    assert.equal(newer?.run?.runs[0]?.result?.heads[0].weights.rows, 512);
  });

  it('Open Example Notebook: a copy of the example, outputs included, that reads as the file does', async () => {
    const editor = await vscode.commands.executeCommand<vscode.NotebookEditor>('attentionLens.openExampleNotebook');
    assert.ok(editor);
    const { notebook } = editor;
    assert.notEqual(notebook.uri.fsPath, repoUri('examples', '12-notebook.ipynb').fsPath);
    const file = JSON.parse(readFileSync(repoUri('examples', '12-notebook.ipynb').fsPath, 'utf8')) as { cells: { source: string[] }[] };
    assert.deepEqual(notebook.getCells().map((cell) => cell.document.getText()), file.cells.map((cell) => cell.source.join('')));
    const printed = notebook.cellAt(5);
    assert.deepEqual((await cellLenses(printed)).map((lens) => lens.title), ['W_V · 4×2 · printed output']);
    const outcome = await vscode.commands.executeCommand<RunOutcome>('attentionLens.runProblem', notebook.cellAt(1).document.uri, 0);
    const result = outcome?.run?.runs[0]?.result;
    assert.ok(result);
    assertClose(rowsOf(result.output), reference().output, 1e-12, 'output');
  });
});
