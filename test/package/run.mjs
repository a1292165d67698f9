// `npm run test:package`: builds every target's .vsix (scripts/package.mjs) and checks their
// contents and sizes (test/package/targets.mjs), then installs this platform's
// with code-server's `--install-extension` into the extensions folder of a fresh code-server, and
// runs test/package/package.test.ts in that editor's extension host — against the installed copy,
// not the repository (the extension under development is an empty carrier, test/package/carrier).
// Then, in a second fresh code-server with only the .vsix, clicks through the Getting Started
// walkthrough (test/package/walkthrough.mjs).
// Ends with `package (…): N passed, N failed, N skipped`; non-zero exit on any failure.
import * as esbuild from 'esbuild';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildVsix, TARGETS, vsixPathOf } from '../../scripts/package.mjs';
import { checkTargets } from './targets.mjs';
import { runInCodeServer } from '../runner/code-server-host.mjs';
import { checkWalkthrough } from './walkthrough.mjs';
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

async function main() {
  const started = Date.now();
  // Every target's package, checked as built; this machine's platform package (with the native
  // backend) is the one installed, else the universal one.
  buildVsix({ quiet: true });
  const targets = checkTargets();
  const platform = `${process.platform}-${process.arch}`;
  const target = TARGETS[platform] ? platform : 'universal';
  const vsix = vsixPathOf(target);
  console.log(`built ${vsix}`);
  // package.test.ts knows from this which package it runs in (and so whether a native backend must be there).
  process.env.ATTENTION_LENS_PACKAGE_TARGET = target;
  await buildTests();
  let summary;
  const code = await runInCodeServer({
    timeoutMs,
    extensionPath: join(paths.repoRoot, 'test', 'package', 'carrier'),
    testsPath: join(outDir, 'index.js'),
    vsixFiles: [vsix],
    onLine: (line) => {
      if (line.startsWith(SUMMARY_PREFIX)) summary = JSON.parse(line.slice(SUMMARY_PREFIX.length));
      else console.log(line);
    },
  });
  if (!summary) {
    console.error(`the extension host exited (code ${code}) without reporting test results`);
    summary = { passed: 0, failed: 1, skipped: 0 };
  } else if (code !== 0 && summary.failed === 0) {
    summary.failed = 1;
  }
  const walkthrough = await checkWalkthrough({ vsix, onLine: (line) => console.log(line) });
  const passed = targets.passed + summary.passed + walkthrough.passed;
  const failed = targets.failed + summary.failed + walkthrough.failed;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`package (installed .vsix in code-server, ${seconds} s): ${passed} passed, ${failed} failed, ${summary.skipped} skipped`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`the package test could not run: ${error instanceof Error ? error.stack : error}`);
    process.exit(1);
  },
);
