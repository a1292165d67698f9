// One build script, four bundles: the extension host (node/cjs, `vscode` external), the
// worker thread, the panel's browser code and the CLI. `--production` minifies and drops
// source maps; `--watch` rebuilds on change.
import * as esbuild from 'esbuild';
import { cpSync, mkdirSync } from 'node:fs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = {
  bundle: true,
  minify: production,
  sourcemap: production ? false : 'linked',
  logLevel: 'info',
  legalComments: 'none',
};

const node = { ...common, platform: 'node', format: 'cjs', target: 'node20', loader: { '.ipynb': 'text' } };

const builds = [
  { ...node, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] },
  { ...node, entryPoints: ['src/worker/main.ts'], outfile: 'dist/worker.js' },
  {
    ...node,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    ...common,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    entryPoints: ['webview/main.ts'],
    outfile: 'dist/webview.js',
  },
  { ...common, platform: 'browser', format: 'esm', target: 'es2022', entryPoints: ['webview/tensorFile.ts'], outfile: 'dist/tensorFile.js' },
];

// The fast engine's WebAssembly kernels and their thread script are loaded from next to the
// bundle at run time (src/core/engine/fast/pool.ts), not bundled.
mkdirSync('dist', { recursive: true });
for (const file of ['attention.wasm', 'attention-relaxed.wasm', 'fast-thread.js']) cpSync(`src/core/engine/fast/${file}`, `dist/${file}`);

if (watch) {
  const contexts = await Promise.all(builds.map((options) => esbuild.context(options)));
  await Promise.all(contexts.map((context) => context.watch()));
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
