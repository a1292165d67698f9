// `npx tsx bench/heads-analysis.ts [--tokens 1024] [--layers 12] [--heads 12] [--rounds 3]`: the
// head analyses on a worker thread, as the extension's worker runs them (its kernels on the fast
// path's compute threads, one per core). A synthetic stack of causal float32 attention (seeded
// random rows, ids that repeat) is built on the thread first; then each round times analyseStack
// (all six scores for every head and the rollout) three times, alternating: as a causal model's run
// gives the heads (lower triangular by construction), as a saved file's reading gives them (one
// [layers, heads, n, n] tensor through savedStack, which finds them lower triangular as it checks
// the rows), and as a stack that says nothing of them (every weight is read, to find where each
// row ends). The kernels read only the lower triangles of the first two. Wall time, and the CPU
// time of the whole process (every thread). The first round also starts the compute threads.
// Attention flow is timed at the sizes around its limit (FLOW_MAX_WORK).
// Then the comparison of two runs: the per-head divergences of that stack against itself with its
// heads rotated by one (B, no more memory), by the WebAssembly kernel and by the definition as a
// scalar loop (what compare.ts ran before the kernel: the baseline), interleaved round by round,
// with their CPU times' ratio and largest difference.
// Prints the times; asserts nothing (issue 27's target: scores and rollout ≤ 200 ms).
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { analyseStack, headMeans } from '../src/core/heads/analysis';
import { grid } from '../src/core/heads/compare';
import { divergences } from '../src/core/heads/divergence';
import { attentionFlow, FLOW_MAX_WORK, flowRefusal } from '../src/core/heads/flow';
import { savedStack } from '../src/core/heads/saved';
import type { AttentionStack } from '../src/core/heads/stack';
import { kernelsFlavour, threadCount } from '../src/core/engine/fast/pool';

interface Sizes {
  tokens: number;
  layers: number;
  heads: number;
  rounds: number;
}

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

/** Causal rows of softmax(random scores), float32, seeded per head. */
function syntheticStack(layers: number, heads: number, n: number, causal: boolean): AttentionStack {
  let state = 27;
  const random = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const maps = Array.from({ length: layers * heads }, () => {
    const map = new Float32Array(n * n);
    for (let i = 0; i < n; i++) {
      const last = causal ? i : n - 1;
      let sum = 0;
      for (let j = 0; j <= last; j++) sum += map[i * n + j] = Math.exp(4 * random());
      for (let j = 0; j <= last; j++) map[i * n + j] /= sum;
    }
    return map;
  });
  const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
  return {
    source: { kind: 'saved', file: 'synthetic' },
    tokens,
    keyTokens: tokens,
    tokenIds: Array.from({ length: n }, (_, i) => i % 97),
    layerCount: layers,
    headCount: heads,
    queryCount: n,
    keyCount: n,
    weights: (layer, head) => maps[layer * heads + head],
  };
}

/** Every head of `stack` in one array [layers, heads, q, k], as a saved file holds them. */
function allHeads(stack: AttentionStack): Float32Array {
  const size = stack.queryCount * stack.keyCount;
  const all = new Float32Array(stack.layerCount * stack.headCount * size);
  for (let layer = 0; layer < stack.layerCount; layer++) {
    for (let head = 0; head < stack.headCount; head++) all.set(stack.weights(layer, head), (layer * stack.headCount + head) * size);
  }
  return all;
}

/** The same stack with head k answering as head k + 1 (the last as the first). */
function rotated(stack: AttentionStack): AttentionStack {
  const count = stack.layerCount * stack.headCount;
  const next = (layer: number, head: number) => (layer * stack.headCount + head + 1) % count;
  return { ...stack, weights: (layer, head) => stack.weights(Math.floor(next(layer, head) / stack.headCount), next(layer, head) % stack.headCount) };
}

/** The baseline: mean over rows of ½Σ a·ln(a/m) + b·ln(b/m), element by element with Math.log. */
function scalarDivergences(a: AttentionStack, b: AttentionStack): number[][] {
  const { queryCount: queries, keyCount: keys } = a;
  return grid(a.layerCount, a.headCount, (layer, head) => {
    const x = a.weights(layer, head);
    const y = b.weights(layer, head);
    let total = 0;
    for (let k = 0; k < queries * keys; k++) {
      const m = (x[k] + y[k]) / 2;
      if (x[k] > 0) total += x[k] * Math.log(x[k] / m);
      if (y[k] > 0) total += y[k] * Math.log(y[k] / m);
    }
    return total / 2 / queries;
  });
}

/** CPU milliseconds per thread of the process, by thread id (Linux's /proc, 10 ms ticks; empty elsewhere). */
function threadTimes(): Map<string, number> {
  const times = new Map<string, number>();
  try {
    for (const id of readdirSync('/proc/self/task')) {
      // Fields after the parenthesised name: state is the 1st, utime and stime the 12th and 13th.
      const fields = readFileSync(`/proc/self/task/${id}/stat`, 'utf8').split(') ')[1].split(' ');
      times.set(id, (Number(fields[11]) + Number(fields[12])) * 10);
    }
  } catch {
    // not Linux, or a thread ended while it was read: no per-thread figures
  }
  return times;
}

