// `npx tsx bench/modelGrid.ts [--tokens 512,1024] [--rounds 3] [--model DIR]`: what the model view
// costs after a whole-model run. Per round, in one process: the forward (which pools every head
// at the model view's opening size as it attends), then the opening grid drawn from those kept
// thumbnails, then the same grid pooled from every head recomputed in full (the path a grid of
// another size takes, and the only one before the forward pooled); then the head scores and
// rollout of every head (analyseStack: a layer's heads recomputed a group at a time on the compute
// threads) and the same from heads recomputed one by one; then the run compared with itself
// (the divergence of every head: both runs' heads recomputed, a layer of each at once, or one by
// one; the numbers are zeros, the cost is a comparison's). CPU time of the process (all
// threads) and wall time, medians, and the process's peak RSS; the load average is printed with
// them. The 2048-token line: --model test-output/models-bench/bench/gpt2-small-2048 (written by
// gen_model_fixtures.py --long) --tokens 2048 --rounds 1 --kept-only. Not a test.
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { analyseStack } from '../src/core/heads/analysis';
import { divergences } from '../src/core/heads/divergence';
import { poolGrid } from '../src/core/heads/pool';
import { runModel } from '../src/core/model/run';
import { folderFiles } from '../src/node/modelFiles';
import { DEFAULT_THUMBNAIL_SIDE } from '../src/protocol';

const argument = (flag: string): string | undefined => (process.argv.includes(flag) ? process.argv[process.argv.indexOf(flag) + 1] : undefined);
const folder = argument('--model') ?? join(__dirname, '..', 'test-output', 'models-bench', 'bench', 'gpt2-small');
const TOKENS = (argument('--tokens') ?? '512,1024').split(',').map(Number);
const ROUNDS = Number(argument('--rounds') ?? 3);
/** Skips the recomputed grid (the 2048-token line: minutes of CPU on 2 cores, nothing new to learn). */
const KEPT_ONLY = process.argv.includes('--kept-only');

/** Deterministic token ids inside GPT-2's vocabulary (as bench/model.ts). */
const idsOf = (n: number): number[] => Array.from({ length: n }, (_, i) => 100 + ((i * 7919) % 50000));

async function timed<T>(work: () => T | Promise<T>): Promise<{ value: T; cpuMs: number; wallMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await work();
  const used = process.cpuUsage(cpu);
  return { value, cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - started };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  if (!existsSync(join(folder, 'config.json'))) throw new Error(`${folder} has no config.json: write it with scripts/gen_model_fixtures.py test-output/models-bench --bench (or --long)`);
  const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log(`${folder}; grid of every layer × head at ${DEFAULT_THUMBNAIL_SIDE} px, max; CPU ms (wall ms), median of ${ROUNDS}`);
  for (const n of TOKENS) {
    const names = ['forward', 'kept', 'recomputed', 'scores', 'scoresHeadByHead', 'compared', 'comparedHeadByHead'] as const;
    const rows = Object.fromEntries(names.map((name) => [name, { cpu: [] as number[], wall: [] as number[] }])) as Record<(typeof names)[number], { cpu: number[]; wall: number[] }>;
    for (let round = 0; round < ROUNDS; round++) {
      const run = await timed(() => runModel(folderFiles(folder), { ids: idsOf(n) }));
      const layers = Array.from({ length: run.value.layerCount }, (_, i) => i);
      const heads = Array.from({ length: run.value.headCount }, (_, i) => i);
      const kept = await timed(() => poolGrid(run.value, DEFAULT_THUMBNAIL_SIDE, 'max', layers, heads));
      const recomputed = KEPT_ONLY ? { cpuMs: NaN, wallMs: NaN } : await timed(() => poolGrid({ ...run.value, pooled: undefined }, DEFAULT_THUMBNAIL_SIDE, 'max', layers, heads));
      const scores = await timed(() => analyseStack(run.value));
      const scoresHeadByHead = KEPT_ONLY ? { cpuMs: NaN, wallMs: NaN } : await timed(() => analyseStack({ ...run.value, headGroups: undefined }));
      const compared = await timed(() => divergences(run.value, run.value));
      const headByHead = { ...run.value, headGroups: undefined };
      const comparedHeadByHead = KEPT_ONLY ? { cpuMs: NaN, wallMs: NaN } : await timed(() => divergences(headByHead, headByHead));
      for (const [name, t] of [['forward', run], ['kept', kept], ['recomputed', recomputed], ['scores', scores], ['scoresHeadByHead', scoresHeadByHead], ['compared', compared], ['comparedHeadByHead', comparedHeadByHead]] as const) {
        rows[name].cpu.push(t.cpuMs);
        rows[name].wall.push(t.wallMs);
      }
    }
    const f = (name: keyof typeof rows) => `${median(rows[name].cpu).toFixed(0)} (${median(rows[name].wall).toFixed(0)})`;
    console.log(`${n} tokens | run (load + forward + pooling): ${f('forward')} | grid from the kept thumbnails: ${f('kept')} | grid from every head recomputed: ${f('recomputed')} | scores + rollout: ${f('scores')}, heads one by one: ${f('scoresHeadByHead')} | compared: ${f('compared')}, heads one by one: ${f('comparedHeadByHead')} | peak RSS so far ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB | load average ${load()}`);
  }
}

void main().then(() => process.exit(0));
