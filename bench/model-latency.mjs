// What a person waits for when they run a whole model in the editor: in code-server + Debian's
// Chromium, a note pins a model folder and N token ids (`attention: model="…" ids="…"`); the bench
// clicks its "▶ Run model" CodeLens and stamps the moment the first attention map is on screen in a
// webview. The anchor, measured in the same run: Debian's PyTorch computing the same attentions in
// a fresh process (import, load the same files, forward with every attention returned), as
// bench/model_peers.py does for `npm run bench:model`, on the fastest OpenBLAS kernel
// (bench/peers.ts). Models: random-weight folders in the exact published layouts
// (scripts/gen_model_fixtures.py --bench), GPT-2-small-shaped (124M) at 128/512/1024 tokens and
// Qwen2.5-0.5B-shaped at 128/512.
// A benchmark, not a test: it asserts nothing. Usage: `npm run bench:model-latency -- [--rounds N]
// [--case TEXT] [--settle MS]`. Each round opens a fresh window (nothing warm from the round before).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { openFile, openWorkbench, pressCodeLens, webviewFrame } from '../test/e2e/workbench.mjs';
import { ensurePeers, fastestOpenBlas } from './peers.ts';

const root = join(import.meta.dirname, '..');
const benchFolders = join(root, 'test-output', 'models-bench');
const argument = (flag) => (process.argv.includes(flag) ? process.argv[process.argv.indexOf(flag) + 1] : undefined);
const ROUNDS = Number(argument('--rounds') ?? 3);
/**
 * Ms between the lens appearing and the click. A fresh window is still starting (VS Code's own
 * extensions activate, the file is indexed) and shares the 2 cores with the run: clicking at once
 * measured 4.6–9.3 s at 128 tokens, after 20 s 3.1–3.3 s. A person clicks in an editor that has
 * started; our extension is as cold either way (its worker has run nothing). --settle 0 clicks at once.
 */
const SETTLE_MS = Number(argument('--settle') ?? 15_000);
const CASE_FILTER = argument('--case') ?? '';
const CASES = [
  { model: 'gpt2-small', tokens: [128, 512, 1024] },
  { model: 'qwen2.5-0.5b', tokens: [128, 512] },
];
/** An attention map on screen: the model view's grid painted (or a step-by-step heatmap card). */
const ATTENTION_ON_SCREEN = 'section.card.heatmap, #grid-canvas[data-painted]';

/** The same deterministic ids as bench/model.ts: inside both vocabularies. */
const idsOf = (n) => Array.from({ length: n }, (_, i) => 100 + ((i * 7919) % 50000));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Click → first attention on screen, in a fresh window, ms. */
async function onScreen(folder, n) {
  const note = `# ${n} tokens\n<!-- attention: model="${folder}" ids="${idsOf(n).join(' ')}" -->\n`;
  const workbench = await openWorkbench({ files: { 'model-latency.md': note } });
  try {
    const { page } = workbench;
    await openFile(page, 'model-latency.md');
    const started = await pressCodeLens(page, '▶ Run model', SETTLE_MS);
    await webviewFrame(page, ATTENTION_ON_SCREEN, 300_000);
    return Date.now() - started;
  } finally {
    await workbench.close();
  }
}

/** PyTorch in a fresh process: total (import, load, forward) and the forward alone, ms. */
function torchAnchor(folder, n, env) {
  const out = spawnSync('/usr/bin/python3', [join(import.meta.dirname, 'model_peers.py'), 'torch', folder, idsOf(n).join(',')], { encoding: 'utf8', env, maxBuffer: 2 ** 24 });
  if (out.status !== 0) throw new Error(`model_peers.py torch failed: ${out.stderr.slice(-2000)}`);
  return JSON.parse(out.stdout.trim().split('\n').at(-1));
}

if (!existsSync(join(benchFolders, 'bench', 'qwen2.5-0.5b', 'config.json'))) {
  console.log('writing the benchmark models (scripts/gen_model_fixtures.py --bench)…');
  spawnSync('/usr/bin/python3', [join(root, 'scripts', 'gen_model_fixtures.py'), benchFolders, '--bench'], { stdio: 'inherit' });
}
ensurePeers();
const openBlas = fastestOpenBlas();
console.log(`${cpus()[0].model}, ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; each click ${SETTLE_MS / 1000} s after the window showed the lens; PyTorch on OpenBLAS's ${openBlas.name} kernel`);
console.log('model           tokens | click → attention on screen (ms, each round) | PyTorch fresh process: total  forward | screen ÷ PyTorch total');
for (const { model, tokens } of CASES) {
  for (const n of tokens) {
    if (!`${model} ${n}`.includes(CASE_FILTER)) continue;
    const folder = join(benchFolders, 'bench', model);
    const screen = [];
    const torch = [];
    for (let round = 0; round < ROUNDS; round++) {
      screen.push(await onScreen(folder, n));
      torch.push(torchAnchor(folder, n, openBlas.env));
    }
    const torchTotal = median(torch.map((t) => t.total_ms));
    const torchForward = median(torch.map((t) => t.forward_ms));
    console.log(
      `${model.padEnd(15)} ${String(n).padStart(6)} | ${median(screen)} (${screen.join(' / ')})`.padEnd(75) +
        ` | ${torchTotal.toFixed(0)}  ${torchForward.toFixed(0)} | ${(median(screen) / torchTotal).toFixed(2)}×`,
    );
  }
}
process.exit(0);
