// Vision models against PyTorch in the same run (issue 44's bench lines): a ViT-B/16-shaped folder
// (86M, 224², 197 tokens) and a DINOv2-S/14-shaped one run at 518² (1370 tokens), random weights
// (scripts/gen_vision_fixtures.py --bench), each on its picture: our whole run (decode, PIL-style
// preprocessing, patches, every layer with every head's weights pooled for the views) against
// PyTorch's float32 forward of the same folder and picture (the fixture script's forward written
// from transformers' modeling files, its attentions materialised as transformers' eager path
// does), PyTorch on the fastest OpenBLAS kernel (bench/peers.ts).
//
//     npx tsx bench/vision.ts [--rounds N]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { makeDeferredSessions } from '../src/core/engine/native/linear';
import { runModel } from '../src/core/model/run';
import { folderFiles } from '../src/node/modelFiles';
import { ensurePeers, fastestOpenBlas } from './peers';

const ROOT = join(__dirname, '..');
const OUT = join(ROOT, 'test-output', 'vision-bench');
const SCRIPT = join(ROOT, 'scripts', 'gen_vision_fixtures.py');
const CASES = [
  { name: 'vit-b16', label: 'ViT-B/16-shaped, 224², 197 tokens' },
  { name: 'dinov2-s14', label: 'DINOv2-S/14-shaped, 518², 1370 tokens' },
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const at = process.argv.indexOf('--rounds');
  const rounds = at > 0 ? Number(process.argv[at + 1]) : 3;
  ensurePeers();
  const blas = fastestOpenBlas();
  if (!existsSync(join(OUT, 'bench', 'dinov2-s14', 'picture.png'))) spawnSync('/usr/bin/python3', [SCRIPT, OUT, '--bench'], { stdio: 'inherit' });
  console.log(`${cpus()[0].model}, ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} (timings under load vary several-fold)`);
  console.log(`PyTorch on OpenBLAS's ${blas.name} kernel (${blas.gflops.toFixed(0)} GFLOP/s on a 1024² product); ${rounds} rounds each, medians`);
  console.log('| case | ours: first run / sessions made after it / later runs (ms) | PyTorch forward (ms) | ours ÷ PyTorch (later runs) | hidden_last[0] ours / PyTorch |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const { name, label } of CASES) {
    const folder = join(OUT, 'bench', name);
    const bytes = readFileSync(join(folder, 'picture.png'));
    const ours: number[] = [];
    let hidden = 0;
    let packMs = 0;
    for (let round = 0; round < rounds; round++) {
      const started = performance.now();
      const run = await runModel(folderFiles(folder), { image: { name: 'picture.png', bytes } });
      ours.push(performance.now() - started);
      hidden = run.hiddenLast[0];
      // What the idle time after a first run does in the editor: the sessions of the weights it fed are made.
      if (round === 0) {
        const packing = performance.now();
        await makeDeferredSessions();
        packMs = performance.now() - packing;
      }
    }
    const peer = spawnSync('/usr/bin/python3', [SCRIPT, folder, '--time', String(rounds)], { encoding: 'utf8', env: blas.env });
    if (peer.status !== 0) throw new Error(`PyTorch's forward failed: ${peer.stderr}`);
    const torch = JSON.parse(peer.stdout) as { forward_ms: number[]; hidden_last: number[] };
    const later = median(ours.slice(1).length ? ours.slice(1) : ours);
    const theirs = median(torch.forward_ms);
    console.log(`| ${label} | ${ours[0].toFixed(0)} / ${packMs.toFixed(0)} / ${later.toFixed(0)} | ${theirs.toFixed(0)} | ${(later / theirs).toFixed(2)}× | ${hidden.toFixed(4)} / ${torch.hidden_last[0].toFixed(4)} |`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
