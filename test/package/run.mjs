// `npm run test:package`: builds attention-lens-<version>.vsix (scripts/package.mjs), installs it
// with code-server's `--install-extension` into the extensions folder of a fresh code-server, and
// runs test/package/package.test.ts in that editor's extension host — against the installed copy,
// not the repository (the extension under development is an empty carrier, test/package/carrier).
// Ends with `package (…): N passed, N failed`; non-zero exit on any failure.
import * as esbuild from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildVsix } from '../../scripts/package.mjs';
import { ensureCodeServer } from '../../scripts/lib/code-server.mjs';
import { runOrThrow } from '../../scripts/lib/system.mjs';
import { runInCodeServer } from '../runner/code-server-host.mjs';
import { paths } from '../runner/paths.mjs';

const SUMMARY_PREFIX = 'integration summary:';
const outDir = join(paths.repoRoot, 'out', 'test', 'package');
const timeoutMs = Number(process.env.ATTENTION_LENS_TEST_TIMEOUT_S ?? 600) * 1000;

/** The integration suite's mocha entry (it runs every *.test.js beside it) and the package test. */
async function buildTests() {
  rmSync(outDir, { recursive: true, force: true });
  await esbuild.build({
    entryPoints: {
      index: join(paths.repoRoot, 'test', 'integration', 'index.ts'),
      'package.test': join(paths.repoRoot, 'test', 'package', 'package.test.ts'),
    },
    outdir: outDir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', 'mocha'],
    logLevel: 'warning',
  });
}

/** Installs the .vsix the way a user's `code --install-extension` does, into the server's profile. */
function installInto(server, vsix) {
  // startCodeServer keeps the profile as PROFILE/user-data/User/settings.json and PROFILE/extensions.
  const profile = dirname(dirname(dirname(server.settingsPath)));
  runOrThrow(process.execPath, [
    ensureCodeServer(), '--install-extension', vsix,
    '--extensions-dir', join(profile, 'extensions'), '--user-data-dir', join(profile, 'user-data'),
  ], { stdio: ['ignore', 'inherit', 'inherit'] });
}

async function main() {
  const started = Date.now();
  const vsix = buildVsix({ quiet: true });
  console.log(`built ${vsix}`);
  await buildTests();
  let summary;
  const code = await runInCodeServer({
    timeoutMs,
    extensionPath: join(paths.repoRoot, 'test', 'package', 'carrier'),
    testsPath: join(outDir, 'index.js'),
    prepare: (server) => installInto(server, vsix),
    onLine: (line) => {
      if (line.startsWith(SUMMARY_PREFIX)) summary = JSON.parse(line.slice(SUMMARY_PREFIX.length));
      else console.log(line);
    },
  });
  if (!summary) {
    console.error(`the extension host exited (code ${code}) without reporting test results`);
    return 1;
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`package (installed .vsix in code-server, ${seconds} s): ${summary.passed} passed, ${summary.failed} failed`);
  return code === 0 && summary.failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`the package test could not run: ${error instanceof Error ? error.stack : error}`);
    process.exit(1);
  },
);
