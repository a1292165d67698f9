// The .vsix of every target as built (scripts/package.mjs), read as the zip files they are: each
// platform package carries ONNX Runtime's binaries for its own platform only and says which
// platform it is for; the universal one (and darwin-x64, for which onnxruntime-node ships no
// binaries) carries none; every one has the bundles and the WebAssembly kernels, and stays within
// 25 MiB. Prints one line per check; returns the counts.
import { readFileSync, statSync } from 'node:fs';
import { unzipSync } from 'fflate';
import { TARGETS, vsixPathOf } from '../../scripts/package.mjs';

const MAX_BYTES = 25 * 2 ** 20;
const NATIVE = 'extension/dist/node_modules/';

export function checkTargets({ onLine = console.log } = {}) {
  let passed = 0;
  let failed = 0;
  const check = (label, ok, detail = '') => {
    if (ok) passed++;
    else failed++;
    onLine(`${ok ? '✔' : '✗'} ${label}${ok || !detail ? '' : `: ${detail}`}`);
  };
  for (const target of [...Object.keys(TARGETS), 'universal']) {
    const path = vsixPathOf(target);
    const bytes = statSync(path).size;
    check(`${target}: ${(bytes / 2 ** 20).toFixed(1)} MiB, at most 25`, bytes <= MAX_BYTES);
    // fflate shows the filter every entry: that lists them all, and only the manifest is inflated.
    const listed = [];
    const entries = unzipSync(new Uint8Array(readFileSync(path)), {
      filter: (file) => {
        listed.push(file.name);
        return file.name === 'extension.vsixmanifest';
      },
    });
    const missing = ['extension/dist/worker.js', 'extension/dist/cli.js', 'extension/dist/attention.wasm', 'extension/package.json'].filter((file) => !listed.includes(file));
    check(`${target}: bundles and WebAssembly kernels`, missing.length === 0, `missing ${missing.join(', ')}`);
    const manifest = new TextDecoder().decode(entries['extension.vsixmanifest']);
    const binaries = TARGETS[target];
    const native = listed.filter((file) => file.startsWith(NATIVE));
    if (!binaries) {
      check(`${target}: no native binaries (WebAssembly only)`, native.length === 0, native.slice(0, 3).join(', '));
      continue;
    }
    check(`${target}: declared for ${target}`, manifest.includes(`TargetPlatform="${target}"`));
    const binaryFiles = native.filter((file) => file.includes('/bin/'));
    const wanted = binaries.files.map((file) => `${NATIVE}onnxruntime-node/bin/napi-v6/${binaries.folder}/${file}`);
    check(`${target}: exactly its own binaries (${binaries.files.join(', ')})`, JSON.stringify([...binaryFiles].sort()) === JSON.stringify([...wanted].sort()), binaryFiles.join(', '));
    check(`${target}: onnxruntime-node and onnxruntime-common's JavaScript`, ['onnxruntime-node/dist/index.js', 'onnxruntime-node/package.json', 'onnxruntime-common/dist/cjs/index.js', 'onnxruntime-common/package.json'].every((file) => native.includes(NATIVE + file)));
  }
  return { passed, failed };
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const { passed, failed } = checkTargets();
  console.log(`package targets: ${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}
