// `npm run test:integration [-- FILE…] [--grep PATTERN]`: builds the extension and the suite,
// then runs test/integration/*.test.ts inside a real VS Code — desktop VS Code via
// @vscode/test-electron when it can be downloaded (or is cached) and displayed, otherwise
// code-server in Chromium. Prints which host ran; fails, never skips, when neither can.
// ATTENTION_LENS_TEST_HOST=electron|code-server forces a host.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runOrThrow, spawnGroup, stopGroup } from '../../scripts/lib/system.mjs';
import { packTestExtension, runInCodeServer } from './code-server-host.mjs';
import { VSCODE_VERSION } from './electron-host.mjs';
import { paths, testEnv } from './paths.mjs';

// Printed by test/integration/index.ts when mocha is done.
const SUMMARY_PREFIX = 'integration summary:';
const timeoutMs = Number(process.env.ATTENTION_LENS_TEST_TIMEOUT_S ?? 600) * 1000;

function parseArgs(argv) {
  const files = [];
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--grep') process.env.ATTENTION_LENS_TEST_GREP = argv[++i];
    else files.push(argv[i].replace(/^.*\//, ''));
  }
  if (files.length > 0) process.env.ATTENTION_LENS_TEST_FILES = files.join(',');
}

/** True when a command is on PATH. */
function onPath(command) {
  return process.env.PATH.split(':').some((dir) => existsSync(join(dir, command)));
}

/** Whether desktop VS Code can run here, and why not when it cannot. Answers within ~5 s. */
async function electronAvailability() {
  if (!process.env.DISPLAY && !onPath('xvfb-run')) return { ok: false, why: 'no display and no xvfb-run' };
  if (existsSync(join(paths.vscodeTestCache, `vscode-linux-x64-${VSCODE_VERSION}`))) return { ok: true, why: 'cached' };
  const url = `https://update.code.visualstudio.com/api/versions/${VSCODE_VERSION}/linux-x64/stable`;
  try {
    const response = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(5000) });
    return response.status < 400 ? { ok: true, why: 'downloadable' } : { ok: false, why: `download answered ${response.status}` };
  } catch (error) {
    return { ok: false, why: `cannot download VS Code (${error.cause?.code ?? error.name})` };
  }
}

/** Runs electron-host.mjs as a child (under xvfb-run without a display), streaming its output. */
async function runInElectron({ onLine }) {
  const script = join(paths.repoRoot, 'test', 'runner', 'electron-host.mjs');
  const [command, args] = process.env.DISPLAY
    ? [process.execPath, [script]]
    : ['xvfb-run', ['-a', process.execPath, script]];
  const child = spawnGroup(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...testEnv() } });
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (text) => text.split('\n').filter(Boolean).forEach((line) => onLine(line)));
  }
  const timer = setTimeout(() => {
    console.error(`integration tests did not finish within ${timeoutMs / 1000} s`);
    stopGroup(child);
  }, timeoutMs);
  const code = await new Promise((resolve) => {
    child.once('exit', (exitCode) => resolve(exitCode ?? 1));
    child.once('error', (error) => {
      console.error(`cannot start ${command}: ${error.message}`);
      resolve(1);
    });
  });
  clearTimeout(timer);
  return code;
}

async function main() {
  parseArgs(process.argv.slice(2));
  runOrThrow(process.execPath, ['esbuild.mjs'], { cwd: paths.repoRoot });
  runOrThrow(process.execPath, ['scripts/build-tests.mjs'], { cwd: paths.repoRoot });

  const forced = process.env.ATTENTION_LENS_TEST_HOST;
  const electron = forced ? { ok: forced === 'electron', why: 'ATTENTION_LENS_TEST_HOST' } : await electronAvailability();
  const host = electron.ok ? `VS Code ${VSCODE_VERSION} (@vscode/test-electron, ${electron.why})` : `code-server (${electron.why})`;
  console.log(`integration host: ${host}`);

  // The editor's own start-up log is kept back until the tests start (their first line is
  // `vscode.version …`), and printed only if they never report.
  let summary;
  let testsStarted = false;
  const startupLog = [];
  const onLine = (line) => {
    // Desktop VS Code may prefix the extension host's lines; look for the markers anywhere.
    testsStarted ||= line.includes('vscode.version ');
    const at = line.indexOf(SUMMARY_PREFIX);
    if (at >= 0) summary = JSON.parse(line.slice(at + SUMMARY_PREFIX.length));
    else if (testsStarted) console.log(line);
    else startupLog.push(line);
  };
  const started = Date.now();
  const code = electron.ok ? await runInElectron({ onLine }) : await runInCodeServer({ timeoutMs, onLine, vsixFiles: paths.testExtensions.map(packTestExtension) });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (!summary) {
    console.error(startupLog.join('\n'));
    console.error(`the extension host exited (code ${code}) without reporting test results`);
    return 1;
  }
  console.log(`integration (${host}, ${seconds} s): ${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped`);
  return code === 0 && summary.failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`integration tests could not run: ${error instanceof Error ? error.stack : error}`);
    process.exit(1);
  },
);
