// `npm test`: everything, from a fresh machine. Installs what is missing (npm packages; on Debian as
// root the system packages; code-server into .vscode-test/), then runs every suite — type check,
// lint, unit, build, browser, integration (inside VS Code), package (the .vsix installed in
// code-server), e2e — even after a failure, so one run
// shows every problem. Ends with one line `N passed, N failed`: tests counted across suites, and
// each check without tests of its own (prerequisites, type check, lint, build) counted as one.
// Exits non-zero on any failure.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { ensureCodeServer } from './lib/code-server.mjs';
import { ensureDebianPackages, runOrThrow } from './lib/system.mjs';

// What the suites need from Debian besides code-server's own build packages: the browser, and
// Python with debugpy, numpy and torch (the debug source's tests pause a Python program).
const debianTestPackages = ['chromium', 'ripgrep', 'python3-debugpy', 'python3-numpy', 'python3-torch'];

function installPrerequisites() {
  if (!existsSync('node_modules/.package-lock.json')) runOrThrow('npm', ['ci']);
  ensureDebianPackages(debianTestPackages);
  ensureCodeServer();
}

/** Runs `npm run -s <script>`, echoing its output; resolves to its exit code and its lines. */
function runScript(script) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '-s', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines = [];
    for (const [stream, sink] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
      stream.setEncoding('utf8');
      let partial = '';
      stream.on('data', (text) => {
        sink.write(text);
        const parts = (partial + text).split('\n');
        partial = parts.pop();
        lines.push(...parts);
      });
      stream.on('end', () => partial && lines.push(partial));
    }
    child.on('close', (code) => resolve({ code: code ?? 1, lines }));
  });
}

/**
 * Reads the test counts a suite printed: our runners' `N passed, N failed`, mocha's
 * `N passing` / `N failing`, or node:test's `# pass N` / `# fail N`. Null when it printed none.
 */
function countTests(lines) {
  let counts = null;
  const set = (key, value) => {
    counts ??= { passed: 0, failed: 0 };
    counts[key] = Number(value);
  };
  for (const line of lines) {
    let match;
    if ((match = /(\d+) passed, (\d+) failed\s*$/.exec(line))) {
      set('passed', match[1]);
      set('failed', match[2]);
    } else if ((match = /^\s*(\d+) passing\b/.exec(line)) || (match = /^# pass (\d+)$/.exec(line))) {
      set('passed', match[1]);
    } else if ((match = /^\s*(\d+) failing\b/.exec(line)) || (match = /^# fail (\d+)$/.exec(line))) {
      set('failed', match[1]);
    }
  }
  return counts;
}

const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts ?? {};
const steps = [
  ['type check', 'typecheck'],
  ['lint', 'lint'],
  ['unit', 'test:unit'],
  ['build', 'build'],
  ['browser', 'test:browser'],
  ['integration', 'test:integration'],
  ['package', 'test:package'],
  ['e2e', 'test:e2e'],
];

const results = [];
const started = Date.now();

console.log('\n=== prerequisites');
let stepStart = Date.now();
try {
  installPrerequisites();
  results.push({ label: 'prerequisites', passed: 1, failed: 0, seconds: (Date.now() - stepStart) / 1000 });
} catch (error) {
  console.error(`prerequisites failed: ${error instanceof Error ? error.message : error}`);
  results.push({ label: 'prerequisites', passed: 0, failed: 1, seconds: (Date.now() - stepStart) / 1000 });
}

for (const [label, script] of steps) {
  if (!scripts[script]) {
    console.log(`\n=== ${label}: no "${script}" script in package.json yet — nothing to run`);
    continue;
  }
  console.log(`\n=== ${label}: npm run ${script}`);
  stepStart = Date.now();
  const { code, lines } = await runScript(script);
  const counts = countTests(lines) ?? { passed: code === 0 ? 1 : 0, failed: code === 0 ? 0 : 1 };
  // A suite that crashed after its last test still failed.
  if (code !== 0 && counts.failed === 0) counts.failed = 1;
  results.push({ label, ...counts, seconds: (Date.now() - stepStart) / 1000 });
}

console.log('\n=== summary');
for (const { label, passed, failed, seconds } of results) {
  console.log(`${failed > 0 ? 'FAIL' : 'ok  '} ${label.padEnd(14)} ${String(passed).padStart(5)} passed ${String(failed).padStart(4)} failed ${seconds.toFixed(1).padStart(7)} s`);
}
const passed = results.reduce((sum, step) => sum + step.passed, 0);
const failed = results.reduce((sum, step) => sum + step.failed, 0);
console.log(`total time ${((Date.now() - started) / 1000).toFixed(0)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
