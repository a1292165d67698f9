// code-server (VS Code 1.100 as a web server) for machines that cannot download VS Code: installed
// once into a cache folder beside test-electron's downloads (.vscode-test/), never as a project
// dependency, and started on 127.0.0.1 with a fresh profile.
import { createServer } from 'node:net';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { atExit, ensureDebianPackages, runOrThrow, spawnGroup, stopGroup } from './system.mjs';

export const CODE_SERVER_VERSION = '4.100.3';
const repoRoot = resolve(dirname(new URL(import.meta.url).pathname), '../..');
const cacheDir = join(repoRoot, '.vscode-test', `code-server-${CODE_SERVER_VERSION}`);
const packageDir = join(cacheDir, 'node_modules', 'code-server');
const entryPoint = join(packageDir, 'out', 'node', 'entry.js');
const completeMarker = join(cacheDir, '.complete');

// npm 11 runs no dependency install script unless the project's `allowScripts` names it. These
// are the packages in code-server 4.100.3's shrinkwraps that have one (native modules, ripgrep's
// download, esbuild's binary); `--strict-allow-scripts` turns any other into an install error
// instead of a silently half-installed server.
const allowScripts = {
  [cacheDir]: ['code-server', 'argon2'],
  [join(packageDir, 'lib', 'vscode')]: [
    '@parcel/watcher', '@vscode/deviceid', '@vscode/ripgrep', '@vscode/spdlog',
    '@vscode/windows-process-tree', '@vscode/windows-registry', 'kerberos', 'native-watchdog',
    'node-pty',
  ],
  [join(packageDir, 'lib', 'vscode', 'extensions')]: ['@parcel/watcher', 'esbuild'],
};

// Headers and libraries code-server's native modules compile against, and the ripgrep binary
// that replaces @vscode/ripgrep's download.
const debianBuildPackages = ['build-essential', 'python3', 'libkrb5-dev', 'pkg-config', 'libx11-dev', 'libxkbfile-dev', 'libsecret-1-dev', 'ripgrep'];

function setAllowScripts(projectDir, names) {
  const manifestPath = join(projectDir, 'package.json');
  const manifest = existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, 'utf8')) : { private: true };
  manifest.allowScripts = Object.fromEntries(names.map((name) => [name, true]));
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * @vscode/ripgrep downloads ripgrep from GitHub at install time, which fails offline; its
 * installer first looks for this archive in the OS temp folder, so we build it from Debian's rg.
 */
