// Mocha's entry inside the extension host (VS Code's `extensionTestsPath`): runs every bundled
// out/test/integration/*.test.js. The runner (test/runner/integration.mjs) may narrow the run
// with ATTENTION_LENS_TEST_FILES (comma-separated file names) and ATTENTION_LENS_TEST_GREP.
import * as vscode from 'vscode';
import Mocha from 'mocha';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** test/runner/integration.mjs reads this line to count the tests: keep the two in step. */
const SUMMARY_PREFIX = 'integration summary:';

export function run(): Promise<void> {
  console.log(`vscode.version ${vscode.version} (${vscode.env.appName}, ${vscode.env.appHost})`);
  // In CI (CI=true) a stray `.only` fails the run instead of quietly running one test.
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 60_000, reporter: 'spec', forbidOnly: Boolean(process.env.CI) });
  const grep = process.env.ATTENTION_LENS_TEST_GREP;
  if (grep) mocha.grep(grep);

  const only = process.env.ATTENTION_LENS_TEST_FILES?.split(',').filter(Boolean);
  const files = readdirSync(__dirname)
    .filter((name) => name.endsWith('.test.js'))
    .filter((name) => !only || only.some((wanted) => name.startsWith(wanted.replace(/\.(ts|js)$/, ''))));
  if (files.length === 0) return Promise.reject(new Error(`no integration test files matched in ${__dirname}`));
  for (const name of files) mocha.addFile(join(__dirname, name));

  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      const { passes, failures: failed, pending } = runner.stats ?? { passes: 0, failures, pending: 0 };
      console.log(`${SUMMARY_PREFIX} ${JSON.stringify({ passed: passes, failed, skipped: pending })}`);
      if (failures > 0) reject(new Error(`${failures} integration test(s) failed`));
      else resolve();
    });
  });
}
