// `node bench/debugEditor.mjs`: builds the extension and bench/debugEditor.ts, then runs that file
// inside code-server's extension host (as the integration tests run) with the test-only debugpy
// adapter installed, and prints its JSON line.
import * as esbuild from 'esbuild';
import { join } from 'node:path';
import { runOrThrow } from '../scripts/lib/system.mjs';
import { packTestExtension, runInCodeServer } from '../test/runner/code-server-host.mjs';
import { paths } from '../test/runner/paths.mjs';

const outFile = join(paths.repoRoot, 'out', 'bench', 'debugEditor.js');
runOrThrow(process.execPath, ['esbuild.mjs'], { cwd: paths.repoRoot, stdio: 'ignore' });
await esbuild.build({ entryPoints: [join(paths.repoRoot, 'bench', 'debugEditor.ts')], outfile: outFile, bundle: true, platform: 'node', format: 'cjs', target: 'node20', external: ['vscode'], logLevel: 'warning' });
const code = await runInCodeServer({
  timeoutMs: 600_000,
  testsPath: outFile,
  vsixFiles: paths.testExtensions.map(packTestExtension),
  onLine: (line) => {
    if (line.startsWith('debug read bench:') || /error/i.test(line)) console.log(line);
  },
});
process.exit(code);
