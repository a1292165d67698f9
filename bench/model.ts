// `npm run bench:model [-- --rounds N] [--case TEXT,…] [--8b]` (`npm run bench:families`: Pythia-160M and OLMoE only): whole-model runs on random-weight folders in
// the exact published layouts (scripts/gen-bench-models.mjs, streamed into test-output/models-big:
// GPT-2-small, 124M, f32; Pythia-160M, f16; Qwen2.5-0.5B, Llama-3.2-1B, OLMoE-1B-7B with 2 of its 16
// layers and, with --8b, Llama-3.1-8B, bf16 — the 8B is skipped, said, when the disk or the memory
// is short), each run in a fresh
// process: ours on each backend (runModel with ATTENTION_LENS_BACKEND=native, ONNX Runtime, and =wasm,
// the WebAssembly kernels: load, forward, GFLOP/s, peak RSS), Debian's PyTorch
// (import, load the same files, forward with every attention returned; in total and the forward
// alone) and numpy in the picoGPT style on the fastest OpenBLAS kernel this CPU runs (GPT-2 only).
// Runs take turns round by round; medians are printed. Not a test: nothing here asserts a time.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statfsSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { makeDeferredSessions, nativeLinearBackend } from '../src/core/engine/native/linear';
import type { LinearBackend } from '../src/core/model/backend';
import { ChosenLinearBackend } from '../src/core/model/chosenBackend';
import { parseModelConfig } from '../src/core/model/config';
import { runModel } from '../src/core/model/run';
import { WasmLinearBackend } from '../src/core/model/wasmBackend';
import { folderFiles } from '../src/node/modelFiles';
import { ensurePeers, fastestOpenBlas } from './peers';
// @ts-expect-error: a plain .mjs script without types
import { folderBytes, writeFolder } from '../scripts/gen-bench-models.mjs';

const root = join(__dirname, '..');
const argument = (flag: string): string | undefined => (process.argv.includes(flag) ? process.argv[process.argv.indexOf(flag) + 1] : undefined);
const ROUNDS = Number(argument('--rounds') ?? 3);
/** Cases whose "model tokens" contains one of these (comma-separated): `--case "pythia-160m 128,olmoe-2l"`. */
const CASE_FILTERS = (argument('--case') ?? '').split(',');
const selectedCase = (model: string, n: number): boolean => CASE_FILTERS.some((filter) => `${model} ${n}`.includes(filter));
/** The backend of ours: ONNX Runtime (the default where it loads), or --backend wasm. */
const BACKEND = argument('--backend') ?? 'native';
const BIG = process.argv.includes('--8b');
const CASES = [
  { model: 'gpt2-small', tokens: [32, 128, 512] },
  { model: 'pythia-160m', tokens: [128, 512] },
  { model: 'qwen2.5-0.5b', tokens: [32, 128, 512] },
  { model: 'llama-3.2-1b', tokens: [32, 128, 512] },
  { model: 'olmoe-2l', tokens: [128, 512] },
  ...(BIG ? [{ model: 'llama-3.1-8b', tokens: [32, 128] }] : []),
];
const bigFolders = join(root, 'test-output', 'models-big');

interface Timing {
  /** CPU time of the whole process, every thread: comparable when the machine is shared. */
  cpu_ms: number;
  /** CPU time (every thread) of loading and running the model, after the imports. */
  run_cpu_ms: number;
  load_ms?: number;
  import_ms?: number;
  forward_ms: number;
  /** Ours: the same model's second run in the same process (its weights resident when they fit). */
  second_ms?: number;
  resident?: string;
  total_ms: number;
  max_rss_mb: number;
  logit: number;
  /** Ours: the backend that ran the products. */
  backend?: string;
  /** Ours: making the sessions of the weights the first run fed, between the runs. */
  pack_ms?: number;
}

/** Deterministic token ids inside both vocabularies. */
const idsOf = (n: number): number[] => Array.from({ length: n }, (_, i) => 100 + ((i * 7919) % 50000));

