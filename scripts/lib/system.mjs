// Machine prerequisites the test suites need beyond npm: Debian packages (installed with apt when
// running as root on Debian, otherwise reported with the command to run) and child processes that
// are always cleaned up.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** True for packages dpkg reports as installed. */
function isInstalled(name) {
  const query = spawnSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8' });
  return query.status === 0 && query.stdout.includes('install ok installed');
}

/**
 * Makes sure the Debian packages are installed. Installs the missing ones with apt-get when this
 * is Debian and we are root; otherwise throws, naming the command that would install them.
 */
export function ensureDebianPackages(names) {
  if (!existsSync('/etc/debian_version')) {
    throw new Error(`not Debian: install the equivalents of ${names.join(' ')} yourself`);
  }
  const missing = names.filter((name) => !isInstalled(name));
  if (missing.length === 0) return;
  const command = `apt-get install -y --no-install-recommends ${missing.join(' ')}`;
  if (process.getuid?.() !== 0) {
    throw new Error(`missing Debian packages: ${missing.join(' ')} — run: sudo ${command}`);
  }
  console.log(`installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // The package lists may be missing or stale on a fresh machine; one update fixes both.
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', ...missing]]) {
    const result = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${result.status})`);
  }
}

/** Runs a command to completion with inherited output; throws on a non-zero exit. */
export function runOrThrow(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
  }
}

const started = new Set();

/**
 * Spawns a long-running process in its own process group, so that stopping it also stops
 * everything it started. Every such process is killed when this process exits, however it exits.
 */
export function spawnGroup(command, args, options = {}) {
  const child = spawn(command, args, { ...options, detached: true });
  started.add(child);
  child.on('exit', () => started.delete(child));
  return child;
}

/** Stops a process started with spawnGroup (and its children) and waits until it has exited. */
export async function stopGroup(child, graceMs = 3000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  killGroup(child, 'SIGTERM');
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

const exitTasks = [];

/** Runs `task` (synchronous) when this process exits, however it exits, after its children stop. */
export function atExit(task) {
  exitTasks.push(task);
}

process.on('exit', () => {
  for (const child of started) killGroup(child, 'SIGKILL');
  for (const task of exitTasks) task();
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => process.exit(signal === 'SIGINT' ? 130 : 143));
}