function seedRipgrepCache() {
  const archiveDir = join(tmpdir(), 'vscode-ripgrep-cache-1.15.11');
  const archive = join(archiveDir, 'ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz');
  if (existsSync(archive)) return;
  const staging = mkdtempSync(join(tmpdir(), 'rg-'));
  try {
    cpSync('/usr/bin/rg', join(staging, 'rg'));
    mkdirSync(archiveDir, { recursive: true });
    runOrThrow('tar', ['czf', archive, '-C', staging, 'rg']);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The environment code-server's installer and its nested `npm install`s need. */
function installEnv() {
  const env = { ...process.env, npm_config_unsafe_perm: 'true', npm_config_yes: 'true' };
  // node-gyp would download Node's headers; use the installed ones when the Node prefix has them.
  const nodePrefix = resolve(dirname(process.execPath), '..');
  if (existsSync(join(nodePrefix, 'include', 'node', 'node.h'))) env.npm_config_nodedir = nodePrefix;
  return env;
}

/** Installs code-server into the cache folder unless a complete install is already there. */
export function ensureCodeServer() {
  if (existsSync(completeMarker) && existsSync(entryPoint)) return entryPoint;
  const major = Number(process.versions.node.split('.')[0]);
  if (major !== 20) throw new Error(`code-server ${CODE_SERVER_VERSION} needs Node 20, this is Node ${process.versions.node}`);
  ensureDebianPackages(debianBuildPackages);
  seedRipgrepCache();

  const started = Date.now();
  console.log(`installing code-server ${CODE_SERVER_VERSION} into ${cacheDir}`);
  rmSync(cacheDir, { recursive: true, force: true });
  mkdirSync(cacheDir, { recursive: true });
  const env = installEnv();
  // Two steps so that the nested projects' allowScripts can be written before their installs
  // run: fetch without scripts, then let `npm rebuild` run code-server's postinstall, which
  // installs lib/vscode and lib/vscode/extensions.
  setAllowScripts(cacheDir, allowScripts[cacheDir]);
  runOrThrow('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', `code-server@${CODE_SERVER_VERSION}`], { cwd: cacheDir, env });
  for (const [projectDir, names] of Object.entries(allowScripts)) setAllowScripts(projectDir, names);
  runOrThrow('npm', ['rebuild', '--strict-allow-scripts'], { cwd: cacheDir, env });
  verifyNativeModules();
  writeFileSync(completeMarker, `${new Date().toISOString()}\n`);
  console.log(`code-server installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return entryPoint;
}

/** Loads each native module once, so that a broken build fails here rather than mid-test. */
function verifyNativeModules() {
  const vscodeDir = join(packageDir, 'lib', 'vscode');
  const modules = ['node-pty', '@vscode/spdlog', 'kerberos', 'native-watchdog', '@parcel/watcher', '@vscode/deviceid'];
  const script = `for (const m of ${JSON.stringify(modules)}) require(m);`;
  runOrThrow(process.execPath, ['-e', script], { cwd: vscodeDir });
  runOrThrow(process.execPath, ['-e', 'require("argon2")'], { cwd: packageDir });
  if (!existsSync(join(vscodeDir, 'node_modules', '@vscode', 'ripgrep', 'bin', 'rg'))) {
    throw new Error('code-server installed without ripgrep');
  }
}

/** A free TCP port on 127.0.0.1, chosen at random in 20000–29999. */
export async function freePort() {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = 20000 + Math.floor(Math.random() * 10000);
    const free = await new Promise((done) => {
      const probe = createServer();
      probe.once('error', () => done(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => done(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port in 20000–29999');
}

// A quiet, offline editor: no gallery queries, update checks, telemetry, tips or welcome page.
const defaultSettings = {
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'workbench.enableExperiments': false,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
};

/** Writes the user settings of a profile made by startCodeServer. */
function writeUserSettings(settingsPath, settings) {
  mkdirSync(dirname(settingsPath), { recursive: true });
  writeFileSync(settingsPath, `${JSON.stringify({ ...defaultSettings, ...settings }, null, 2)}\n`);
}

/**
 * Starts code-server on 127.0.0.1 (on `port`, or a free one) with a throwaway profile and waits
 * until it answers.
 * `log` receives its output lines. `vsixFiles` are installed into the profile first, as a user's
 * `--install-extension` does; `env` is added to its environment (its extension host inherits it). Returns its origin, port, `stop()` and `logsDir` (the editor's logs,
 * the extension's output channels among them).
 */
export async function startCodeServer({ folder, port, settings = {}, vsixFiles = [], env = {}, log = () => {}, timeoutMs = 60_000 }) {
  const entry = ensureCodeServer();
  port ??= await freePort();
  // Short names: VS Code's IPC sockets live under tmp/, and a socket path has at most 107 bytes.
  const profile = mkdtempSync(join(tmpdir(), 'attn-cs-'));
  atExit(() => rmSync(profile, { recursive: true, force: true }));
  const tmp = join(profile, 't');
  mkdirSync(tmp);
  const settingsPath = join(profile, 'user-data', 'User', 'settings.json');
  writeUserSettings(settingsPath, settings);
  const profileDirs = ['--user-data-dir', join(profile, 'user-data'), '--extensions-dir', join(profile, 'extensions')];
  for (const vsix of vsixFiles) {
    runOrThrow(process.execPath, [entry, '--install-extension', vsix, ...profileDirs], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const child = spawnGroup(process.execPath, [
    entry,
    '--auth', 'none',
    '--bind-addr', `127.0.0.1:${port}`,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    ...profileDirs,
    '--config', join(profile, 'config.yaml'),
    folder,
  ], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // An empty gallery turns the marketplace off: no queries to open-vsx.org at run time. Its
    // sockets and temporary files go into the profile, so that stop() removes them too.
    env: { ...process.env, ...env, EXTENSIONS_GALLERY: '{}', TMPDIR: tmp },
  });
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (text) => text.split('\n').filter(Boolean).forEach((line) => log(line)));
  }
  const origin = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopGroup(child);
    rmSync(profile, { recursive: true, force: true });
  };
  try {
    await waitUntilHealthy(origin, child, timeoutMs);
  } catch (error) {
    await stop();
    throw error;
  }
  return { origin, port, stop, logsDir: join(profile, 'user-data', 'logs') };
}

async function waitUntilHealthy(origin, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`code-server exited (code ${child.exitCode}) before it was ready`);
    try {
      const response = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((done) => setTimeout(done, 250));
  }
  throw new Error(`code-server did not answer on ${origin} within ${timeoutMs / 1000} s`);
}

/**
 * The workbench URL for `folder` with the extension under development loaded and, when given,
 * the tests at `testsPath` run by the extension host (design §5).
 */
export function workbenchUrl({ origin, port, folder, extensionPath, testsPath }) {
  const remote = (path) => `vscode-remote://127.0.0.1:${port}${path}`;
  const payload = [['extensionDevelopmentPath', remote(extensionPath)]];
  if (testsPath) payload.push(['extensionTestsPath', remote(testsPath)]);
  return `${origin}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}
