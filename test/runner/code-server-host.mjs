// Host 2: the same integration suite inside code-server (VS Code 1.100.3 server), its workbench
// opened in Debian's Chromium by playwright-core. The workbench runs the extension host's tests
// because the URL's payload names `extensionTestsPath`, and reports back through two functions
// it looks for on the page: codeAutomationLog (every log line) and codeAutomationExit (the code).
import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { format } from 'node:util';
import { launchChromium } from '../../scripts/lib/browser.mjs';
import { startCodeServer, workbenchUrl } from '../../scripts/lib/code-server.mjs';
import { runOrThrow } from '../../scripts/lib/system.mjs';
import { startKeyboard } from './keyboard.mjs';
import { paths } from './paths.mjs';

/**
 * Runs the suite; `onLine` receives each line of the tests' output. Resolves to the extension
 * host's exit code; rejects when the run cannot start or exceeds `timeoutMs`. By default the
 * extension under development is this repository and the tests are the integration suite;
 * `vsixFiles` are installed into the editor before it starts.
 */
export async function runInCodeServer({ timeoutMs, onLine, extensionPath = paths.repoRoot, testsPath = paths.integrationEntry, vsixFiles = [] }) {
  const serverLog = [];
  let page;
  // The extension host inherits the keyboard's address from the server.
  const keyboard = await startKeyboard(() => page);
  const server = await startCodeServer({ folder: paths.examples, vsixFiles, env: { ATTENTION_LENS_TEST_KEYBOARD: keyboard.url }, log: (line) => serverLog.push(line) }).catch(async (error) => {
    await keyboard.close();
    throw error;
  });
  let browser;
  try {
    browser = await launchChromium();
    page = await browser.newPage();
    const exitCode = new Promise((resolve) => page.exposeFunction('codeAutomationExit', resolve));
    await page.exposeFunction('codeAutomationLog', (type, args) => {
      // The arguments of one console call; mocha's lines are printf-style.
      const text = format(...(Array.isArray(args) ? args : [args]));
      for (const line of text.split('\n')) onLine(line, type);
    });
    await page.goto(workbenchUrl({ ...server, folder: paths.examples, extensionPath, testsPath }));
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`integration tests did not finish within ${timeoutMs / 1000} s`)), timeoutMs);
    });
    try {
      return await Promise.race([exitCode, timeout]);
    } finally {
      clearTimeout(timer);
    }
  } catch (error) {
    console.error(`code-server log:\n${serverLog.join('\n')}`);
    throw error;
  } finally {
    await browser?.close();
    await server.stop();
    await keyboard.close();
  }
}

/**
 * code-server loads one extension under development (its URL payload is read into a map): a
 * test-only extension (paths.testExtensions) is packed into a .vsix to install beside it instead.
 */
export function packTestExtension(folder) {
  const vsix = join(paths.repoRoot, 'out', 'test', `${basename(folder)}.vsix`);
  const vsce = join(paths.repoRoot, 'node_modules', '@vscode', 'vsce', 'vsce');
  mkdirSync(dirname(vsix), { recursive: true }); // vsce does not create it (a fresh clone has no out/test)
  runOrThrow(process.execPath, [vsce, 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--out', vsix], { cwd: folder, stdio: 'ignore' });
  return vsix;
}
