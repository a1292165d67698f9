// `npx tsx bench/modelHost.ts [--tokens 128,512,1024] [--rounds 3]`: how long the host thread's
// event loop waits while the extension's engine worker (src/worker/main.ts, through the real
// client) prepares a model folder, runs it, opens the run as a stack and answers the model view's
// first grid: everything the host itself does for a model run, in a plain Node thread. (In
// code-server the host also does VS Code's own work: docs/models.md says what that adds.)
// GPT-2-small-shaped random weights (scripts/gen_model_fixtures.py --bench). Each round is a fresh
// worker, so each run is a first one. Prints each round's maximum and p99 wait and the idle floor
// (the same thread with no run). Asserts nothing.
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DEFAULT_THUMBNAIL_SIDE } from '../src/protocol';
import { AttentionWorker } from '../src/worker/client';

const argument = (flag: string): string | undefined => (process.argv.includes(flag) ? process.argv[process.argv.indexOf(flag) + 1] : undefined);
const TOKENS = (argument('--tokens') ?? '128,512,1024').split(',').map(Number);
const ROUNDS = Number(argument('--rounds') ?? 3);
const folder = join(__dirname, '..', 'test-output', 'models-bench', 'bench', 'gpt2-small');

async function round(tokens: number): Promise<{ max: number; p99: number; wall: number }> {
  const worker = new AttentionWorker(join(__dirname, 'latency-worker.cjs'), { maxOldGenerationSizeMb: 4096 }, () => undefined);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const started = performance.now();
  histogram.enable();
  try {
    const prepared = await worker.prepareModel(folder);
    if (prepared.error) throw new Error(prepared.error);
    const ids = Array.from({ length: tokens }, (_, i) => 100 + ((i * 7919) % 50000));
    const summary = await worker.runModel(folder, { ids }, 8 * 2 ** 30);
    const { stack, info } = await worker.modelHeads(summary.run);
    const every = (count: number) => Array.from({ length: count }, (_, i) => i);
    await worker.queryHeads(stack, { kind: 'grid', size: DEFAULT_THUMBNAIL_SIDE, mode: 'max', layers: every(info.layerCount), heads: every(info.headCount) });
    return { max: histogram.max / 1e6, p99: histogram.percentile(99) / 1e6, wall: performance.now() - started };
  } finally {
    histogram.disable();
    worker.dispose();
  }
}

async function main(): Promise<void> {
  if (!existsSync(folder)) throw new Error(`${folder} is missing: run \`npm run bench:model\` once (it writes the bench models)`);
  console.log(`host event loop while the worker prepares, runs and opens GPT-2-small-shaped (${ROUNDS} rounds, a fresh worker each); load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (const tokens of TOKENS) {
    const rounds: { max: number; p99: number; wall: number }[] = [];
    for (let k = 0; k < ROUNDS; k++) rounds.push(await round(tokens));
    const idle = monitorEventLoopDelay({ resolution: 1 });
    idle.enable();
    await new Promise((resolve) => setTimeout(resolve, rounds[0].wall));
    idle.disable();
    const shown = rounds.map((r) => `max ${r.max.toFixed(1)} / p99 ${r.p99.toFixed(1)} ms in ${(r.wall / 1000).toFixed(1)} s`).join('; ');
    console.log(`${String(tokens).padStart(5)} tokens | ${shown} | idle: max ${(idle.max / 1e6).toFixed(1)} ms`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
