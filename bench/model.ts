// `npm run bench:model [-- --rounds N] [--case TEXT]`: whole-model runs on random-weight folders in
// the exact published layouts (scripts/gen_model_fixtures.py --bench: GPT-2-small-shaped, 124M, f32;
// Qwen2.5-0.5B-shaped, hidden 896, 24 layers, 14 heads on 2 KV heads, bf16), each run in a fresh
// process: ours on each backend (runModel with ATTENTION_LENS_BACKEND=native, ONNX Runtime, and =wasm,
// the WebAssembly kernels: load, forward, GFLOP/s, peak RSS), Debian's PyTorch
// (import, load the same files, forward with every attention returned; in total and the forward
// alone) and numpy in the picoGPT style on the fastest OpenBLAS kernel this CPU runs (GPT-2 only).
// Runs take turns round by round; medians are printed. Not a test: nothing here asserts a time.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { nativeLinearBackend } from '../src/core/engine/native/linear';
import type { LinearBackend } from '../src/core/model/backend';
import { ChosenLinearBackend } from '../src/core/model/chosenBackend';
import { parseModelConfig } from '../src/core/model/config';
import { runModel } from '../src/core/model/run';
import { WasmLinearBackend } from '../src/core/model/wasmBackend';
import { folderFiles } from '../src/node/modelFiles';
import { ensurePeers, fastestOpenBlas } from './peers';

const root = join(__dirname, '..');
const benchFolders = join(root, 'test-output', 'models-bench');
const argument = (flag: string): string | undefined => (process.argv.includes(flag) ? process.argv[process.argv.indexOf(flag) + 1] : undefined);
const ROUNDS = Number(argument('--rounds') ?? 3);
const CASE_FILTER = argument('--case') ?? '';
const CASES = [
  { model: 'gpt2-small', tokens: [128, 512, 1024] },
  { model: 'qwen2.5-0.5b', tokens: [128, 512] },
  // OLMoE-1B-7B's shapes with 2 of its 16 layers (scripts/gen_model_fixtures.py --bench-moe).
  { model: 'olmoe-2l', tokens: [128, 512], writer: '--bench-moe' },
];

interface Timing {
  /** CPU time of the whole process, every thread: comparable when the machine is shared. */
  cpu_ms: number;
  /** CPU time (every thread) of loading and running the model, after the imports. */
  run_cpu_ms: number;
  load_ms?: number;
  import_ms?: number;
  forward_ms: number;
  total_ms: number;
  max_rss_mb: number;
  logit: number;
  /** Ours: the backend that ran the products. */
  backend?: string;
}

/** Deterministic token ids inside both vocabularies. */
const idsOf = (n: number): number[] => Array.from({ length: n }, (_, i) => 100 + ((i * 7919) % 50000));

