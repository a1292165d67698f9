// One build script, the bundles: the extension host (node/cjs, `vscode` external), the worker
// thread, the CLI, and the panel's browser code twice — for the webview in parts (dist/panel/: a
// small first-paint script; plotly and the toolkit loaded after the first paint) and as one file
// for the standalone HTML report, which inlines it (dist/webview.js). `--production` minifies and
// drops source maps; `--watch` rebuilds on change.
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

// onnxruntime-node loads its platform's binaries by a path computed at run time: it stays a
// package of its own (the platform .vsix files carry it in node_modules/, scripts/package.mjs).
const node = { ...common, platform: 'node', format: 'cjs', target: 'node20', loader: { '.ipynb': 'text' }, external: ['onnxruntime-node'] };
const browser = { ...common, platform: 'browser', format: 'esm', target: 'es2022' };

const builds = [
  { ...node, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode', 'onnxruntime-node'] },
  { ...node, entryPoints: ['src/worker/main.ts'], outfile: 'dist/worker.js' },
  {
    ...node,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    banner: { js: '#!/usr/bin/env node' },
  },
  // The webview's first-paint code, inlined into its page (src/panel/session.ts), and the toolkit
  // it loads after the first paint as a classic script (plotly's own minified file is copied).
  { ...browser, format: 'iife', entryPoints: ['webview/main.ts'], outfile: 'dist/panel/main.js' },
  { ...browser, format: 'iife', entryPoints: ['webview/toolkitElements.ts'], outfile: 'dist/panel/toolkit.js' },
  // Everything in one file, for the standalone report that inlines it.
  { ...browser, entryPoints: ['webview/report.ts'], outfile: 'dist/webview.js' },
  { ...browser, entryPoints: ['webview/tensorFile.ts'], outfile: 'dist/tensorFile.js' },
  { ...browser, entryPoints: ['webview/heads/main.ts'], outfile: 'dist/heads.js' },
];

// The fast engine's WebAssembly kernels and their thread script are loaded from next to the
// bundle at run time (src/core/engine/fast/pool.ts), not bundled.
mkdirSync('dist', { recursive: true });
mkdirSync('dist/panel', { recursive: true });
cpSync('node_modules/plotly.js-dist-min/plotly.min.js', 'dist/panel/plotly.min.js');
cpSync('media/heads.css', 'dist/heads.css');
for (const file of ['attention.wasm', 'attention-relaxed.wasm', 'fast-thread.js']) cpSync(`src/core/engine/fast/${file}`, `dist/${file}`);

if (watch) {
  const contexts = await Promise.all(builds.map((options) => esbuild.context(options)));
  await Promise.all(contexts.map((context) => context.watch()));
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
