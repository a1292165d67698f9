// The Getting Started walkthrough as a newcomer meets it, in code-server with the installed .vsix
// (no extension under development): it is listed, opens, shows every step with its buttons, and
// each button does its work on the file beside the walkthrough (the commands act on the visible
// editor while the walkthrough has focus), with no error notification on the way.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { launchChromium } from '../../scripts/lib/browser.mjs';
import { startCodeServer } from '../../scripts/lib/code-server.mjs';

const screenshots = resolve(dirname(new URL(import.meta.url).pathname), '..', '..', 'test-output', 'screenshots');
const STEP_BUTTONS = [
  ['Open a worked example', ['New Markdown File', 'Insert the Worked Example']],
  ['Run attention', ['Run on This File']],
  ['Read the heatmap', ['Show Heatmap Panel']],
  ['Add a mask', ['Make It Causal']],
  ['Work in a Jupyter notebook', ['Open the Example Notebook']],
  ['Try two heads', ['Set heads=2', 'Run Problem at Cursor']],
];

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
    const errors = page.locator('.notifications-toasts .notification-toast').filter({ has: page.locator('.codicon-error') });

    const checks = [
      ['is listed under Welcome: Open Walkthrough… and opens', async () => {
        await page.keyboard.press('F1');
        await page.locator('.quick-input-widget input').waitFor();
        await page.keyboard.type('Welcome: Open Walkthrough');
        await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'Open Walkthrough' }).first().waitFor();
        await page.keyboard.press('Enter');
        await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'Get Started with Attention Lens' }).first().click();
        await stepItem(STEP_BUTTONS[0][0]).waitFor({ timeout: 20_000 });
      }],
      ['New Markdown File opens an editor beside the walkthrough', async () => {
        await button('New Markdown File').click();
        await page.locator('.tab').filter({ hasText: 'Untitled-1' }).waitFor();
      }],
      ['every step shows its text and its buttons', async () => {
        for (const [title, labels] of STEP_BUTTONS) {
          await openStep(title);
          for (const label of labels) await button(label).waitFor();
        }
      }],
      ['every button acts on the file beside the walkthrough', async () => {
        const editorShows = (text) => page.locator('.editor-instance .view-lines').filter({ hasText: text }).first().waitFor();
        await openStep('Open a worked example');
        await button('Insert the Worked Example').click();
        await editorShows('W_Q');
        await openStep('Add a mask');
        await button('Make It Causal').click();
        await editorShows('causal');
        await openStep('Try two heads');
        await button('Set heads=2').click();
        await editorShows('heads=2');
        // code-server sometimes stalls for 30–60 s and more (seen in the integration tests around
        // notebooks, and once here in a clean-clone CI run): the waits below allow for it.
        await openStep('Run attention');
        await button('Run on This File').click();
        await page.locator('.tab .label-name').filter({ hasText: /^Attention: / }).first().waitFor({ timeout: 150_000 });
        await openStep('Work in a Jupyter notebook');
        await button('Open the Example Notebook').click();
        await page.locator('.tab .label-name').filter({ hasText: 'example-notebook.ipynb' }).first().waitFor({ timeout: 150_000 });
        await page.locator('.notebook-editor .codelens-decoration a', { hasText: '▶ Run attention' }).first().waitFor({ timeout: 150_000 });
      }],
      ['no error on the way', async () => {
        const shown = await errors.allInnerTexts();
        if (shown.length > 0) throw new Error(`error notifications: ${shown.join(' | ')}`);
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
