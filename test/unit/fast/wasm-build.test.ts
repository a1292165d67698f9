// attention.wasm and attention-relaxed.wasm are committed (CI builds from `npm ci` alone); this
// fails when attention.c or kernel.h changed without `npm run build:wasm`, and, where clang, lld
// and binaryen are installed, rebuilds them and requires the same bytes.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { skipBecause } from '../../skip';

const FAST = join(__dirname, '..', '..', '..', 'src', 'core', 'engine', 'fast');
const MODULES = ['attention.wasm', 'attention-relaxed.wasm'];

interface WasmBuild {
  FLAVOURS: Record<string, unknown>;
  sourcesHash(): string;
  compile(name: string, dir: string): Buffer;
}
const build = import(join(FAST, 'build-wasm.mjs')) as Promise<WasmBuild>;

/** The tools of the build that are not installed (scripts/test-all.mjs installs them on Debian). */
function missingTools(): string[] {
  return ['clang-14', 'wasm-ld-14', 'wasm-opt'].filter((tool) => {
    try {
      execFileSync(tool, ['--version'], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
}

describe('attention.wasm and attention-relaxed.wasm are built from their sources', () => {
  it('records the hash of the current attention.c and kernel.h', async () => {
    const recorded = readFileSync(join(FAST, 'attention.wasm.sources'), 'utf8').trim();
    assert.equal(recorded, (await build).sourcesHash(), 'sources changed: run npm run build:wasm');
  });

  it('rebuilds to the same bytes (where clang, lld and binaryen are installed)', async function () {
    const missing = missingTools();
    if (missing.length > 0) skipBecause(this, `${missing.join(', ')} not installed (Debian: apt-get install clang-14 lld-14 binaryen)`);
    const dir = mkdtempSync(join(tmpdir(), 'attention-wasm-test-'));
    try {
      const { FLAVOURS, compile } = await build;
      assert.deepEqual(Object.keys(FLAVOURS), MODULES);
      for (const name of MODULES) {
        assert.ok(compile(name, dir).equals(readFileSync(join(FAST, name))), `${name} is stale: run npm run build:wasm`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exports every kernel in both precisions and imports only a shared memory', () => {
    const module = new WebAssembly.Module(readFileSync(join(FAST, 'attention.wasm')));
    const exports = WebAssembly.Module.exports(module).map((e) => e.name).sort();
    const kernels = ['attention', 'copy2d', 'flash', 'gemm', 'head_divergence', 'head_rows', 'pack', 'pack_rows', 'pool_max', 'rollout_product', 'rollout_residual'];
    assert.deepEqual(exports, kernels.flatMap((k) => [`${k}_f32`, `${k}_f64`]).sort());
    assert.deepEqual(WebAssembly.Module.imports(module), [{ module: 'env', name: 'memory', kind: 'memory' }]);
  });

  it('builds the relaxed module with the standard fused multiply-add opcodes, the same kernels', function () {
    // Validated in a child started with the flag Node 20 needs (on by default in later engines).
    const check = `const m = new WebAssembly.Module(require('fs').readFileSync(${JSON.stringify(join(FAST, 'attention-relaxed.wasm'))}));
      process.stdout.write(JSON.stringify([WebAssembly.Module.exports(m), WebAssembly.Module.imports(m)]))`;
    const [exports, imports] = JSON.parse(execFileSync(process.execPath, ['--experimental-wasm-relaxed-simd', '-e', check], { encoding: 'utf8' })) as unknown[];
    const plain = new WebAssembly.Module(readFileSync(join(FAST, 'attention.wasm')));
    assert.deepEqual(exports, WebAssembly.Module.exports(plain));
    assert.deepEqual(imports, WebAssembly.Module.imports(plain));
  });
});
