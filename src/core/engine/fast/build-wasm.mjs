// Regenerates attention.wasm and attention-relaxed.wasm from attention.c + kernel.h with Debian's
// clang, lld and binaryen (`apt-get install clang lld binaryen`): `npm run build:wasm`. The .wasm
// files are committed so `npm ci` alone builds the extension; attention.wasm.sources records a hash
// of the inputs and the exact commands, and test/unit/fast/wasm-build.test.ts fails when the
// sources changed without a rebuild.
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

/** The two modules: plain 128-bit SIMD, and with relaxed SIMD's fused multiply-add (attention.c's MADD). */
export const FLAVOURS = {
  'attention.wasm': { clang: [], optimize: [] },
  'attention-relaxed.wasm': { clang: ['-mrelaxed-simd', '-DRELAXED_SIMD'], optimize: ['--enable-relaxed-simd'] },
};

/**
 * clang 14 and binaryen 108 know relaxed SIMD as its draft, which numbered the fused multiply-adds
 * f32x4 0xaf and f64x2 0xcf; the standard (what V8 runs: Node 20 behind
 * --experimental-wasm-relaxed-simd, Electron and Chrome by default) has f32x4.relaxed_madd 0x105
 * and f64x2.relaxed_madd 0x107, both computing a·b + c of the operands (a, b, c) in the order
 * attention.c passes them. Each opcode is two LEB128 bytes after the 0xfd prefix either way, so
 * the rewrite is byte for byte; it must find exactly as many as binaryen counts, so no immediate
 * that happens to hold these bytes is touched.
 */
const DRAFT_TO_STANDARD = [
  [[0xfd, 0xaf, 0x01], [0xfd, 0x85, 0x02]],
  [[0xfd, 0xcf, 0x01], [0xfd, 0x87, 0x02]],
];

function standardOpcodes(bytes, expected) {
  let found = 0;
  for (let i = 0; i + 3 <= bytes.length; i++) {
    for (const [draft, standard] of DRAFT_TO_STANDARD) {
      if (bytes[i] === draft[0] && bytes[i + 1] === draft[1] && bytes[i + 2] === draft[2]) {
        bytes.set(standard, i);
        found++;
      }
    }
  }
  if (found !== expected) throw new Error(`relaxed SIMD: ${found} fused multiply-add opcodes found, binaryen counts ${expected}`);
  return bytes;
}

export function sourcesHash() {
  const hash = createHash('sha256');
  for (const name of SOURCES) hash.update(name).update(readFileSync(join(here, name)));
  hash.update(CLANG.join(' ')).update(LINK.join(' ')).update(OPTIMIZE.join(' ')).update(JSON.stringify(FLAVOURS));
  hash.update(JSON.stringify(DRAFT_TO_STANDARD));
  return hash.digest('hex');
}

/** Compiles the module `name` (a key of FLAVOURS) into the directory `dir` and returns its bytes. */
export function compile(name, dir) {
  const { clang, optimize } = FLAVOURS[name];
  const work = mkdtempSync(join(tmpdir(), 'attention-wasm-'));
  const out = join(dir, name);
  try {
    const object = join(work, 'attention.o');
    const linked = join(work, 'attention.wasm');
    execFileSync('clang-14', [...CLANG, ...clang, '-c', join(here, 'attention.c'), '-o', object], { stdio: 'inherit' });
    execFileSync('wasm-ld-14', [...LINK, object, '-o', linked], { stdio: 'inherit' });
    execFileSync('wasm-opt', [...OPTIMIZE, ...optimize, linked, '-o', out], { stdio: 'inherit' });
    if (optimize.length === 0) return readFileSync(out);
    const text = execFileSync('wasm-opt', [...OPTIMIZE, ...optimize, out, '--print'], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, stdio: ['ignore', 'pipe', 'ignore'] });
    const fused = text.match(/\.relaxed_fma\b/g)?.length ?? 0;
    const bytes = standardOpcodes(readFileSync(out), fused);
    writeFileSync(out, bytes);
    return bytes;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const name of Object.keys(FLAVOURS)) compile(name, here);
  writeFileSync(join(here, 'attention.wasm.sources'), `${sourcesHash()}\n`);
  console.log(`${Object.keys(FLAVOURS).join(' and ')} rebuilt`);
}