/**
 * Wall milliseconds of `run`, the CPU milliseconds of every thread of the process, the busiest
 * thread's (what the wall time would be with a core per thread, the work spread as now), and what
 * `run` returned. On a shared machine the wall time is mostly waiting for a core.
 */
async function timed<T>(run: () => T | Promise<T>): Promise<{ wall: number; cpu: number; busiest: number; result: T }> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const before = threadTimes();
  const result = await run();
  const { user, system } = process.cpuUsage(cpu);
  const busiest = Math.max(0, ...[...threadTimes()].map(([id, time]) => time - (before.get(id) ?? 0)));
  return { wall: performance.now() - started, cpu: (user + system) / 1000, busiest, result };
}

const figures = ({ wall, cpu, busiest }: { wall: number; cpu: number; busiest: number }) => `${wall.toFixed(0)} ms (CPU ${cpu.toFixed(0)} ms, busiest thread ${busiest.toFixed(0)} ms)`;

async function onThread({ tokens, layers, heads, rounds }: Sizes): Promise<void> {
  const stack = syntheticStack(layers, heads, tokens, true);
  const kinds = {
    model: { ...stack, lowerTriangular: true },
    saved: savedStack({ file: 'synthetic.npy', content: { format: 'npy', tensors: [{ key: 'array', dtype: 'float32', shape: [layers, heads, tokens, tokens], data: allHeads(stack) }] } }).stack,
    unknown: stack,
  };
  if (!kinds.saved.lowerTriangular) throw new Error('the saved stack should have been found lower triangular');
  const times: Record<keyof typeof kinds, string[]> = { model: [], saved: [], unknown: [] };
  for (let round = 0; round < rounds; round++) {
    for (const kind of ['model', 'saved', 'unknown'] as const) times[kind].push(figures(await timed(() => analyseStack(kinds[kind]))));
  }
  const flows: string[] = [];
  for (const n of [16, 24, 32, 40, 41, 48]) {
    const refused = flowRefusal(12, n);
    const means = headMeans(syntheticStack(12, 1, n, false));
    // Past the limit it is timed anyway (the product refuses it), to show why the limit is there.
    const { wall, cpu } = await timed(() => attentionFlow(means, n, Infinity));
    flows.push(`  12 layers × ${n} tokens, full attention: ${wall.toFixed(0)} ms (CPU ${cpu.toFixed(0)} ms)${refused ? ' (refused by the product)' : ''}`);
  }
  const other = rotated(stack);
  const compared: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const kernels = await timed(() => divergences(stack, other));
    const scalar = await timed(() => scalarDivergences(stack, other));
    const difference = Math.max(...kernels.result.flat().map((value, k) => Math.abs(value - scalar.result.flat()[k])));
    compared.push(`  round ${round + 1}: kernels ${figures(kernels)}, scalar loop ${figures(scalar)}: ${(scalar.cpu / kernels.cpu).toFixed(1)}× less CPU; largest difference ${difference.toExponential(1)}`);
  }
  parentPort!.postMessage({ times, flows, compared });
}

if (isMainThread) {
  const sizes: Sizes = { tokens: flag('tokens', 1024), layers: flag('layers', 12), heads: flag('heads', 12), rounds: flag('rounds', 3) };
  const worker = new Worker(`require('tsx/cjs'); require(${JSON.stringify(__filename)});`, { eval: true, workerData: sizes });
  worker.on('message', ({ times, flows, compared }: { times: Record<'model' | 'saved' | 'unknown', string[]>; flows: string[]; compared: string[] }) => {
    // The relaxed build wherever it validates (Node 20 once the engine turned its flag on); ATTENTION_LENS_KERNELS=simd128 the plain one.
    console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, load ${loadavg()[0].toFixed(1)}; kernels: ${kernelsFlavour()} SIMD`);
    console.log(`scores + rollout, ${sizes.layers} × ${sizes.heads} heads, ${sizes.tokens} tokens (issue 27's target: 200 ms), the first round starting the ${threadCount()} compute threads:`);
    console.log(`  a causal model's run:           ${times.model.join(', ')}`);
    console.log(`  a saved file (found causal):    ${times.saved.join(', ')}`);
    console.log(`  heads with nothing said of them: ${times.unknown.join(', ')}`);
    console.log(`attention flow (limit: layers × tokens⁴ ≤ ${FLOW_MAX_WORK.toExponential(1)}):`);
    for (const line of flows) console.log(line);
    console.log(`divergences of two runs, ${sizes.layers} × ${sizes.heads} heads, ${sizes.tokens} tokens (B: the heads rotated by one):`);
    for (const line of compared) console.log(line);
    console.log(`load ${loadavg().map((load) => load.toFixed(1)).join(' ')} at the end`);
    void worker.terminate();
  });
} else {
  void onThread(workerData as Sizes);
}
