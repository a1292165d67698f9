// The CLI as users run it, for tests that spawn it: bundled by esbuild into DIR/dist/cli.js with
// the fast path's files beside it and the native backend's package reachable (as a platform .vsix
// carries it), onnxruntime-node left external as esbuild.mjs leaves it.
import { copyFileSync, existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { strict as assert } from 'node:assert';
import { buildSync } from 'esbuild';

const root = join(__dirname, '..', '..', '..');

/** Bundles the CLI into `dir`; returns the bundle's path. */
export function bundleCli(dir: string): string {
  const bundle = join(dir, 'dist', 'cli.js');
  buildSync({ entryPoints: [join(root, 'src', 'cli', 'main.ts')], outfile: bundle, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'silent', external: ['onnxruntime-node'] });
  for (const file of ['attention.wasm', 'attention-relaxed.wasm', 'fast-thread.js']) copyFileSync(join(root, 'src', 'core', 'engine', 'fast', file), join(dir, 'dist', file));
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  return bundle;
}

/** A CLI run that failed as bad input must: exit 1, one line on stderr matching `message`, no stack trace. */
export function assertOneLine(run: { status: number | null; stdout: string; stderr: string }, message: RegExp): void {
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, message);
  assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  assert.doesNotMatch(run.stderr, /\n\s+at /);
}
