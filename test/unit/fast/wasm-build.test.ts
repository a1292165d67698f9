// attention.wasm is committed (CI builds from `npm ci` alone); this fails when attention.c or
// kernel.h changed without `npm run build:wasm`, and, where clang, lld and binaryen are installed, rebuilds it
// and requires the same bytes.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const FAST = join(__dirname, '..', '..', '..', 'src', 'core', 'engine', 'fast');

interface WasmBuild {
  sourcesHash(): string;
  compile(out: string): Buffer;
}
const build = import(join(FAST, 'build-wasm.mjs')) as Promise<WasmBuild>;

function hasToolchain(): boolean {
  try {
    execFileSync('clang-14', ['--version'], { stdio: 'ignore' });
    execFileSync('wasm-ld-14', ['--version'], { stdio: 'ignore' });
    execFileSync('wasm-opt', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('attention.wasm is built from its sources', () => {
  it('records the hash of the current attention.c and kernel.h', async () => {
    const recorded = readFileSync(join(FAST, 'attention.wasm.sources'), 'utf8').trim();
    assert.equal(recorded, (await build).sourcesHash(), 'sources changed: run npm run build:wasm');
  });

  it('rebuilds to the same bytes (where clang, lld and binaryen are installed)', async function () {
    if (!hasToolchain()) this.skip();
    const dir = mkdtempSync(join(tmpdir(), 'attention-wasm-test-'));
    try {
      const rebuilt = (await build).compile(join(dir, 'attention.wasm'));
      assert.ok(rebuilt.equals(readFileSync(join(FAST, 'attention.wasm'))), 'attention.wasm is stale: run npm run build:wasm');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exports every kernel in both precisions and imports only a shared memory', () => {
    const module = new WebAssembly.Module(readFileSync(join(FAST, 'attention.wasm')));
    const exports = WebAssembly.Module.exports(module).map((e) => e.name).sort();
    const kernels = ['attention', 'copy2d', 'flash', 'gemm', 'pack', 'pack_rows', 'pool_max'];
    assert.deepEqual(exports, kernels.flatMap((k) => [`${k}_f32`, `${k}_f64`]).sort());
    assert.deepEqual(WebAssembly.Module.imports(module), [{ module: 'env', name: 'memory', kind: 'memory' }]);
  });
});