async function child(folder: string, n: number): Promise<void> {
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const backend = new ChosenLinearBackend();
  const run = await runModel(folderFiles(folder), { ids: idsOf(n) }, { backend });
  run.weights(0, 0); // a first head's weights, as a view would ask
  // What the idle time after a first run does in the editor (a person reading it): the sessions of
  // the weights it fed are made, one at a time.
  const packing = performance.now();
  await makeDeferredSessions();
  const packMs = performance.now() - packing;
  const second = await runModel(folderFiles(folder), { ids: idsOf(n) }, { backend });
  const timing: Timing = {
    load_ms: run.timings.loadMs,
    forward_ms: run.timings.forwardMs,
    second_ms: second.timings.loadMs + second.timings.forwardMs,
    pack_ms: packMs,
    resident: second.resident,
    total_ms: performance.now() - started,
    cpu_ms: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
    run_cpu_ms: ((used) => (used.user + used.system) / 1000)(process.cpuUsage(cpuBefore)),
    max_rss_mb: process.resourceUsage().maxRSS / 1024,
    logit: run.logitsLast?.[0] ?? NaN,
    backend: run.backend,
  };
  process.stdout.write(`${JSON.stringify(timing)}\n`);
  backend.dispose();
}

/** The niceness of the fast path's compute threads (COMPUTE_NICE in fast-thread.js): the peers run at it
 * too, so on a shared machine both get the same share of the cores (as bench/run.ts does). */
const PEER_NICE = 10;

