// Drives the real VS Code UI for the end-to-end tests: code-server with the extension under
// development, its workbench in Chromium, and the few gestures the tests need (quick open,
// CodeLens clicks, the webview's nested frames, the Problems panel, the colour theme).
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { launchChromium } from '../../scripts/lib/browser.mjs';
import { startCodeServer, workbenchUrl } from '../../scripts/lib/code-server.mjs';
import { paths } from '../runner/paths.mjs';

/** The text box of the open quick input (Quick Open, the palette, Go to Line). */
const quickInput = (page) => page.locator('.quick-input-widget input.input').filter({ visible: true });

/** The colour themes the screenshots use, by their names in the theme picker. */
const THEMES = { light: 'Light Modern', dark: 'Dark Modern' };

/**
 * Starts code-server on a scratch copy of examples/ (the tests edit files; the repository's
 * examples stay untouched) plus `files` (path in the folder → text), with the extensions of
 * `vsixFiles` installed, and opens its workbench (its page given `loadTimeoutMs` to load).
 * `close()` stops everything.
 */
export async function openWorkbench({ files = {}, vsixFiles = [], loadTimeoutMs = 30_000 } = {}) {
  const folder = mkdtempSync(join(tmpdir(), 'attention-lens-e2e-'));
  cpSync(paths.examples, folder, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(folder, name)), { recursive: true });
    writeFileSync(join(folder, name), text);
  }
  const settings = { 'workbench.colorTheme': 'Default Dark Modern', 'files.autoSave': 'off', 'editor.minimap.enabled': false };
  const serverLog = [];
    const server = await startCodeServer({ folder, settings, vsixFiles, log: (line) => serverLog.push(line) });
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  const pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  try {
    await page.goto(workbenchUrl({ ...server, folder, extensionPath: paths.repoRoot }), { timeout: loadTimeoutMs });
    await page.locator('.monaco-workbench').waitFor();
    await page.locator('.explorer-folders-view, .explorer-viewlet').first().waitFor();
  } catch (error) {
    // A workbench that never loaded leaves no browser or server behind.
    await browser.close();
    await server.stop();
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  return {
    page,
    folder,
    serverLog,
    pageErrors,
    logsDir: server.logsDir,
    /** Applies a colour theme the way a user does: Preferences: Color Theme in the palette. */
    async setTheme(theme) {
      await runCommand(page, 'Preferences: Color Theme');
      await page.locator('.quick-input-widget input.input[placeholder*="Color Theme"]').waitFor();
      await pickQuickItem(page, THEMES[theme]);
      await page.locator(`.monaco-workbench.${theme === 'dark' ? 'vs-dark' : 'vs'}`).waitFor();
    },
    async close() {
      await browser.close();
      await server.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until the focus the workbench just moved has arrived. A webview (an editor group's active
 * panel, say) takes it in two steps: the workbench focuses its iframe at once, and VS Code's page
 * inside focuses the extension's page when it has handled the workbench's message, which a busy
 * page handles late. A key pressed in between is lost, and a quick input opened in between closes
 * when the page takes the focus from it.
 */
export async function focusSettled(page) {
  await eventually(async () => {
    const focused = await page.evaluateHandle(() => globalThis.document.activeElement);
    if (!(await focused.evaluate((element) => element?.matches('iframe.webview') ?? false))) return;
    const guard = await focused.asElement().contentFrame();
    const inner = await (await guard?.$('iframe#active-frame'))?.contentFrame();
    assert.ok(inner && (await inner.evaluate(() => globalThis.document.hasFocus())), 'the webview has not taken the focus yet');
  });
}

/**
 * Presses `key` (Quick Open, the palette, Go to Line) until the quick input shows: a key pressed
 * as the focus moves can be lost (see focusSettled).
 */
export async function openQuickInput(page, key) {
  const input = quickInput(page);
  for (let attempt = 0; attempt < 5; attempt++) {
    await page.keyboard.press(key);
    if (await input.waitFor({ timeout: 2000 }).then(() => true, () => false)) return;
  }
  await input.waitFor();
}

/** Types `query` into the open quick input and clicks the item labelled exactly `label`. */
export async function pickQuickItem(page, label, query = label) {
  const input = quickInput(page);
  await input.waitFor();
  await input.fill(query);
  const exact = new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ has: page.locator('.label-name', { hasText: exact }) });
  await row.first().click();
}

/** Runs a command by its palette title. */
export async function runCommand(page, title) {
  await openQuickInput(page, 'F1');
  await pickQuickItem(page, title, `>${title}`);
}

/** Opens a file of the workspace in the first editor group through Quick Open. */
async function quickOpen(page, name) {
  // Into the first editor group, whichever part (a webview, say) has the focus now.
  await page.locator('.part.sidebar .composite.title').click();
  await page.keyboard.press('Control+1');
  await focusSettled(page);
  await openQuickInput(page, 'Control+P');
  await pickQuickItem(page, name);
  await page.locator(`.tab.active[aria-label^="${name}"]`).waitFor();
}

/** Opens a text file through Quick Open and focuses its editor. */
export async function openFile(page, name) {
  await quickOpen(page, name);
  // Keys typed next go to the editor once it has the focus back from Quick Open. A debug session
  // that has just ended can take it meanwhile (seen once in CI, the file open and shown but not
  // focused): then it is given back as a user would, with Ctrl+1.
  const focused = page.locator('.editor-instance .monaco-editor.focused');
  if (await focused.waitFor({ timeout: 10_000 }).then(() => true, () => false)) return;
  await page.keyboard.press('Control+1');
  await focused.waitFor();
}

/** Opens a notebook through Quick Open; resolves once the notebook editor shows. */
export async function openNotebook(page, name) {
  await quickOpen(page, name);
  await page.locator('.notebook-editor').filter({ visible: true }).first().waitFor();
}

/** Clicks the first visible CodeLens whose text contains `text`. */
async function clickCodeLens(page, text) {
  const lens = page.locator('.monaco-editor .codelens-decoration a', { hasText: text }).filter({ visible: true }).first();
  await lens.waitFor({ timeout: 30_000 });
  await lens.click();
}

/** Where a CodeLens is, so that a timed click is the mouse press itself. CodeLenses are
 * re-rendered when the extension refreshes them; one caught mid-swap is looked up again. */
export async function codeLensBox(page, text) {
  for (let attempt = 1; ; attempt++) {
    try {
      const lens = page.locator('.monaco-editor .codelens-decoration a', { hasText: text }).filter({ visible: true }).first();
      await lens.waitFor({ timeout: 60_000 });
      await lens.scrollIntoViewIfNeeded({ timeout: 5_000 });
      const box = await lens.boundingBox();
      if (box) return box;
    } catch (error) {
      if (attempt === 5) throw error;
    }
    await page.waitForTimeout(250);
  }
}

/** Presses the CodeLens whose text contains `text` with the mouse, `settleMs` after it first shows
 * (a bench's click on a window still starting up times the start-up); resolves to when it pressed. */
export async function pressCodeLens(page, text, settleMs = 0) {
  await codeLensBox(page, text);
  await page.waitForTimeout(settleMs);
  const box = await codeLensBox(page, text);
  const pressed = Date.now();
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  return pressed;
}

/**
 * Clicks a CodeLens and waits for a webview to show `selector`. CodeLenses are re-rendered when
 * the extension refreshes them, and a click that lands during the swap is lost — as it would be
 * for a user, who clicks again; so do we, once, and say so.
 */
export async function clickCodeLensUntilWebview(page, text, selector) {
  await clickCodeLens(page, text);
  try {
    return await webviewFrame(page, selector, 45_000);
  } catch {
    console.log(`    no webview showed ${selector} after clicking "${text}"; clicking it again`);
    await clickCodeLens(page, text);
    return webviewFrame(page, selector, 60_000);
  }
}

/**
 * The frame of a webview whose document matches `selector`. A webview is two iframes deep: the
 * workbench's `iframe.webview` hosts VS Code's guard page, which loads the extension's HTML into
 * its own `#active-frame`.
 */
export async function webviewFrame(page, selector, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const inner of await webviewFrames(page)) {
      if (await inner.$(selector).catch(() => null)) return inner;
    }
    await page.waitForTimeout(250);
  }
  throw new Error(`no webview shows ${selector} within ${timeoutMs / 1000} s`);
}

