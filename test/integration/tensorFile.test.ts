// Tensor files in the editor: .safetensors/.pt/.npy open in the read-only tensor view (the custom
// editor, priority default), and "Show attention" runs a layer of the file on X — a tensor of the
// same file or a matrix of an open text — in the worker, with PyTorch's numbers, in the panel.
import * as assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { RunOutcome } from '../../src/features/runner';
import type { TensorAttentionOutcome } from '../../src/features/tensorFile';
import type { AttentionWorker } from '../../src/worker/client';
import { activateApi, closeAllEditors, eventually, hoverText, openUntitled, repoUri } from './support';

interface Expected {
  files: Record<string, Record<string, { shape: number[]; values: number[] }>>;
  attention: Record<string, { weights: number[][][]; heads: number }>;
}

const fixture = (...segments: string[]) => repoUri('test', 'fixtures', 'tensors', ...segments);
const expected = (): Expected => JSON.parse(readFileSync(fixture('expected.json').fsPath, 'utf8')) as Expected;

function activeCustomEditor(): vscode.TabInputCustom | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  return input instanceof vscode.TabInputCustom ? input : undefined;
}

function panelOpen(): boolean {
  return vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .some((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.includes('attentionLens.panel'));
}

describe('tensor files', () => {
  before(activateApi);
  afterEach(closeAllEditors);

  for (const name of ['model.safetensors', 'pt/llama.pt', 'npz/compressed.npz', 'acts.npy']) {
    it(`${name} opens in the tensor view by default`, async () => {
      await vscode.commands.executeCommand('vscode.open', fixture(...name.split('/')));
      const editor = await eventually(activeCustomEditor, 'a custom editor tab');
      assert.equal(editor.viewType, 'attentionLens.tensorFile');
      assert.equal(editor.uri.toString(), fixture(...name.split('/')).toString());
    });
  }

  it('Show attention on a layer with X from the same file: PyTorch weights, in the panel', async () => {
    const api = await activateApi();
    const uri = fixture('model.safetensors');
    await vscode.commands.executeCommand('vscode.open', uri);
    await eventually(activeCustomEditor, 'the tensor view');
    const want = expected().attention['safetensors-layer1'];
    const outcome = await vscode.commands.executeCommand<TensorAttentionOutcome>('attentionLens.showTensorAttention', uri, { layer: 1, input: 'tensor:hidden_states', heads: 3 });
    assert.equal(outcome?.error, undefined);
    assert.ok(outcome?.notes.some((note) => /nn\.Linear stores W transposed/.test(note)), outcome?.notes.join(' | '));
    const result = api.results.get(uri.toString())?.runs[0]?.result;
    assert.ok(result, 'a result stored for the tensor file');
    result.heads.forEach((head, h) => want.weights[h].flat().forEach((value, i) => assert.ok(Math.abs(head.weights.data[i] - value) < 1e-9, `head ${h + 1} weight ${i}`)));
    await eventually(() => (panelOpen() ? true : undefined), 'the attention panel');
  });

  it('X may be a matrix of an open text file', async () => {
    const api = await activateApi();
    const hidden = expected().files['model.safetensors'].hidden_states;
    const rows = Array.from({ length: hidden.shape[0] }, (_, i) => `[${hidden.values.slice(i * hidden.shape[1], (i + 1) * hidden.shape[1]).join(', ')}]`);
    const { document } = await openUntitled('markdown', `X = [${rows.join(',\n     ')}]\n`);
    const uri = fixture('model.safetensors');
    // The previous test stored the same weights under the same key: only this run may answer.
    api.results.delete(uri.toString());
    const outcome = await vscode.commands.executeCommand<TensorAttentionOutcome>('attentionLens.showTensorAttention', uri, { layer: 1, input: `text:${document.uri.toString()}#0#0`, heads: 3 });
    assert.equal(outcome?.error, undefined);
    const want = expected().attention['safetensors-layer1'];
    const stored = api.results.get(uri.toString());
    assert.ok(stored, 'a result stored for the tensor file by this run');
    // X is the text's matrix, by its name there, with the file's hidden states as its numbers (and
    // the column of ones its projections' biases add: [X 1]·[W; b]).
    const x = stored.parse.problems[0].matrices.find((def) => def.role === 'X');
    assert.ok(x, 'an X in the stored problem');
    assert.equal(x.name, 'X');
    const [tokens, width] = hidden.shape;
    assert.deepEqual([x.value.rows, x.value.cols], [tokens, width + 1]);
    const written = Array.from({ length: tokens }, (_, r) => Array.from(x.value.data.subarray(r * (width + 1), (r + 1) * (width + 1)), Number));
    assert.deepEqual(written.map((row) => row.slice(0, width)).flat(), hidden.values);
    assert.deepEqual(written.map((row) => row[width]), Array(tokens).fill(1));
    const result = stored.runs[0]?.result;
    assert.ok(result, stored.runs[0]?.error ?? 'no result');
    assert.equal(result.heads.length, want.heads);
    result.heads.forEach((head, h) => want.weights[h].flat().forEach((value, i) => assert.ok(Math.abs(head.weights.data[i] - value) < 1e-9, `head ${h + 1} weight ${i}`)));
  });

  it('a note that loads tensors (np.load, load_file) runs on them, read in the worker', async () => {
    const document = await vscode.workspace.openTextDocument(repoUri('examples', 'tensors', 'notes.md'));
    await vscode.window.showTextDocument(document);
    // Run at once: the run waits for the worker to read the tensors the note loads.
    const outcome = await vscode.commands.executeCommand<RunOutcome>('attentionLens.runFile', document.uri);
    assert.deepEqual(outcome?.failures, []);
    const want = expected().attention.example;
    const result = outcome?.run?.runs[0]?.result;
    assert.equal(result?.heads.length, 2);
    result?.heads.forEach((head, h) => want.weights[h].flat().forEach((value, i) => assert.ok(Math.abs(head.weights.data[i] - value) < 1e-9, `head ${h + 1} weight ${i}`)));
    // The name of a loaded matrix hovers with its statistics, as a written one does.
    const line = document.getText().split('\n').findIndex((text) => text.startsWith('X = np.load'));
    const xValues = Array.from(result!.input?.data ?? [], Number);
    const hover = await hoverText(document.uri, new vscode.Position(line, 0));
    assert.ok(hover.includes(`min ${Number(Math.min(...xValues).toFixed(4))}`), hover);
  });

  it('the tensors a note loads are read inside the worker\'s read: the host never asks the worker for a tensor file', async () => {
    const api = await activateApi();
    // A fresh copy: no cache of an earlier read holds these files.
    const dir = mkdtempSync(join(tmpdir(), 'attention-lens-refs-'));
    // The API's worker is the extension's own: its readTensorFile is the one way tensor bytes reach the host.
    const worker = api.worker as AttentionWorker;
    const asked: string[] = [];
    const readTensorFile = worker.readTensorFile;
    worker.readTensorFile = (path, maxElements) => {
      asked.push(path);
      return readTensorFile.call(worker, path, maxElements);
    };
    try {
      for (const name of ['notes.md', 'acts.npy', 'attention.safetensors']) copyFileSync(repoUri('examples', 'tensors', name).fsPath, join(dir, name));
      const document = await vscode.workspace.openTextDocument(join(dir, 'notes.md'));
      const outcome = await vscode.commands.executeCommand<RunOutcome>('attentionLens.runFile', document.uri);
      assert.deepEqual(outcome?.failures, []);
      const want = expected().attention.example;
      outcome?.run?.runs[0]?.result?.heads.forEach((head, h) => want.weights[h].flat().forEach((value, i) => assert.ok(Math.abs(head.weights.data[i] - value) < 1e-9, `head ${h + 1} weight ${i}`)));
      assert.deepEqual(asked, [], 'the host asked for tensor files itself');
      // The loaded matrices reach the host on shared memory, as a text's large ones do: none is copied.
      const x = outcome?.run?.parse.problems[0].matrices.find((def) => def.name === 'X');
      assert.equal(x?.source?.kind, 'tensor');
    } finally {
      worker.readTensorFile = readTensorFile;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a note that loads a .npy is read again when the file changes on disk', async () => {
    const api = await activateApi();
    const dir = mkdtempSync(join(tmpdir(), 'attention-lens-watch-'));
    try {
      copyFileSync(fixture('npy', 'float64.npy').fsPath, join(dir, 'x.npy'));
      writeFileSync(join(dir, 'notes.py'), 'X = np.load("x.npy")\nW_Q = [[1, 0], [0, 1], [1, 1]]\nW_K = [[1, 0], [0, 1], [1, 1]]\nW_V = [[1, 0], [0, 1], [1, 1]]\n');
      const document = await vscode.workspace.openTextDocument(join(dir, 'notes.py'));
      const firstOfX = () => api.results.get(document.uri.toString())?.parse.problems[0]?.matrices.find((def) => def.name === 'X')?.value.data[0];
      const files = expected().files;
      await eventually(() => (firstOfX() === files['npy/float64.npy'].array.values[0] ? true : undefined), 'X read from x.npy');
      copyFileSync(fixture('npy', 'float32.npy').fsPath, join(dir, 'x.npy'));
      await eventually(() => (firstOfX() === files['npy/float32.npy'].array.values[0] ? true : undefined), 'X read again from the changed x.npy');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a tensor reference that cannot be read is an error diagnostic on its line', async () => {
    const { document } = await openUntitled('python', 'X = np.load("/nonexistent/acts.npy")\nW_Q = [[1, 0], [0, 1]]\n');
    const diagnostics = await eventually(() => {
      const found = vscode.languages.getDiagnostics(document.uri).filter((d) => d.code === 'tensor-reference');
      return found.length > 0 ? found : undefined;
    }, 'a tensor-reference diagnostic');
    assert.equal(diagnostics[0].range.start.line, 0);
    assert.equal(diagnostics[0].severity, vscode.DiagnosticSeverity.Error);
    assert.match(diagnostics[0].message, /X: cannot read \/nonexistent\/acts\.npy/);
  });

  it('runs in the dtype asked, and refuses a run above attentionLens.maxMatrixElements', async () => {
    const api = await activateApi();
    const uri = fixture('model.safetensors');
    const choice = { layer: 0, input: 'tensor:hidden_states', heads: 3 };
    // An open view keeps the file as read (under the default limit); the run's own bound is tested.
    await vscode.commands.executeCommand('vscode.open', uri);
    await eventually(activeCustomEditor, 'the tensor view');
    await vscode.commands.executeCommand('attentionLens.showTensorAttention', uri, { ...choice, dtype: 'float32' });
    assert.equal(api.results.get(uri.toString())?.runs[0]?.result?.dtype, 'float32');
    const config = vscode.workspace.getConfiguration('attentionLens');
    await config.update('maxMatrixElements', 100, vscode.ConfigurationTarget.Global);
    try {
      const outcome = await vscode.commands.executeCommand<TensorAttentionOutcome>('attentionLens.showTensorAttention', uri, choice);
      assert.match(outcome?.error ?? '', /was not run: it would keep \d[\d,]* numbers .*more than attentionLens\.maxMatrixElements = 100/);
    } finally {
      await config.update('maxMatrixElements', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('an open view reads its file again once it changed on disk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attention-lens-view-'));
    try {
      const uri = vscode.Uri.file(join(dir, 'ckpt.pt'));
      copyFileSync(fixture('pt', 'mha.pt').fsPath, uri.fsPath);
      await vscode.commands.executeCommand('vscode.open', uri);
      await eventually(activeCustomEditor, 'the tensor view');
      const choice = { layer: 1, input: 'tensor:hidden_states', heads: 3 };
      const before = await vscode.commands.executeCommand<TensorAttentionOutcome>('attentionLens.showTensorAttention', uri, choice);
      assert.match(before?.error ?? '', /No layer 1/);
      copyFileSync(fixture('pt', 'llama.pt').fsPath, uri.fsPath);
      const after = await vscode.commands.executeCommand<TensorAttentionOutcome>('attentionLens.showTensorAttention', uri, choice);
      assert.equal(after?.error, undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a hostile checkpoint is refused by name, and nothing runs', async () => {
    const uri = fixture('pt', 'hostile-os-system.pt');
    const outcome = await vscode.commands.executeCommand<TensorAttentionOutcome>('attentionLens.showTensorAttention', uri, { layer: 0, input: 'tensor:w', heads: 1 });
    assert.match(outcome?.error ?? '', /asks for `posix\.system`/);
  });
});
