// `node --experimental-wasm-relaxed-simd --import tsx bench/kernels.ts [--case mha|4096|2048|1024f64] [--output-only]
// [--builds A.wasm,B.wasm]`: the two builds of the kernels (attention.wasm, attention-relaxed.wasm;
// or any two modules given, e.g. a change's build against the committed one) on the same run, one
// core, taking turns: every phase of the fast path's plan called on this thread alone, timed in
// CPU time of this process (the compute threads are never started), which other work on a loaded
// machine inflates far less than wall time. Prints the median of each phase for each build, their
// ratio, and how far apart the two outputs are. `--output-only`: the online-softmax plan (no n×n
// matrix kept) instead of the materialised one. A profile, not a test: nothing is asserted.
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { loadavg } from 'node:os';
import { prepareRun } from '../src/core/engine/fast/index';
import { profileSpec } from './inputs';

const ROUNDS = 9;
const FAST = join(__dirname, '..', 'src', 'core', 'engine', 'fast');
const buildsFlag = process.argv.indexOf('--builds');
const BUILDS = buildsFlag === -1 ? ['attention.wasm', 'attention-relaxed.wasm'].map((file) => join(FAST, file)) : process.argv[buildsFlag + 1].split(',');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function main(): void {
  const flag = process.argv.indexOf('--case');
  const name = flag === -1 ? 'mha' : process.argv[flag + 1];
  const outputOnly = process.argv.includes('--output-only');
  const prepared = prepareRun(profileSpec(name), !outputOnly);
  if (!prepared) throw new Error('the fast path does not plan this case');
  const { plan, arena } = prepared;
  const builds = BUILDS.map((file) => {
    const bytes = readFileSync(file);
    if (!WebAssembly.validate(bytes)) throw new Error(`${file} does not validate here (Node 20: --experimental-wasm-relaxed-simd)`);
    const exports = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory: arena.memory } }).exports;
    return { file, kernels: exports as Record<string, (...args: number[]) => void>, phases: plan.phases.map((): number[] => []) };
  });
  const outputs: Float64Array[] = [];
  for (let round = 0; round < ROUNDS + 1; round++) {
    for (let b = 0; b < builds.length; b++) {
      const build = builds[(round + b) % builds.length];
      plan.phases.forEach((phase, p) => {
        const started = cpuMs();
        for (const { kernel, args } of phase) build.kernels[kernel](...args, 0, 1, 0);
        if (round > 0) build.phases[p].push(cpuMs() - started); // round 0: V8 tiers up
      });
      if (round === ROUNDS) outputs[(round + b) % builds.length] = Float64Array.from(arena.view(plan.output).data);
    }
  }
  let diff = 0;
  let largest = 0;
  for (let i = 0; i < outputs[0].length; i++) {
    diff = Math.max(diff, Math.abs(outputs[0][i] - outputs[1][i]));
    largest = Math.max(largest, Math.abs(outputs[0][i]));
  }
  console.log(`${name}${outputOnly ? ', output only' : ''}: one core, CPU ms, medians of ${ROUNDS} alternating rounds; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`phase | ${BUILDS.map((file) => basename(file)).join(' | ')} | ratio`);
  const total = builds.map(() => 0);
  plan.phases.forEach((phase, p) => {
    const kernels = [...new Set(phase.map((call) => call.kernel))].join(' + ');
    const ms = builds.map((build) => median(build.phases[p]));
    ms.forEach((m, b) => (total[b] += m));
    console.log(`${p + 1}: ${kernels} | ${ms.map((m) => m.toFixed(2)).join(' | ')} | ${(ms[1] / ms[0]).toFixed(3)}`);
  });
  console.log(`in all | ${total.map((m) => m.toFixed(2)).join(' | ')} | ${(total[1] / total[0]).toFixed(3)}`);
  console.log(`outputs differ by at most ${diff.toExponential(2)} (largest |value| ${largest.toFixed(3)})`);
}

main();
