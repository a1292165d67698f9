// `npm run package`: attention-lens-<version>.vsix in the repository root, built from a staging
// folder (out/vsix/) so that the shared dist/ of development builds is never touched: the
// manifest files are copied there, the bundles are built there with `--production` (minified, no
// source maps), and `vsce package` packs what .vscodeignore lets through. Prints the file list
// and sizes. No network: `--no-dependencies` (every runtime dependency is inside the bundles).
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { runOrThrow } from './lib/system.mjs';

const repoRoot = resolve(dirname(new URL(import.meta.url).pathname), '..');
const stage = join(repoRoot, 'out', 'vsix');
const { name, version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
const vsixPath = join(repoRoot, `${name}-${version}.vsix`);

// What the package is made of; everything else in the repository stays out of the staging folder.
const copied = ['package.json', 'package.nls.json', 'README.md', 'LICENSE', 'CHANGELOG.md', '.vscodeignore', 'media'];
// What the production build reads (esbuild resolves these symlinks to the real sources).
const linked = ['src', 'webview', 'node_modules', 'tsconfig.json'];

export function buildVsix({ quiet = false } = {}) {
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  for (const entry of copied) cpSync(join(repoRoot, entry), join(stage, entry), { recursive: true });
  for (const entry of linked) symlinkSync(join(repoRoot, entry), join(stage, entry));

  const stdio = quiet ? 'ignore' : 'inherit';
  runOrThrow(process.execPath, [join(repoRoot, 'esbuild.mjs'), '--production'], { cwd: stage, stdio });
  const vsce = join(repoRoot, 'node_modules', '@vscode', 'vsce', 'vsce');
  runOrThrow(process.execPath, [vsce, 'package', '--no-dependencies', '--out', vsixPath], { cwd: stage, stdio });
  if (!quiet) {
    console.log('\nfiles in the package:');
    runOrThrow(process.execPath, [vsce, 'ls', '--no-dependencies'], { cwd: stage, stdio });
    console.log(`\n${vsixPath}: ${(statSync(vsixPath).size / 1024).toFixed(0)} KiB`);
  }
  return vsixPath;
}

if (process.argv[1] === new URL(import.meta.url).pathname) buildVsix();
