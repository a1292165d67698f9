// One build script, the bundles: the extension host (node/cjs, `vscode` external), the worker
// thread, the CLI, and the panel's browser code twice — split for the webview (dist/panel/: a
// small first-paint entry; plotly and the toolkit in chunks it imports after the first paint) and
// as one file for the standalone HTML report, which inlines it (dist/webview.js). `--production`
// minifies and drops source maps; `--watch` rebuilds on change.
import * as esbuild from 'esbuild';
import { cpSync, mkdirSync, rmSync } from 'node:fs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = {
  bundle: true,
  minify: production,
  sourcemap: production ? false : 'linked',
  logLevel: 'info',
  legalComments: 'none',
};

const node = { ...common, platform: 'node', format: 'cjs', target: 'node20' };
const browser = { ...common, platform: 'browser', format: 'esm', target: 'es2022' };

const builds = [
  { ...node, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] },
  { ...node, entryPoints: ['src/worker/main.ts'], outfile: 'dist/worker.js' },
  {
    ...node,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    banner: { js: '#!/usr/bin/env node' },
  },
  { ...browser, entryPoints: ['webview/main.ts'], outfile: 'dist/webview.js' },
  { ...browser, entryPoints: { main: 'webview/main.ts' }, outdir: 'dist/panel', splitting: true, chunkNames: '[name]-[hash]' },
];

// The fast engine's WebAssembly kernels and their thread script are loaded from next to the
// bundle at run time (src/core/engine/fast/pool.ts), not bundled.
mkdirSync('dist', { recursive: true });
// Chunk names carry a content hash: drop the last build's, or dist/ (and the .vsix) keeps them all.
rmSync('dist/panel', { recursive: true, force: true });
for (const file of ['attention.wasm', 'fast-thread.js']) cpSync(`src/core/engine/fast/${file}`, `dist/${file}`);

if (watch) {
  const contexts = await Promise.all(builds.map((options) => esbuild.context(options)));
  await Promise.all(contexts.map((context) => context.watch()));
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
