// The Getting Started walkthrough clicked through as a newcomer would, in code-server with the
// installed .vsix (no extension under development): each step's buttons must do what the step
// says — insert the example, run it, open the panel, add the causal mask, split into two heads —
// with no error notification on the way, and every step ticked at the end.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { launchChromium } from '../../scripts/lib/browser.mjs';
import { startCodeServer } from '../../scripts/lib/code-server.mjs';

const screenshots = resolve(dirname(new URL(import.meta.url).pathname), '..', '..', 'test-output', 'screenshots');
const STEPS = ['Open a worked example', 'Run attention', 'Read the heatmap', 'Add a mask', 'Try two heads'];

/**
 * Runs the checks in order (each needs the ones before it) in a code-server with `vsix` installed.
 * Reports each check through `onLine`; resolves to the counts.
 */
export async function checkWalkthrough({ vsix, onLine }) {
  const folder = mkdtempSync(join(tmpdir(), 'attention-lens-walkthrough-'));
  const server = await startCodeServer({ folder, vsixFiles: [vsix] });
  let browser;
  const counts = { passed: 0, failed: 0 };
  try {
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const pageErrors = [];
    page.on('console', (message) => { if (message.type() === 'error') pageErrors.push(`console: ${message.text()}`); });
    page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
    page.on('requestfailed', (request) => pageErrors.push(`requestfailed: ${request.url().slice(0, 160)} ${request.failure()?.errorText}`));
    await page.goto(`${server.origin}/?folder=${encodeURIComponent(folder)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });

    const stepItem = (title) => page.locator('.getting-started-step').filter({ hasText: title }).first();
    const button = (label) => page.locator('.getting-started-step a, .getting-started-step button').filter({ hasText: label }).first();
    const openStep = async (title) => stepItem(title).click();
    const editorText = async () => (await page.locator('.editor-group-container .monaco-editor .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
    // The walkthrough's Markdown is a webview too: find the panel by what only it says.
    const panelShows = async (text) => {
      for (const frame of page.frames()) {
        if (await frame.getByText(text).count().catch(() => 0)) return true;
      }
      return false;
    };
    const errors = page.locator('.notifications-toasts .notification-toast').filter({ has: page.locator('.codicon-error') });
    const waitUntil = async (probe, what, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!(await probe())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await page.waitForTimeout(200);
      }
    };

    const checks = [
      ['is listed under Welcome: Open Walkthrough… and opens', async () => {
        await page.keyboard.press('F1');
        await page.locator('.quick-input-widget input').waitFor();
        await page.keyboard.type('Welcome: Open Walkthrough');
        await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'Open Walkthrough' }).first().waitFor();
        await page.keyboard.press('Enter');
        await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'Get Started with Attention Lens' }).first().click();
        await stepItem(STEPS[0]).waitFor({ timeout: 20_000 });
      }],
      ['New Markdown File opens an editor beside the walkthrough', async () => {
        await button('New Markdown File').click();
        await page.locator('.tab').filter({ hasText: 'Untitled-1' }).waitFor();
      }],
      ['Insert the Worked Example writes it into that editor, and its CodeLens appears', async () => {
        await button('Insert the Worked Example').click();
        await waitUntil(async () => (await editorText()).includes('W_V = [['), 'the example in the editor');
        await page.locator('.codelens-decoration').filter({ hasText: 'Run attention' }).first().waitFor();
      }],
      ['Run on This File runs it (the status bar shows the run time)', async () => {
        await openStep(STEPS[1]);
        await button('Run on This File').click();
        await page.locator('.statusbar-item').filter({ hasText: /attention problem · / }).first().waitFor();
      }],
      ['Show Heatmap Panel shows the heatmaps of the example', async () => {
        await openStep(STEPS[2]);
        await button('Show Heatmap Panel').click();
        await waitUntil(() => panelShows(/Untitled-1 · float64, 1 head/), 'the panel of Untitled-1', 60_000);
      }],
      ['Make It Causal adds causal to the directive', async () => {
        await openStep(STEPS[3]);
        await button('Make It Causal').click();
        await waitUntil(async () => /attention:.*causal/s.test(await editorText()), 'causal in the directive');
      }],
      ['Set heads=2 and Run Problem at Cursor show two heads in the panel', async () => {
        await openStep(STEPS[4]);
        await button('Set heads=2').click();
        await waitUntil(async () => /heads=2/.test(await editorText()), 'heads=2 in the directive');
        await button('Run Problem at Cursor').click();
        await waitUntil(() => panelShows(/Untitled-1 · float64, 2 heads/), 'the panel with two heads', 60_000);
      }],
      ['no error on the way, and every step is ticked', async () => {
        const shown = await errors.allInnerTexts();
        if (shown.length > 0) throw new Error(`error notifications: ${shown.join(' | ')}`);
        for (const title of STEPS) {
          if ((await stepItem(title).getAttribute('aria-checked')) !== 'true') throw new Error(`step "${title}" is not ticked`);
        }
      }],
    ];

    let blocked;
    for (const [name, check] of checks) {
      if (blocked) {
        counts.failed += 1;
        onLine(`    ✖ walkthrough: ${name} (not reached: "${blocked}" failed)`);
        continue;
      }
      try {
        await check();
        counts.passed += 1;
        onLine(`    ✔ walkthrough: ${name}`);
      } catch (error) {
        counts.failed += 1;
        blocked = name;
        onLine(`    ✖ walkthrough: ${name}: ${error instanceof Error ? error.message.split('\n')[0] : error}`);
        for (const line of pageErrors.slice(-15)) onLine(`      ${line}`);
        mkdirSync(screenshots, { recursive: true });
        await page.screenshot({ path: join(screenshots, 'walkthrough-failure.png') });
      }
    }
  } finally {
    await browser?.close();
    await server.stop();
    rmSync(folder, { recursive: true, force: true });
  }
  return counts;
}
