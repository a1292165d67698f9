// Regenerates attention.wasm from attention.c + kernel.h with Debian's clang and lld
// (`apt-get install clang lld`): `npm run build:wasm`. The .wasm is committed so `npm ci` alone
// builds the extension; attention.wasm.sources records a hash of the inputs and the exact
// command, and test/unit/fast/wasm-build.test.ts fails when the sources changed without a rebuild.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const SOURCES = ['attention.c', 'kernel.h'];
const CLANG = ['--target=wasm32', '-O3', '-msimd128', '-matomics', '-mbulk-memory', '-ffreestanding', '-nostdlib', '-Wall', '-Werror'];
// Imported shared memory (every thread maps the same bytes); no stack: the kernels use none.
const LINK = ['--no-entry', '--import-memory', '--shared-memory', '--max-memory=4294967296', '-z', 'stack-size=0', '--strip-all'];

export function sourcesHash() {
  const hash = createHash('sha256');
  for (const name of SOURCES) hash.update(name).update(readFileSync(join(here, name)));
  hash.update(CLANG.join(' ')).update(LINK.join(' '));
  return hash.digest('hex');
}

/** Compiles to `out` and returns its bytes. */
export function compile(out) {
  const work = mkdtempSync(join(tmpdir(), 'attention-wasm-'));
  try {
    const object = join(work, 'attention.o');
    execFileSync('clang-14', [...CLANG, '-c', join(here, 'attention.c'), '-o', object], { stdio: 'inherit' });
    execFileSync('wasm-ld-14', [...LINK, object, '-o', out], { stdio: 'inherit' });
    return readFileSync(out);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  compile(join(here, 'attention.wasm'));
  writeFileSync(join(here, 'attention.wasm.sources'), `${sourcesHash()}\n`);
  console.log('attention.wasm rebuilt');
}