/** The extension's page of every webview (the frame inside VS Code's guard frame). */
export async function webviewFrames(page) {
  const frames = [];
  for (const outer of await page.locator('iframe.webview').elementHandles()) {
    // A webview's frames navigate while its page loads (VS Code writes the page into a frame
    // that has just loaded): a query that meets that navigation is asked again next round.
    const guard = await outer.contentFrame().catch(() => null);
    const inner = await (await guard?.$('iframe#active-frame').catch(() => null))?.contentFrame().catch(() => null);
    if (inner) frames.push(inner);
  }
  return frames;
}

/** Moves the cursor to the end of line `lineNumber` (1-based) through Go to Line. */
export async function goToLineEnd(page, lineNumber) {
  await goToPosition(page, lineNumber);
  await page.keyboard.press('End');
}

/** Moves the cursor before column `column` of line `lineNumber` (both 1-based) through Go to Line. */
export async function goToPosition(page, lineNumber, column = 1) {
  await openQuickInput(page, 'Control+G');
  await quickInput(page).fill(`:${lineNumber}:${column}`);
  await page.keyboard.press('Enter');
}

/** Opens the Problems panel and returns the text of its rows once `expected` appears. */
export async function problemsContaining(page, expected) {
  await page.keyboard.press('Control+Shift+M');
  const row = page.locator('.markers-panel .monaco-list-row', { hasText: expected }).first();
  await row.waitFor({ timeout: 30_000 });
  return page.locator('.markers-panel .monaco-list-row').allInnerTexts();
}

