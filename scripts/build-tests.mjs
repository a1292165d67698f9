// Bundles the integration suite for the extension host: test/integration/index.ts (mocha's
// entry, `run()`) and every test/integration/*.test.ts, each to out/test/integration/*.js.
// `vscode` is provided by the host; mocha is loaded from node_modules at run time.
import * as esbuild from 'esbuild';
import { rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';

const sourceDir = 'test/integration';
const outDir = 'out/test/integration';

const tests = (await readdir(sourceDir)).filter((name) => name.endsWith('.test.ts'));
rmSync(outDir, { recursive: true, force: true });
await esbuild.build({
  entryPoints: [`${sourceDir}/index.ts`, ...tests.map((name) => `${sourceDir}/${name}`)],
  outdir: outDir,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'linked',
  external: ['vscode', 'mocha', 'onnxruntime-node'],
  // As in esbuild.mjs: the extension bundles its example notebook as text.
  loader: { '.ipynb': 'text' },
  logLevel: 'warning',
});
console.log(`built ${tests.length} integration test file(s) into ${outDir}`);
