// Picture chosen → overlay on screen, in the real editor (code-server + Debian's Chromium): a note
// pins a vision folder and its picture (`attention: model="…" image="…"`); the bench clicks its
// "▶ Run model" CodeLens and reads from the heads page when the model view's thumbnails, drawn as
// the picture under the class token's attention (webview/heads/grid.ts), reached the screen (the
// frame after their paint, on the page's clock, which is the machine's). Folders: the ViT-B/16- and
// DINOv2-S/14-shaped ones of bench/vision.ts (scripts/gen_vision_fixtures.py --bench). A benchmark,
// not a test: it asserts nothing. `node --import tsx bench/vision-latency.mjs [--rounds N] [--settle MS] [--case NAME]`;
// each round opens a fresh window (nothing warm from the round before).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { openFile, openWorkbench, pressCodeLens, webviewFrame } from '../test/e2e/workbench.mjs';

/* global document */

const root = join(import.meta.dirname, '..');
const OUT = join(root, 'test-output', 'vision-bench');
const argument = (flag) => (process.argv.includes(flag) ? process.argv[process.argv.indexOf(flag) + 1] : undefined);
const ROUNDS = Number(argument('--rounds') ?? 3);
/** Ms between the lens showing and the click: a fresh window is still starting (bench/model-latency.mjs says why). */
const SETTLE_MS = Number(argument('--settle') ?? 15_000);
const CASE_FILTER = argument('--case') ?? '';
const CASES = [
  { name: 'vit-b16', label: 'ViT-B/16-shaped, 224², 197 tokens' },
  { name: 'dinov2-s14', label: 'DINOv2-S/14-shaped, 518², 1370 tokens' },
];
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Click → the overlaid model view on screen, and the bytes of rows the page received for it. */
async function onScreen(folder) {
  const note = `# A picture\n<!-- attention: model="${folder}" image="${join(folder, 'picture.png')}" -->\n`;
  const workbench = await openWorkbench({ files: { 'vision-latency.md': note } });
  try {
    const { page } = workbench;
    await openFile(page, 'vision-latency.md');
    const clicked = await pressCodeLens(page, '▶ Run model', SETTLE_MS);
    const heads = await webviewFrame(page, '#grid-canvas[data-overlay="0"][data-timing]', 300_000);
    const timing = await heads.evaluate(() => JSON.parse(document.getElementById('grid-canvas').dataset.timing));
    return { ms: timing.shownAt - clicked, bytes: timing.bytes };
  } finally {
    await workbench.close();
  }
}

if (!existsSync(join(OUT, 'bench', 'dinov2-s14', 'picture.png'))) spawnSync('/usr/bin/python3', [join(root, 'scripts', 'gen_vision_fixtures.py'), OUT, '--bench'], { stdio: 'inherit' });
console.log(`${cpus()[0].model}, ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; each click ${SETTLE_MS / 1000} s after the window showed the lens`);
console.log('| case | picture chosen → overlaid model view on screen (ms, median; each round) | rows the page received |');
console.log('| --- | --- | --- |');
for (const { name, label } of CASES.filter((c) => c.name.includes(CASE_FILTER))) {
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) rounds.push(await onScreen(join(OUT, 'bench', name)));
  const ms = rounds.map((r) => Math.round(r.ms));
  console.log(`| ${label} | ${median(ms)} (${ms.join(' / ')}) | ${(rounds[0].bytes / 1024).toFixed(0)} KB |`);
}
process.exit(0);
