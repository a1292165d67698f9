// `tsx bench/phases.ts [--case mha|4096|2048|1024f64]`: where a fast run's time goes. Runs the fast path's
// phases one at a time on the same memory (reused, as a repeated run would) and prints the median
// of each: the JavaScript planning the run and writing its inputs (`prepareRun`), then every phase
// of kernel calls (plan.ts) on all threads. For the mha case the phases are: X packed into row
// quads and the weights into column panels, X·W_Q/K/V, Q packed and K and V into panels, the
// heads' fused attention, concat (and its packing for W_O), concat·W_O. A profile, not a test:
// nothing is asserted.
import { prepareRun } from '../src/core/engine/fast/index';
import { threadPool } from '../src/core/engine/fast/pool';
import { profileSpec } from './inputs';

const ROUNDS = 15;
const WARM_UP = 3;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  const flag = process.argv.indexOf('--case');
  const name = flag === -1 ? 'mha' : process.argv[flag + 1];
  const spec = profileSpec(name);
  const pool = threadPool();
  let prepared = prepareRun(spec, true);
  if (!prepared) throw new Error('the fast path does not plan this case');
  const { plan } = prepared;
  const writes: number[] = [];
  const phases: number[][] = plan.phases.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    let started = performance.now();
    prepared = prepareRun(spec, true, { recycle: { output: prepared.arena.view(plan.output) } }) ?? prepared;
    const { arena } = prepared;
    if (round >= WARM_UP) writes.push(performance.now() - started);
    for (const [p, phase] of prepared.plan.phases.entries()) {
      started = performance.now();
      await pool.run(arena.memory, [phase]);
      if (round >= WARM_UP) phases[p].push(performance.now() - started);
    }
  }
  const label = (p: number): string => {
    const kernels = plan.phases[p].map((call) => call.kernel);
    return `phase ${p + 1}: ${[...new Set(kernels)].join(' + ')} (${kernels.length} call${kernels.length === 1 ? '' : 's'})`;
  };
  const rows: [string, number][] = [['planned, inputs written (JavaScript)', median(writes)], ...phases.map((times, p): [string, number] => [label(p), median(times)])];
  console.log(`${name}: medians of ${ROUNDS - WARM_UP} rounds, ${pool.size} threads`);
  for (const [label, ms] of rows) console.log(`${ms.toFixed(2).padStart(8)} ms  ${label}`);
  console.log(`${rows.reduce((sum, [, ms]) => sum + ms, 0).toFixed(2).padStart(8)} ms  in all`);
}

void main().then(() => process.exit(0));