async function child(folder: string, n: number): Promise<void> {
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const backend = new ChosenLinearBackend();
  const run = await runModel(folderFiles(folder), { ids: idsOf(n) }, { backend });
  run.weights(0, 0); // a first head's weights, as a view would ask
  const timing: Timing = {
    load_ms: run.timings.loadMs,
    forward_ms: run.timings.forwardMs,
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
  const gated = c.family === 'llama' ? 3 : 2;
  // A mixture of experts: the router, and each token's top-k experts only.
  const mlp = c.moe ? c.hidden * c.moe.experts + 3 * c.moe.topK * c.hidden * c.moe.expertIntermediate : gated * c.hidden * c.intermediate;
  const perLayer = 2 * n * (c.hidden * (q + 2 * kv) + q * c.hidden + mlp) + 4 * n * n * q;
  return c.layers * perLayer + 2 * c.hidden * c.vocab;
}

async function main(): Promise<void> {
  const selected = CASES.filter(({ model, tokens }) => tokens.some((n) => `${model} ${n}`.includes(CASE_FILTER)));
  for (const writer of new Set(selected.filter(({ model }) => !existsSync(join(benchFolders, 'bench', model, 'config.json'))).map((c) => ('writer' in c ? (c.writer as string) : '--bench')))) {
    console.log(`writing the benchmark models (scripts/gen_model_fixtures.py ${writer})…`);
    spawnSync('/usr/bin/python3', [join(root, 'scripts', 'gen_model_fixtures.py'), benchFolders, writer], { stdio: 'inherit' });
  }
  console.log(`${cpus()[0].model}, ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const native = nativeLinearBackend();
  for (const backend of [new WasmLinearBackend(), ...(native ? [native] : [])]) {
    const rate = await gemmRate(backend);
    console.log(`gemm on ${backend.name}, 512×768 · 768×768: ${rate.wall.toFixed(1)} GFLOP/s (${rate.perCpuSecond.toFixed(1)} per CPU-second)`);
  }
  ensurePeers();
  const kernel = fastestOpenBlas();
  console.log(`numpy's OpenBLAS kernel: ${kernel.name} (${kernel.gflops.toFixed(1)} GFLOP/s on 1024² float32)`);
  const script = join(__dirname, 'model_peers.py');
  console.log('model           tokens | ours: backend  load  forward  GFLOP/s  total  CPU (run)  RSS MB | torch: import  load  forward  total  CPU (run)  RSS MB | numpy: forward  total  CPU (run) | ours/best forward');
  for (const { model, tokens } of selected) {
    for (const n of tokens) {
      if (!`${model} ${n}`.includes(CASE_FILTER)) continue;
      const folder = join(benchFolders, 'bench', model);
      const ids = idsOf(n).join(',');
      const runs: Record<'native' | 'wasm' | 'torch' | 'numpy', Timing[]> = { native: [], wasm: [], torch: [], numpy: [] };
      const ours = (backend: 'native' | 'wasm') =>
        spawnJson(process.execPath, ['--import', 'tsx', __filename, '--child', folder, String(n)], { ...process.env, ATTENTION_LENS_BACKEND: backend });
      for (let round = 0; round < ROUNDS; round++) {
        runs.native.push(ours('native'));
        runs.wasm.push(ours('wasm'));
        runs.torch.push(spawnJson('/usr/bin/python3', [script, 'torch', folder, ids], kernel.env));
        if (model.startsWith('gpt2')) runs.numpy.push(spawnJson('/usr/bin/python3', [script, 'numpy', folder, ids], kernel.env));
      }
      const m = (list: Timing[], key: keyof Timing) => (list.length ? median(list.map((t) => Number(t[key] ?? NaN))) : NaN);
      const f = (v: number) => (Number.isNaN(v) ? '—' : v >= 100 ? v.toFixed(0) : v.toFixed(1));
      const best = Math.min(m(runs.torch, 'forward_ms'), runs.numpy.length ? m(runs.numpy, 'forward_ms') : Infinity);
      const gflop = forwardFlops(folder, n) / 1e9;
      const peers =
        ` | ${f(m(runs.torch, 'import_ms'))} ${f(m(runs.torch, 'load_ms'))} ${f(m(runs.torch, 'forward_ms'))} ${f(m(runs.torch, 'total_ms'))} ${f(m(runs.torch, 'cpu_ms'))} (${f(m(runs.torch, 'run_cpu_ms'))}) ${f(m(runs.torch, 'max_rss_mb'))}` +
        ` | ${f(m(runs.numpy, 'forward_ms'))} ${f(m(runs.numpy, 'total_ms'))} ${f(m(runs.numpy, 'cpu_ms'))} (${f(m(runs.numpy, 'run_cpu_ms'))})`;
      for (const backend of ['native', 'wasm'] as const) {
        const list = runs[backend];
        console.log(
          `${model.padEnd(15)} ${String(n).padStart(6)} | ${(list[0].backend ?? '?').padEnd(11)} ${f(m(list, 'load_ms'))} ${f(m(list, 'forward_ms'))} ${f(gflop / (m(list, 'forward_ms') / 1000))} ${f(m(list, 'total_ms'))} ${f(m(list, 'cpu_ms'))} (${f(m(list, 'run_cpu_ms'))}) ${f(m(list, 'max_rss_mb'))}` +
            `${peers} | ${(m(list, 'forward_ms') / best).toFixed(2)}×  (logit[0]: ours ${list[0].logit.toFixed(4)}, torch ${runs.torch[0].logit.toFixed(4)})`,
        );
      }
    }
  }
}

if (process.argv.includes('--child')) void child(argument('--child') as string, Number(process.argv[process.argv.indexOf('--child') + 2])).then(() => process.exit(0));
else void main().then(() => process.exit(0));
