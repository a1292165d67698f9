// Regenerates attention.wasm from attention.c + kernel.h with Debian's clang, lld and binaryen
// (`apt-get install clang lld binaryen`): `npm run build:wasm`. The .wasm is committed so `npm ci` alone
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
// clang 14 computes `p + constant` with an i32.add before each load, which V8 must emit as an
// instruction of its own (32-bit wrap-around); binaryen folds the constant into the load's offset,
// which V8 folds into the x86 address: the micro-kernel's loop loses most of its integer work
// (in L1 38 against 34.5 GFLOP/s on one core). Folding is exact here because no pointer + constant
// wraps past 4 GiB into the low KiB, which the arena leaves unused (--low-memory-unused).
const OPTIMIZE = ['--enable-simd', '--enable-threads', '--enable-bulk-memory', '--low-memory-unused', '--optimize-added-constants-propagate'];

export function sourcesHash() {
  const hash = createHash('sha256');
  for (const name of SOURCES) hash.update(name).update(readFileSync(join(here, name)));
  hash.update(CLANG.join(' ')).update(LINK.join(' ')).update(OPTIMIZE.join(' '));
  return hash.digest('hex');
}

/** Compiles to `out` and returns its bytes. */
export function compile(out) {
  const work = mkdtempSync(join(tmpdir(), 'attention-wasm-'));
  try {
    const object = join(work, 'attention.o');
    const linked = join(work, 'attention.wasm');
    execFileSync('clang-14', [...CLANG, '-c', join(here, 'attention.c'), '-o', object], { stdio: 'inherit' });
    execFileSync('wasm-ld-14', [...LINK, object, '-o', linked], { stdio: 'inherit' });
    execFileSync('wasm-opt', [...OPTIMIZE, linked, '-o', out], { stdio: 'inherit' });
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
