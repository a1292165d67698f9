// End to end: attention from a paused program, through the UI a user sees (code-server in
// Chromium). A Node program (test/fixtures/debug/panel-e2e.js) paused by `debugger;` in the
// built-in js-debug, and a Python program (panel-e2e.py, numpy and torch) paused at a breakpoint
// set with F9 in Debian's debugpy (registered by the test-only adapter extension). "Attention: Show
// Attention from Debug Variables" from the palette and from the Variables view's context menu; the
// numbers read from inside the panel's webview — weights, the program's own weights beside them
// with their largest difference, a tooltip — are compared with the CLI run on the same arrays,
// which each program writes as JSON before it stops. Each new stop refreshes the panel; an array
// of more than 1024×1024 numbers asks first (Cancel reads nothing, Read reads it).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packTestExtension } from '../runner/code-server-host.mjs';
import { paths } from '../runner/paths.mjs';
import { assertClose, assertMatrixClose, editorLog, eventually, goToPosition, openFile, openWorkbench, parsePrinted, recordFailure, runCommand, tableValues, webviewFrame, weightsCard } from './workbench.mjs';

const COMMAND = 'Attention: Show Attention from Debug Variables';
const fixture = (name) => readFileSync(join(paths.repoRoot, 'test', 'fixtures', 'debug', name), 'utf8');

const launch = {
  version: '0.2.0',
  configurations: [
    { type: 'node', request: 'launch', name: 'attention program (node)', program: '${workspaceFolder}/program.js', args: ['${workspaceFolder}/arrays'], console: 'internalConsole' },
    { type: 'debugpy', request: 'launch', name: 'attention model (python)', program: '${workspaceFolder}/model.py', args: ['${workspaceFolder}/model.json'], python: '/usr/bin/python3', console: 'internalConsole', justMyCode: true },
  ],
};

/** max |a − b| over two matrices' entries: the difference the panel must print, found here from the CLI's two tables. */
const maxAbsDifference = (a, b) => Math.max(...a.flatMap((row, i) => row.map((x, j) => Math.abs(x - b[i][j]))));

/** The difference a given-weights card prints (3 significant digits) against the CLI's weights and given weights. */
function assertDifference(reading, head) {
  const printed = /^max \|given − computed\| = (\S+)$/.exec(reading);
  assert.ok(printed, `reading: ${reading}`);
  const shown = parsePrinted(printed[1]);
  const wanted = maxAbsDifference(head.givenWeights, head.weights);
  assert.ok(Math.abs(shown - wanted) <= 5e-3 * wanted, `max |given − computed|: panel shows ${shown}, the CLI's matrices differ by ${wanted}`);
  return shown;
}

/** The panel's table against the CLI's. */
const assertLikeCli = (actual, wanted, what) => assertMatrixClose(actual, wanted, what, 'the CLI');