/** One fresh process's JSON line. */
function spawnJson(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Timing & { gflops?: number } {
  const out = spawnSync('nice', ['-n', String(PEER_NICE), command, ...args], { encoding: 'utf8', env, maxBuffer: 2 ** 24 });
  if (out.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${out.stderr.slice(-2000)}`);
  return JSON.parse(out.stdout.trim().split('\n').at(-1) as string) as Timing & { gflops?: number };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * GFLOP/s of a LinearBackend on 512×768 · 768×768 (a GPT-2-small projection of 512 tokens): by
 * the wall clock, and per CPU-second of the process (all its threads), which a shared machine
 * disturbs less.
 */
async function gemmRate(backend: LinearBackend): Promise<{ wall: number; perCpuSecond: number }> {
  const [m, k, n] = [512, 768, 768];
  const a = Float32Array.from({ length: m * k }, (_, i) => Math.sin(i));
  const b = Float32Array.from({ length: k * n }, (_, i) => Math.cos(i));
  let best = Infinity;
  let bestCpu = Infinity;
  for (let r = 0; r < 7; r++) {
    const t = performance.now();
    const cpu = process.cpuUsage();
    await backend.matmul(a, b, m, k, n, false);
    best = Math.min(best, performance.now() - t);
    const used = process.cpuUsage(cpu);
    bestCpu = Math.min(bestCpu, (used.user + used.system) / 1000);
  }
  backend.dispose();
  const gflop = (2 * m * k * n) / 1e9;
  return { wall: gflop / (best / 1000), perCpuSecond: gflop / (bestCpu / 1000) };
}

/**
 * The FLOPs of a forward on n tokens as it runs here: every layer's products, attention's QKᵀ and
 * AV over every key (the causal half is not skipped), and the LM head at the last position.
 */
function forwardFlops(folder: string, n: number): number {
  const c = parseModelConfig(readFileSync(join(folder, 'config.json'), 'utf8'));
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const gated = c.gatedMlp ? 3 : 2;
  // A mixture of experts: the router, and each token's top-k experts only.
  const mlp = c.moe ? c.hidden * c.moe.experts + 3 * c.moe.topK * c.hidden * c.moe.expertIntermediate : gated * c.hidden * c.intermediate;
  const perLayer = 2 * n * (c.hidden * (q + 2 * kv) + q * c.hidden + mlp) + 4 * n * n * q;
  return c.layers * perLayer + 2 * c.hidden * c.vocab;
}

/** The folder of `model`, written now when absent; undefined (said) when the disk or the memory is short for it. */
function benchFolder(model: string): string | undefined {
  const bytes = folderBytes(model);
  const folder = join(bigFolders, model);
  if (!existsSync(join(folder, 'config.json'))) {
    mkdirSync(bigFolders, { recursive: true });
    const free = statfsSync(bigFolders).bavail * statfsSync(bigFolders).bsize;
    if (free < bytes * 1.05) {
      console.log(`${model}: skipped, its folder needs ${(bytes / 1e9).toFixed(1)} GB of disk and ${(free / 1e9).toFixed(1)} GB are free`);
      return undefined;
    }
    console.log(`writing ${folder} (${(bytes / 1e9).toFixed(1)} GB, scripts/gen-bench-models.mjs)…`);
    writeFolder(bigFolders, model);
  }
  // PyTorch holds the weights whole (bf16 when float32 would not fit) and ours at most resident + 2 GB.
  if (bytes + 2e9 > freemem() + 1e9) {
    console.log(`${model}: skipped, ${(bytes / 1e9).toFixed(1)} GB of weights and 2 GB of work do not fit the ${(freemem() / 1e9).toFixed(1)} GB free`);
    return undefined;
  }
  return folder;
}

async function main(): Promise<void> {
  const selected = CASES.filter(({ model, tokens }) => tokens.some((n) => selectedCase(model, n)));
  console.log(`${cpus()[0].model}, ${cpus().length} cores, ${(totalmem() / 1e9).toFixed(1)} GB, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const native = nativeLinearBackend();
  for (const backend of [new WasmLinearBackend(), ...(native ? [native] : [])]) {
    const rate = await gemmRate(backend);
    console.log(`gemm on ${backend.name}, 512×768 · 768×768: ${rate.wall.toFixed(1)} GFLOP/s (${rate.perCpuSecond.toFixed(1)} per CPU-second)`);
  }
  ensurePeers();
  const kernel = fastestOpenBlas();
  console.log(`this CPU's GEMM peak (numpy on OpenBLAS ${kernel.name}, 1024² float32): ${kernel.gflops.toFixed(1)} GFLOP/s`);
  const script = join(__dirname, 'model_peers.py');
  console.log('model          tokens | ours: backend resident  load  first  GFLOP/s  packed after  second  GFLOP/s  CPU s  RSS MB | torch (dtype): load  forward  GFLOP/s  CPU s  RSS MB | ours/torch first, second | load average');
  for (const c of selected) {
    const { model, tokens } = c;
    const folder = benchFolder(model);
    if (!folder) continue;
    // PyTorch in float32 where its weights fit beside ours, bf16 otherwise (its default threads).
    const torchDtype = folderBytes(model) * (model.startsWith('gpt2') ? 1 : 2) * 2 < freemem() ? 'float32' : 'bfloat16';
    for (const n of tokens) {
      if (!selectedCase(model, n)) continue;
      const ids = idsOf(n).join(',');
      const runs: Record<'ours' | 'torch', Timing[]> = { ours: [], torch: [] };
      const loads = [loadavg()[0]];
      for (let round = 0; round < ROUNDS; round++) {
        runs.ours.push(spawnJson(process.execPath, ['--import', 'tsx', __filename, '--child', folder, String(n)], { ...process.env, ATTENTION_LENS_BACKEND: BACKEND }));
        runs.torch.push(spawnJson('/usr/bin/python3', [script, 'torch', folder, ids], { ...kernel.env, PEER_DTYPE: torchDtype }));
        loads.push(loadavg()[0]);
      }
      const m = (list: Timing[], key: keyof Timing) => (list.length ? median(list.map((t) => Number(t[key] ?? NaN))) : NaN);
      const f = (v: number) => (Number.isNaN(v) ? '—' : v >= 100 ? v.toFixed(0) : v.toFixed(1));
      const gflop = forwardFlops(folder, n) / 1e9;
      const rate = (ms: number) => f(gflop / (ms / 1000));
      const [first, second, torch] = [m(runs.ours, 'forward_ms'), m(runs.ours, 'second_ms'), m(runs.torch, 'forward_ms')];
      // CPU seconds of every thread, from after the imports to the end (ours: both runs; torch: its load and forward).
      const cpu = (list: Timing[]) => f(m(list, 'run_cpu_ms') / 1000);
      console.log(
        `${model.padEnd(14)} ${String(n).padStart(6)} | ${(runs.ours[0].backend ?? '?').padEnd(11)} ${(runs.ours[0].resident ?? '?').padEnd(9)} ${f(m(runs.ours, 'load_ms'))} ${f(first)} ${rate(first)} ${f(m(runs.ours, 'pack_ms'))} ${f(second)} ${rate(second)} ${cpu(runs.ours)} ${f(m(runs.ours, 'max_rss_mb'))}` +
          ` | ${torchDtype} ${f(m(runs.torch, 'load_ms'))} ${f(torch)} ${rate(torch)} ${cpu(runs.torch)} ${f(m(runs.torch, 'max_rss_mb'))}` +
          ` | ${(first / torch).toFixed(2)}×, ${(second / torch).toFixed(2)}× | ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}  (logit[0]: ours ${runs.ours[0].logit.toFixed(4)}, torch ${runs.torch[0].logit.toFixed(4)})`,
      );
    }
  }
}

if (process.argv.includes('--child')) void child(argument('--child') as string, Number(process.argv[process.argv.indexOf('--child') + 2])).then(() => process.exit(0));
else void main().then(() => process.exit(0));