/** The panel prints 4 decimals: half a unit in the last place, and float noise. */
export const PRINTED = 5.01e-5;

/** `actual` within PRINTED of `wanted` (`reference` names where `wanted` came from). */
export function assertClose(actual, wanted, what, reference = 'numpy') {
  assert.ok(Math.abs(actual - wanted) <= PRINTED, `${what}: panel shows ${actual}, ${reference} says ${wanted}`);
}

/** Every entry of a table the panel shows within PRINTED of `wanted`'s. */
export function assertMatrixClose(actual, wanted, what, reference = 'numpy') {
  assert.equal(actual.length, wanted.length, `${what}: rows`);
  actual.forEach((row, i) => {
    assert.equal(row.length, wanted[i].length, `${what}: columns of row ${i + 1}`);
    row.forEach((value, j) => assertClose(value, wanted[i][j], `${what}[${i + 1}][${j + 1}]`, reference));
  });
}

/** Retries `check` until it passes (the panel follows a change within moments) or `ms` pass. */
export async function eventually(check, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** A model fixture's folder (test-output/models/NAME), the set generated first when missing or stale (test/unit/model/fixtures.ts). */
export function modelFixture(name) {
  return generatedFixture('model', 'modelFixture', name);
}

/** A vision model fixture's folder (scripts/gen_vision_fixtures.py), generated when missing or stale. */
export function visionFixture(name) {
  return generatedFixture('vision', 'visionFixture', name);
}

function generatedFixture(kind, exported, name) {
  const script = `process.stdout.write(require('./test/unit/${kind}/fixtures').${exported}(${JSON.stringify(name)}))`;
  const out = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: paths.repoRoot, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`the ${kind} fixtures could not be made: ${out.stderr.slice(-2000)}`);
  return out.stdout;
}

/**
 * A workbench whose `model.md` pins the GPT-2 fixture and its reference's token ids in a directive
 * (its "▶ Run model" CodeLens runs them), with the fixture's folder and PyTorch's reference.
 */
export async function openGpt2Note() {
  const folder = modelFixture('gpt2');
  const reference = JSON.parse(readFileSync(join(folder, 'reference.json'), 'utf8'));
  const note = `# GPT-2\n<!-- attention: model="${folder}" ids="${reference.token_ids.join(' ')}" -->\n`;
  return { folder, reference, workbench: await openWorkbench({ files: { 'model.md': note } }) };
}

/** A number as the panel prints it (`0.7679`, `1.234e-4`, `−∞`). */
export function parsePrinted(text) {
  const normalized = text.trim().replace('−', '-').replace('∞', 'Infinity');
  const value = Number(normalized);
  assert.ok(!Number.isNaN(value) || normalized === 'NaN', `not a number: "${text}"`);
  return value;
}

/** The heatmap card of a head's weights (head is 0-based, as in the card's data attributes). */
export function weightsCard(panel, head) {
  return panel.locator(`section.card.heatmap[data-key="weights"][data-head="${head}"]`).first();
}

/** Opens the card's table view and returns its values, row by row. */
export async function tableValues(card) {
  const details = card.locator('details.table-view');
  if (!(await details.evaluate((node) => node.open))) await details.locator('summary').click();
  const rows = details.locator('table tr:has(td)');
  await rows.first().waitFor();
  const texts = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  return texts.map((row) => row.map(parsePrinted));
}

/** After a failed test: a screenshot of the workbench and the page's errors, for the log. */
export async function recordFailure(test, workbench) {
  if (test?.state !== 'failed' || !workbench?.page) return;
  const file = join(paths.repoRoot, 'test-output', 'screenshots', `failed-${test.title.replace(/\W+/g, '-')}.png`);
  await workbench.page.screenshot({ path: file }).catch(() => {});
  console.log(`    screenshot of the failure: ${file}`);
  if (workbench.pageErrors.length) console.log(`    page errors:\n      ${workbench.pageErrors.join('\n      ')}`);
  const log = editorLog(workbench.logsDir, /Attention Lens\.log$/);
  if (log) console.log(`    the extension's log, last lines:\n      ${log.split('\n').slice(-40).join('\n      ')}`);
  // What VS Code itself said of the extension host: a command a click could not find, say.
  const hostErrors = editorLog(workbench.logsDir, /remoteexthost\.log$/)?.split('\n').filter((line) => /\[error\]/.test(line));
  if (hostErrors?.length) console.log(`    the extension host's errors, last lines:\n      ${hostErrors.slice(-10).join('\n      ')}`);
}

/** The text of the first log file in the editor's logs whose path matches `name`, if any. */
export function editorLog(logsDir, name) {
  if (!logsDir || !existsSync(logsDir)) return undefined;
  const file = readdirSync(logsDir, { recursive: true }).find((path) => name.test(String(path)));
  return file && readFileSync(join(logsDir, String(file)), 'utf8').trimEnd();
}