describe('attention from a paused program, end to end', function () {
  this.timeout(240_000);
  let workbench;
  let page;
  let panel;

  /** The CLI's JSON run of a file the program wrote: its first problem. */
  const cli = (name) => {
    const out = execFileSync(process.execPath, [join(paths.repoRoot, 'dist', 'cli.js'), 'run', join(workbench.folder, name), '--json'], { encoding: 'utf8' });
    return JSON.parse(out).problems[0];
  };

  /** A row of the Variables view, by the variable's name. */
  const variableRow = (name) => page.locator('.monaco-list-row', { hasText: new RegExp(`^\\s*${name}\\W`) }).first();

  /** Waits until the Variables view lists `name` (the program is paused where it is in scope). */
  const pausedWith = (name) => variableRow(name).waitFor({ timeout: 90_000 });

  /**
   * Starts a launch configuration as Quick Open's `debug ` prefix offers it. Right after the
   * workbench opens it offers none until the extension host has registered the debuggers: then
   * it is closed and opened again, as a user would.
   */
  async function startDebugging(name) {
    const row = page.locator('.quick-input-list .monaco-list-row').filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${name.replace(/[()]/g, '\\$&')}$`) }) }).first();
    await eventually(async () => {
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+P');
      await page.locator('.quick-input-widget input.input').filter({ visible: true }).fill(`debug ${name}`);
      await row.waitFor({ timeout: 3000 });
    }, 90_000);
    await row.click();
  }

  /** Accepts the command's variable picker as it opens: the variables whose names give a role are picked. */
  async function acceptPicker(frame) {
    // js-debug names the frame `global.forward`, debugpy `forward`.
    await page.locator('.quick-input-widget .quick-input-title', { hasText: new RegExp(`variables of (\\w+\\.)?${frame} to read`) }).waitFor();
    await page.locator('.quick-input-list .monaco-list-row').first().waitFor();
    await page.keyboard.press('Enter');
  }

  before(async () => {
    workbench = await openWorkbench({
      files: { 'program.js': fixture('panel-e2e.js'), 'model.py': fixture('panel-e2e.py'), '.vscode/launch.json': JSON.stringify(launch, null, 1) },
      vsixFiles: paths.testExtensions.map(packTestExtension),
    });
    page = workbench.page;
  });

  afterEach(async function () {
    await recordFailure(this.currentTest, workbench);
  });

  after(async () => {
    await workbench?.close();
  });

  /** What the Debug Console shows (js-debug writes the program's command line first). */
  const debugConsole = () => page.locator('.repl .monaco-list-rows').first().innerText();

  it('js-debug: the palette command shows the paused frame\'s q, k, v and its own weights as the CLI computes them', async () => {
    await startDebugging('attention program (node)');
    await pausedWith('query');
    await eventually(async () => assert.match(await debugConsole(), /program\.js/));
    const consoleBefore = await debugConsole();
    await runCommand(page, COMMAND);
    // `attn` has a role by its name but holds no array: offered, not picked (else the read would stop at it).
    const attn = page.locator('.quick-input-list .monaco-list-row').filter({ has: page.locator('.label-name', { hasText: /^attn$/ }) });
    await attn.waitFor();
    assert.match(await attn.innerText(), /not picked: attn is an Object, not an array/);
    await acceptPicker('forward');
    panel = await webviewFrame(page, 'section.card.heatmap[data-key="givenWeights"][data-head="0"]', 90_000);
    assert.match(await panel.locator('h2').first().innerText(), /^(global\.)?forward \(program\.js:\d+\)/);
    const expected = cli('arrays-1.json');
    assertLikeCli(await tableValues(weightsCard(panel, 0)), expected.heads[0].weights, 'A (computed)');
    const given = panel.locator('section.card.heatmap[data-key="givenWeights"][data-head="0"]');
    assertLikeCli(await tableValues(given), expected.heads[0].givenWeights, 'A (the program\'s)');
    const shown = assertDifference(await given.locator('p.reading').innerText(), expected.heads[0]);
    assert.ok(shown > 0.01, 'the program\'s weights leave out 1/√d_k: they must differ');
    assert.equal(await debugConsole(), consoleBefore, 'reading printed nothing in the Debug Console');
  });

  it('js-debug: a tooltip in the panel gives the CLI\'s score, scaled score and weight of that cell', async () => {
    const expected = cli('arrays-1.json').heads[0];
    const card = weightsCard(panel, 0);
    await card.locator('.plot .heatmaplayer').first().waitFor();
    await card.locator('.plot').scrollIntoViewIfNeeded();
    const box = await card.locator('.plot .nsewdrag').first().boundingBox();
    const [rows, cols] = [3, 5];
    await page.mouse.move(box.x + ((1 + 0.5) * box.width) / cols, box.y + ((2 + 0.5) * box.height) / rows); // query 3 → key 2
    const tooltip = panel.locator('#tooltip');
    await tooltip.waitFor({ state: 'visible' });
    const text = await tooltip.innerText();
    const match = /^query 3 → key 2: score (\S+), scaled (\S+), mask none, weight (\S+)$/.exec(text);
    assert.ok(match, `tooltip: ${text}`);
    assertClose(parsePrinted(match[1]), expected.scores[2][1], 'score', 'the CLI');
    assertClose(parsePrinted(match[2]), expected.scaled[2][1], 'scaled', 'the CLI');
    assertClose(parsePrinted(match[3]), expected.weights[2][1], 'weight', 'the CLI');
    await page.mouse.move(5, 500);
  });

  it('js-debug: the next stop refreshes the open panel with the new numbers', async () => {
    await runCommand(page, 'Debug: Continue');
    const expected = cli('arrays-2.json');
    await eventually(async () => assertLikeCli(await tableValues(weightsCard(panel, 0)), expected.heads[0].weights, 'A at the second stop'));
    const given = panel.locator('section.card.heatmap[data-key="givenWeights"][data-head="0"]');
    assertLikeCli(await tableValues(given), expected.heads[0].givenWeights, 'the program\'s A at the second stop');
  });

  it('js-debug: the Variables view\'s context menu entry opens the panel', async () => {
    await runCommand(page, 'View: Close All Editors');
    await eventually(async () => assert.equal(await page.locator('iframe.webview').count(), 0, 'the panel is closed'), 30_000);
    // A click that lands while the menu still lays itself out is lost: then the menu is opened again.
    await eventually(async () => {
      await page.keyboard.press('Escape');
      await variableRow('key').click({ button: 'right' });
      const entry = page.locator('.context-view .monaco-menu .action-label', { hasText: 'Show Attention from Debug Variables' });
      await entry.hover();
      await entry.click();
      await page.locator('.quick-input-widget .quick-input-title', { hasText: /variables of/ }).waitFor({ timeout: 5000 });
    });
    await acceptPicker('forward');
    panel = await webviewFrame(page, 'section.card.heatmap[data-key="givenWeights"][data-head="0"]', 90_000);
    assertLikeCli(await tableValues(weightsCard(panel, 0)), cli('arrays-2.json').heads[0].weights, 'A from the context menu');
  });

  it('js-debug: an array of more than 1024×1024 numbers asks first with its size; Cancel reads nothing, Read reads it', async () => {
    await runCommand(page, 'Debug: Continue');
    await pausedWith('x');
    await runCommand(page, COMMAND);
    await acceptPicker('big');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /x \(1025×1024, 4\.00 MiB\) is large/); // rows of Float32Array: 4 bytes a number
    await dialog.locator('.monaco-button', { hasText: /^Cancel$/ }).click();
    await dialog.waitFor({ state: 'hidden' });
    // Nothing read: the command has ended (its log says the read was declined, the last thing it
    // does), and the panel's tab still names forward's stop; a read of x would have retitled it to
    // big's frame (as Read does below).
    await eventually(() => assert.match(editorLog(workbench.logsDir, /Attention Lens\.log$/) ?? '', /not read in (global\.)?big \(program\.js:\d+\): x \(1025×1024, 4\.00 MiB\), declined/));
    assert.equal(await page.locator('.tab', { hasText: /^Attention: (global\.)?forward \(program\.js:\d+\)/ }).count(), 1);
    assert.equal(await page.locator('.tab', { hasText: /big \(/ }).count(), 0);

    await runCommand(page, COMMAND);
    await acceptPicker('big');
    await dialog.waitFor();
    await dialog.locator('.monaco-button', { hasText: /^Read$/ }).click();
    await page.locator('.tab', { hasText: /^Attention: (global\.)?big \(program\.js:\d+\)/ }).waitFor({ timeout: 120_000 });
    panel = await webviewFrame(page, 'section.card.heatmap[data-key="weights"] details.table-view summary', 120_000);
    await eventually(async () => assert.match(await weightsCard(panel, 0).locator('summary').innerText(), /1025×1025/), 60_000);
    await runCommand(page, 'Debug: Stop');
  });

  it('debugpy: numpy X, torch W_Q/W_K/W_V (requires_grad) and torch\'s (1, 2, 4, 4) weights: each head beside the CLI\'s', async () => {
    await openFile(page, 'model.py');
    const line = fixture('panel-e2e.py').split('\n').findIndex((text) => text.includes('# BREAK HERE')) + 1;
    await goToPosition(page, line);
    await page.keyboard.press('F9');
    await startDebugging('attention model (python)');
    await pausedWith('attn_weights');
    await runCommand(page, COMMAND);
    await acceptPicker('forward');
    panel = await webviewFrame(page, 'section.card.heatmap[data-key="givenWeights"][data-head="0"]', 90_000);
    const expected = cli('model.json');
    assert.equal(expected.heads.length, 2);
    for (const head of [0, 1]) {
      if (head === 1) {
        const headControl = panel.locator('vscode-dropdown[data-control="Head"]');
        await headControl.click();
        await headControl.locator('vscode-option', { hasText: 'Head 2' }).click();
      }
      const computed = weightsCard(panel, head);
      await computed.waitFor();
      assertLikeCli(await tableValues(computed), expected.heads[head].weights, `A${head + 1} (computed)`);
      const given = panel.locator(`section.card.heatmap[data-key="givenWeights"][data-head="${head}"]`);
      assertLikeCli(await tableValues(given), expected.heads[head].givenWeights, `A${head + 1} (torch's)`);
      const shown = assertDifference(await given.locator('p.reading').innerText(), expected.heads[head]);
      assert.ok(shown < 1e-6, `torch's float32 weights match the math to float32 precision (${shown})`);
    }
    await runCommand(page, 'Debug: Stop');
    assert.deepEqual(workbench.pageErrors, []);
  });
});
