// The .vsix as a user gets it: installed with `--install-extension` into a fresh code-server
// (test/package/run.mjs), then used from that editor. Everything here runs against the installed
// folder, never the repository: what it ships, its localised manifest, its CodeLens, a run in its
// worker (and on its WebAssembly fast path) compared with numpy, its panel and its CLI.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import * as vscode from 'vscode';
import type { AttentionLensApi } from '../../src/extension';
import type { RunOutcome } from '../../src/features/runner';
import { assertClose, closeAllEditors, codeLenses, EXTENSION_ID, eventually, rowsOf } from '../integration/support';
import { skipBecause } from '../skip';

/** The workspace is the repository's examples/ (test/runner/paths.mjs). */
const examples = () => vscode.workspace.workspaceFolders![0].uri;
const repoRoot = () => vscode.Uri.joinPath(examples(), '..').fsPath;

function installed(): vscode.Extension<AttentionLensApi> {
  const extension = vscode.extensions.getExtension<AttentionLensApi>(EXTENSION_ID);
  assert.ok(extension, `${EXTENSION_ID} is not installed`);
  return extension;
}

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'));
}

/** numpy's values for examples/01-worked-example.md (scripts/gen_fixtures.py). */
function workedExampleFixture(): { heads: { weights: number[][] }[]; output: number[][] } {
  return JSON.parse(readFileSync(join(repoRoot(), 'test', 'fixtures', 'engine', 'worked-example.json'), 'utf8')).expected;
}

async function runFile(name: string): Promise<RunOutcome> {
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(vscode.Uri.joinPath(examples(), name)));
  const outcome = await vscode.commands.executeCommand<RunOutcome>('attentionLens.runFile');
  assert.ok(outcome, 'attentionLens.runFile returned nothing');
  assert.deepEqual(outcome.failures, []);
  return outcome;
}

