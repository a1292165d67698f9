// `npm run package`: the .vsix files in the repository root, one per target (VS Code's convention
// for native code, `vsce package --target`): attention-lens-<target>-<version>.vsix for each
// platform with ONNX Runtime's binaries (its own only), and attention-lens-<version>.vsix, the
// universal WebAssembly-only package (web, any other platform). Built from a staging folder
// (out/vsix/) so that the shared dist/ of development builds is never touched: the manifest files
// are copied there, the bundles are built there once with `--production` (minified, no source
// maps), and for each target `vsce package` packs what .vscodeignore lets through, with the
// native backend's two packages (pruned to that platform) in dist/node_modules/. Prints each file's
// size. No network: `--no-dependencies` (every other runtime dependency is inside the bundles).
// `node scripts/package.mjs linux-x64` builds that target alone.
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { runOrThrow } from './lib/system.mjs';

const repoRoot = resolve(dirname(new URL(import.meta.url).pathname), '..');
const stage = join(repoRoot, 'out', 'vsix');
const { name, version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));

// What the package is made of; everything else in the repository stays out of the staging folder.
const copied = ['package.json', 'package.nls.json', 'README.md', 'LICENSE', 'CHANGELOG.md', '.vscodeignore', 'media'];
// What the production build reads (esbuild resolves these symlinks to the real sources).
const linked = ['src', 'webview', 'node_modules', 'tsconfig.json'];

const ORT = join(repoRoot, 'node_modules', 'onnxruntime-node');
/**
 * Per target, the folder of onnxruntime-node's binaries it carries and the files it needs there
 * (the binding and the runtime it links; on Windows the DirectML library the binding imports, not
 * the WebGPU provider's compilers). null: onnxruntime-node 1.30 ships no binaries for it, so that
 * package runs the WebAssembly kernels.
 */
export const TARGETS = {
  'linux-x64': { folder: 'linux/x64', files: ['onnxruntime_binding.node', 'libonnxruntime.so.1'] },
  'linux-arm64': { folder: 'linux/arm64', files: ['onnxruntime_binding.node', 'libonnxruntime.so.1'] },
  'darwin-arm64': { folder: 'darwin/arm64', files: ['onnxruntime_binding.node', 'libonnxruntime.1.dylib'] },
  'darwin-x64': null,
  'win32-x64': { folder: 'win32/x64', files: ['onnxruntime_binding.node', 'onnxruntime.dll', 'DirectML.dll'] },
};

export const vsixPathOf = (target) => join(repoRoot, target === 'universal' ? `${name}-${version}.vsix` : `${name}-${target}-${version}.vsix`);

/** The staging folder with the production bundles. */
function stageBundles(stdio) {
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  for (const entry of copied) cpSync(join(repoRoot, entry), join(stage, entry), { recursive: true });
  for (const entry of linked) symlinkSync(join(repoRoot, entry), join(stage, entry));
  runOrThrow(process.execPath, [join(repoRoot, 'esbuild.mjs'), '--production'], { cwd: stage, stdio });
}

/**
 * dist/node_modules/: onnxruntime-node's JavaScript and one platform's binaries, and
 * onnxruntime-common. The bundles' `require('onnxruntime-node')` finds them there first (vsce's
 * `--no-dependencies` leaves out the top node_modules/ only).
 */
function stageNativeModules(binaries) {
  const modules = join(stage, 'dist', 'node_modules');
  rmSync(modules, { recursive: true, force: true });
  if (!binaries) return;
  const packageOf = (dir) => ['package.json', 'LICENSE'].filter((file) => readdirSync(dir).includes(file));
  const ortOut = join(modules, 'onnxruntime-node');
  for (const file of packageOf(ORT)) cpSync(join(ORT, file), join(ortOut, file));
  for (const file of readdirSync(join(ORT, 'dist')).filter((f) => f.endsWith('.js'))) cpSync(join(ORT, 'dist', file), join(ortOut, 'dist', file));
  for (const file of binaries.files) cpSync(join(ORT, 'bin', 'napi-v6', binaries.folder, file), join(ortOut, 'bin', 'napi-v6', binaries.folder, file));
  const common = join(repoRoot, 'node_modules', 'onnxruntime-common');
  const commonOut = join(modules, 'onnxruntime-common');
  for (const file of packageOf(common)) cpSync(join(common, file), join(commonOut, file));
  cpSync(join(common, 'dist', 'cjs'), join(commonOut, 'dist', 'cjs'), { recursive: true, filter: (src) => !/\.(map|d\.ts)$/.test(src) });
}

function packTarget(target, stdio, quiet) {
  stageNativeModules(target === 'universal' ? null : TARGETS[target]);
  const vsce = join(repoRoot, 'node_modules', '@vscode', 'vsce', 'vsce');
  const vsixPath = vsixPathOf(target);
  const targetFlag = target === 'universal' ? [] : ['--target', target];
  runOrThrow(process.execPath, [vsce, 'package', '--no-dependencies', ...targetFlag, '--out', vsixPath], { cwd: stage, stdio });
  if (!quiet) console.log(`${vsixPath}: ${(statSync(vsixPath).size / 2 ** 20).toFixed(1)} MiB`);
  return vsixPath;
}

/** Builds the .vsix of each target (default: every platform and the universal one); returns their paths. */
export function buildVsix({ quiet = false, targets = [...Object.keys(TARGETS), 'universal'] } = {}) {
  const stdio = quiet ? 'ignore' : 'inherit';
  stageBundles(stdio);
  return targets.map((target) => packTarget(target, stdio, quiet));
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const asked = process.argv.slice(2);
  const unknown = asked.filter((target) => target !== 'universal' && !(target in TARGETS));
  if (unknown.length > 0) {
    console.error(`unknown target ${unknown.join(', ')}: ${[...Object.keys(TARGETS), 'universal'].join(', ')}`);
    process.exit(1);
  }
  buildVsix(asked.length > 0 ? { targets: asked } : {});
}
