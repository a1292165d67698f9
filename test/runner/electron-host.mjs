// Host 1: desktop VS Code downloaded by @vscode/test-electron, pinned to the VS Code that
// code-server 4.100.3 embeds, so both hosts run the same editor. Run as a child process of
// integration.mjs (under xvfb-run when there is no display); exits with VS Code's exit code.
import { runTests } from '@vscode/test-electron';
import { paths, testEnv } from './paths.mjs';

export const VSCODE_VERSION = '1.100.3';

const isMain = process.argv[1] === new URL(import.meta.url).pathname;
if (isMain) {
  try {
    const code = await runTests({
      version: VSCODE_VERSION,
      cachePath: paths.vscodeTestCache,
      extensionDevelopmentPath: [paths.repoRoot, ...paths.testExtensions],
      extensionTestsPath: paths.integrationEntry,
      extensionTestsEnv: testEnv(),
      launchArgs: [paths.examples, '--disable-extensions', '--disable-workspace-trust', '--skip-welcome', '--skip-release-notes'],
    });
    process.exit(code);
  } catch (error) {
    console.error(`VS Code test run failed: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  }
}