describe('the installed .vsix', () => {
  afterEach(closeAllEditors);

  it('is the copy that runs: installed in the extensions folder, at the repository version', () => {
    const extension = installed();
    assert.ok(!extension.extensionPath.startsWith(repoRoot()), `loaded from ${extension.extensionPath}, not from the .vsix`);
    const { version } = JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8'));
    assert.equal(extension.packageJSON.version, version);
  });

  it('ships the bundles, the WebAssembly kernels and the media, and nothing of the sources', () => {
    const files = filesUnder(installed().extensionPath);
    for (const wanted of ['package.json', 'package.nls.json', 'dist/extension.js', 'dist/worker.js', 'dist/webview.js', 'dist/cli.js', 'dist/attention.wasm', 'dist/fast-thread.js', 'media/icon.png', 'media/walkthrough/open.md']) {
      assert.ok(files.includes(wanted), `${wanted} is missing from the package`);
    }
    const stray = files.filter((file) => /\.(map|ts)$/.test(file) || /^(src|webview|test|examples|scripts|node_modules|bench)\//.test(file));
    assert.deepEqual(stray, []);
  });

  it('names every user-facing string of its manifest through package.nls.json', () => {
    const root = installed().extensionPath;
    const manifest = readFileSync(join(root, 'package.json'), 'utf8');
    const messages = JSON.parse(readFileSync(join(root, 'package.nls.json'), 'utf8'));
    const keys = [...manifest.matchAll(/"%([^"%]+)%"/g)].map((match) => match[1]);
    assert.ok(keys.length > 0, 'no %key% in the manifest');
    assert.deepEqual(keys.filter((key) => typeof messages[key] !== 'string'), [], 'keys without a message');
    // What VS Code made of it: the translated manifest has no %key% left.
    const { contributes } = installed().packageJSON;
    const shown = [
      ...contributes.commands.map((command: { title: string }) => command.title),
      ...contributes.walkthroughs.flatMap((walkthrough: { title: string; steps: { title: string }[] }) => [walkthrough.title, ...walkthrough.steps.map((step) => step.title)]),
    ];
    assert.deepEqual(shown.filter((text) => /^%.*%$/.test(text)), []);
  });

  it('shows its CodeLens on an example', async () => {
    await installed().activate();
    const uri = vscode.Uri.joinPath(examples(), '01-worked-example.md');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    const lenses = await eventually(async () => {
      const found = await codeLenses(uri);
      return found.some((lens) => lens.command === 'attentionLens.runProblem') ? found : undefined;
    }, 'a Run attention CodeLens');
    assert.ok(lenses.some((lens) => lens.title.includes('Run attention')));
    assert.ok(lenses.some((lens) => lens.title.startsWith('W_Q · 4×2')), JSON.stringify(lenses.map((lens) => lens.title)));
  });

  it('runs the worked example in its worker thread and computes what numpy computes', async () => {
    const api = await installed().activate();
    const outcome = await runFile('01-worked-example.md');
    const result = outcome.run?.runs[0]?.result;
    assert.ok(result);
    const expected = workedExampleFixture();
    assertClose(rowsOf(result.heads[0].weights), expected.heads[0].weights, 1e-12, 'weights');
    assertClose(rowsOf(result.output), expected.output, 1e-12, 'output');
    assert.ok(api.worker.starts >= 1, 'the run did not go through the worker');
  });

  it('runs the 512-token example on the WebAssembly fast path loaded from its own folder', async () => {
    const outcome = await runFile('large/512-tokens.py');
    const result = outcome.run?.runs[0]?.result;
    assert.ok(result);
    // The WebAssembly kernels computed it: a .wasm that failed to load would leave the run to the
    // reference engine (no backend) or, with a native wish, say why in a fallback.
    assert.deepEqual(result.backend, { name: 'wasm' });
    assert.equal(result.heads[0].weights.rows, 512);
    assert.equal(result.checks.rowsSumToOne, true);
  });

  it('loads its native backend from its own folder where the package carries one', function () {
    // test/package/run.mjs installs this platform's package where there is one, else the universal one.
    const target = process.env.ATTENTION_LENS_PACKAGE_TARGET;
    assert.ok(target, 'ATTENTION_LENS_PACKAGE_TARGET is not set: run this through npm run test:package');
    if (target === 'universal') skipBecause(this, `the universal package (installed on ${process.platform}-${process.arch}, which has no package of its own) carries no native backend`);
    const modules = join(installed().extensionPath, 'dist', 'node_modules');
    assert.ok(readdirSync(join(installed().extensionPath, 'dist')).includes('node_modules'), `the ${target} package carries no dist/node_modules`);
    // The extension host may be Electron: make it behave as plain Node for the child, as the worker's thread does.
    const program = `const ort = require(${JSON.stringify(join(modules, 'onnxruntime-node'))}); console.log(JSON.stringify(ort.listSupportedBackends()))`;
    const child = spawnSync(process.execPath, ['-e', program], { encoding: 'utf8', env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } });
    assert.equal(child.status, 0, child.stderr);
    assert.ok((JSON.parse(child.stdout) as { name: string }[]).some((backend) => backend.name === 'cpu'), child.stdout);
  });

  it('opens its heatmap panel', async () => {
    await runFile('02-causal-mask.md');
    await vscode.commands.executeCommand('attentionLens.showPanel');
    await eventually(() => (vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .some((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.includes('attentionLens')) ? true : undefined), 'the Attention Lens panel');
  });

  it('ships a CLI that runs on its own from the installed folder', () => {
    const cli = join(installed().extensionPath, 'dist', 'cli.js');
    // The extension host may be Electron: make it behave as plain Node for the child.
    const child = spawnSync(process.execPath, [cli, 'run', join(examples().fsPath, '01-worked-example.md'), '--json'], {
      encoding: 'utf8',
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    });
    assert.equal(child.status, 0, child.stderr);
    const report = JSON.parse(child.stdout);
    const expected = workedExampleFixture();
    assertClose(report.problems[0].heads[0].weights, expected.heads[0].weights, 1e-12, 'CLI weights');
    assertClose(report.problems[0].output, expected.output, 1e-12, 'CLI output');
  });
});
