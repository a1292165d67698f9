// `npm start`: build, then serve VS Code (code-server) on 127.0.0.1 with this extension loaded
// and examples/ open — the way to try Attention Lens with nothing but this repository and a
// browser. Runs until Ctrl-C. ATTENTION_LENS_PORT picks the port (default: a free one).
import { existsSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { freePort, startCodeServer, workbenchUrl } from './lib/code-server.mjs';
import { ensureDebianPackages, runOrThrow } from './lib/system.mjs';

const repoRoot = resolve(dirname(new URL(import.meta.url).pathname), '..');
const examples = join(repoRoot, 'examples');

runOrThrow(process.execPath, ['esbuild.mjs'], { cwd: repoRoot });
// examples/20-model.md runs random-weight model folders that are written here, not committed
// (~30 MB); written aside and moved in whole, so an interrupted start writes them again next time.
const models = join(examples, 'models');
if (!existsSync(models)) {
  ensureDebianPackages(['python3-torch']);
  rmSync(`${models}.partial`, { recursive: true, force: true });
  runOrThrow('/usr/bin/python3', [join(repoRoot, 'scripts', 'gen_model_fixtures.py'), `${models}.partial`, '--examples']);
  renameSync(`${models}.partial`, models);
}
const port = Number(process.env.ATTENTION_LENS_PORT ?? (await freePort()));
const server = await startCodeServer({
  folder: examples,
  port,
  log: (line) => console.log(`[code-server] ${line}`),
});
console.log('\nAttention Lens is running in VS Code (code-server). Open this URL in a browser:\n');
console.log(`  ${workbenchUrl({ ...server, folder: examples, extensionPath: repoRoot })}\n`);
console.log('Reload the page after `npm run build` (or keep `npm run watch` running) to load changes. Ctrl-C stops.');
// Stay up until a signal; system.mjs stops code-server on the way out.
setInterval(() => {}, 1 << 30);
