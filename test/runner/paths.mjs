// Where the runners find the extension, the bundled tests and the caches.
import { dirname, join, resolve } from 'node:path';

const repoRoot = resolve(dirname(new URL(import.meta.url).pathname), '../..');

export const paths = {
  repoRoot,
  examples: join(repoRoot, 'examples'),
  integrationEntry: join(repoRoot, 'out', 'test', 'integration', 'index.js'),
  vscodeTestCache: join(repoRoot, '.vscode-test'),
  /** Extensions loaded beside ours for the integration suite only (a debug adapter Python needs). */
  testExtensions: [join(repoRoot, 'test', 'fixtures', 'debugpy-adapter-extension')],
};

/** The variables test/integration/index.ts reads to narrow a run (and CI, which forbids `.only`), passed on to the host. */
export function testEnv() {
  const env = {};
  for (const name of ['ATTENTION_LENS_TEST_FILES', 'ATTENTION_LENS_TEST_GREP', 'CI']) {
    if (process.env[name]) env[name] = process.env[name];
  }
  return env;
}
