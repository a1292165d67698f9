// `npm test`: everything, from a fresh machine. Installs what is missing (npm packages; on Debian as
// root the system packages; code-server into .vscode-test/), then runs every suite — type check,
// lint, unit, build, browser, integration (inside VS Code), package (the .vsix installed in
// code-server), e2e — even after a failure, so one run
// shows every problem. Ends with one line `N passed, N failed, N skipped`: tests counted across
// suites (a skipped test is one mocha reports pending, or node:test as skip or todo), and each
// check without tests of its own (prerequisites, type check, lint, build) counted as one. Each skip
// says why in its suite's log (test/skip.ts); the summary repeats those lines. CI reads the last
// line: keep it alone there. Exits non-zero on any failure.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { ensureCodeServer } from './lib/code-server.mjs';
import { ensureDebianPackages, runOrThrow } from './lib/system.mjs';
import { countTests, skipReasons } from './lib/test-counts.mjs';

// What the suites need from Debian besides code-server's own build packages: the browser, Python
// with debugpy, numpy and torch (the debug source's tests pause a Python program), and the
// WebAssembly kernels' toolchain — clang 14, its wasm-ld and binaryen's wasm-opt — with which
// test/unit/fast/wasm-build.test.ts rebuilds the committed .wasm and requires the same bytes.
const debianTestPackages = ['chromium', 'ripgrep', 'python3-debugpy', 'python3-jinja2', 'python3-numpy', 'python3-torch', 'clang-14', 'lld-14', 'binaryen'];

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
  const counts = countTests(lines) ?? { passed: code === 0 ? 1 : 0, failed: code === 0 ? 0 : 1, skipped: 0 };
  // A suite that crashed after its last test still failed.
  if (code !== 0 && counts.failed === 0) counts.failed = 1;
  const skips = skipReasons(lines);
  // A test skipped without saying why (mocha's it.skip, a bare this.skip()) is still counted; the
  // summary says how many gave no reason.
  if (counts.skipped > skips.length) skips.push(`${counts.skipped - skips.length} without a reason in the log (use test/skip.ts)`);
  results.push({ label, ...counts, skips, seconds: (Date.now() - stepStart) / 1000 });
}

console.log('\n=== summary');
for (const { label, passed, failed, skipped = 0, seconds } of results) {
  console.log(`${failed > 0 ? 'FAIL' : 'ok  '} ${label.padEnd(14)} ${String(passed).padStart(5)} passed ${String(failed).padStart(4)} failed ${String(skipped).padStart(3)} skipped ${seconds.toFixed(1).padStart(7)} s`);
}
for (const { label, skips = [] } of results) {
  for (const skip of skips) console.log(`skipped in ${label}: ${skip}`);
}
const total = (key) => results.reduce((sum, step) => sum + (step[key] ?? 0), 0);
console.log(`total time ${((Date.now() - started) / 1000).toFixed(0)} s`);
const failed = total('failed');
console.log(`${total('passed')} passed, ${failed} failed, ${total('skipped')} skipped`);
process.exit(failed > 0 ? 1 : 0);
