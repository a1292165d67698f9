// `npm run bench [-- --json] [--rounds N] [--case TEXT]`: the WebAssembly fast path, its peers —
// numpy (outputs preallocated) and PyTorch, both on the fastest OpenBLAS kernel this CPU runs, and
// numpy as loaded (OpenBLAS's own kernel choice, every step allocating) — and the plain-TypeScript
// reference compute the same attention on the same inputs in one process tree, every one on the
// same number of threads. The fast path and the peers take turns round by round; the reference and
// fresh-memory runs follow apart; medians are quoted (this machine's timings drift ±20–30%).
// Every implementation does the same work where its API allows: the forward pass with scores,
// scaled scores, weights and output of every head kept (the panel shows them all); the checks are
// not timed.
// Then: the event-loop delay of a host thread while a worker runs a 4096-token problem, the
// latency through the real worker client (bench/latency.ts), and the reader/panel benchmarks
// (bench/reader.ts, bench/panel.ts) when present.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { forward } from '../src/core/engine/attention';
import { attentionCost } from '../src/core/engine/cost';
import { forwardFast, prepareRun } from '../src/core/engine/fast/index';
import { kernelsFlavour, threadCount, ThreadPool } from '../src/core/engine/fast/pool';
import { forwardNative, prepareNative } from '../src/core/engine/native/attention';
import { nativeRuntime, nativeThreads } from '../src/core/engine/native/runtime';
import { backendFor } from '../src/core/engine/native/select';
import type { AttentionSpec, DType, Matrix, Problem } from '../src/core/types';
import { adoptResultView, panelDataOf } from '../src/views/model';
import { AttentionWorker } from '../src/worker/client';
import { random } from './inputs';
import { ensurePeers, OPENBLAS_CANDIDATES } from './peers';
import type { Latency } from './latency';

const json = process.argv.includes('--json');
const roundsFlag = process.argv.indexOf('--rounds');
const ROUNDS = roundsFlag === -1 ? 7 : Number(process.argv[roundsFlag + 1]);
/** The reference takes seconds per run at these sizes: fewer rounds, still interleaved. */
const REFERENCE_ROUNDS = Math.min(3, ROUNDS);
const caseFlag = process.argv.indexOf('--case');
/** Only the cases whose name contains this text (e.g. `--case 4096`). */
const CASE_FILTER = caseFlag === -1 ? '' : process.argv[caseFlag + 1];
const D_K = 64;
/**
 * Pause before each timed run: OpenBLAS's threads spin for a while after numpy returns, and would
 * take the cores from whatever runs next (the fast path's threads run at nice 10, below them).
 */
const SETTLE_MS = 250;

interface Case {
  name: string;
  kind: 'sdpa' | 'mha';
  n: number;
  dtype: DType;
  dModel?: number;
  heads?: number;
}

const CASES: Case[] = [
  { name: 'sdpa n=1024 float64', kind: 'sdpa', n: 1024, dtype: 'float64' },
  { name: 'sdpa n=2048 float32', kind: 'sdpa', n: 2048, dtype: 'float32' },
  { name: 'sdpa n=4096 float32', kind: 'sdpa', n: 4096, dtype: 'float32' },
  { name: 'mha n=1024 dm=512 h=8 float32', kind: 'mha', n: 1024, dtype: 'float32', dModel: 512, heads: 8 },
];

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const log = (line: string): void => {
  if (!json) console.log(line);
};

function specOf(c: Case): { spec: AttentionSpec; inputs: Record<string, Matrix> } {
  const options = { heads: c.heads ?? 1, score: 'scaled_dot' as const, dtype: c.dtype };
  if (c.kind === 'sdpa') {
    const inputs = { Q: random(c.n, D_K, 1, 1), K: random(c.n, D_K, 2, 1), V: random(c.n, D_K, 3, 1) };
    return { spec: { options, ...inputs }, inputs };
  }
  const dm = c.dModel as number;
  const w = 1 / Math.sqrt(dm);
  const inputs = {
    X: random(c.n, dm, 4, 1),
    WQ: random(dm, dm, 5, w),
    WK: random(dm, dm, 6, w),
    WV: random(dm, dm, 7, w),
    WO: random(dm, dm, 8, w),
  };
  return { spec: { options, X: inputs.X, WQ: [inputs.WQ], WK: [inputs.WK], WV: [inputs.WV], WO: inputs.WO }, inputs };
}

function flopsOf(c: Case): number {
  return attentionCost({
    queries: c.n,
    keys: c.n,
    dModel: c.kind === 'mha' ? (c.dModel as number) : 0,
    dK: D_K,
    dV: D_K,
    heads: c.heads ?? 1,
    dtype: c.dtype,
    projections: c.kind === 'mha',
    outputProjection: c.kind === 'mha',
  }).flops;
}

/** The products the kernels are compared on (and the GEMM peak quoted next to the fast path). */
const GEMM_SIZE: Record<DType, number> = { float32: 2048, float64: 1024 };

/** The niceness of the fast path's compute threads (COMPUTE_NICE in fast-thread.js). */
const PEER_NICE = 10;

type PeerName = 'numpy' | 'torch' | 'numpy-as-loaded';

/** A peer (bench/peer_attention.py) in a child process, one JSON command per line. */
class Peer {
  private readonly child;
  private readonly replies: Array<{ resolve(line: string): void; reject(error: Error): void }> = [];
  private exited: Error | undefined;

  /** `coreType`: OPENBLAS_CORETYPE, or undefined to let OpenBLAS choose its kernel. */
  constructor(
    readonly name: PeerName,
    coreType: string | undefined,
    threads: number,
  ) {
    const env = { ...process.env };
    // Set here for other work, maybe: removed together, so the kernel is the probe's or OpenBLAS's choice.
    delete env.OPENBLAS_CORETYPE;
    delete env.OPENBLAS_L2_SIZE;
    if (coreType) env.OPENBLAS_CORETYPE = coreType;
    const script = join(__dirname, 'peer_attention.py');
    // At the fast path's priority (its compute threads run at nice 10, fast-thread.js): on an idle
    // machine it changes nothing; on a loaded one both get the same share of the cores.
    const command = ['-n', String(PEER_NICE), '/usr/bin/python3', script, name, '--threads', String(threads)];
    this.child = spawn('nice', command, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    this.child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    createInterface({ input: this.child.stdout }).on('line', (line) => this.replies.shift()?.resolve(line));
    const fail = (error: Error): void => {
      this.exited = error;
      for (const reply of this.replies.splice(0)) reply.reject(error);
    };
    this.child.on('error', (error) => fail(new Error(`cannot start /usr/bin/python3: ${error.message}`)));
    this.child.on('exit', (code, signal) => fail(new Error(`bench/peer_attention.py ${name} exited (${signal ?? `code ${code}`}): ${stderr.trim()}`)));
  }

  ask<T>(command: object): Promise<T> {
    return new Promise((resolve, reject) => {
      if (this.exited) return reject(this.exited);
      this.replies.push({ resolve: (line) => resolve(JSON.parse(line) as T), reject });
      this.child.stdin.write(`${JSON.stringify(command)}\n`);
    });
  }

  close(): void {
    this.child.stdin.end();
  }
}

interface BlasInfo {
  numpy: string;
  torch?: string;
  torch_threads?: number;
  sdpa?: boolean;
  openblas?: string;
  kernel?: string;
  threads?: number;
  libraries: Array<{ filepath: string; internal_api: string }>;
}

interface KernelProbe {
  /** OPENBLAS_CORETYPE, or 'as loaded' (unset). */
  requested: string;
  /** The kernel threadpoolctl reports running; absent when the probe died. */
  kernel?: string;
  gflops?: Record<DType, number>;
  error?: string;
}

/** Rounds of the kernel probe: every candidate times its products once per round, in turn. */
const PROBE_ROUNDS = 5;

/**
 * One child per candidate kernel, all alive at once: which kernel runs, and its GEMM speed at the
 * peers' thread count — the fastest product of several rounds in which the candidates take turns,
 * so a burst of other work on the machine does not decide which kernel wins.
 */
async function probeKernels(threads: number): Promise<KernelProbe[]> {
  // A kernel the CPU lacks dies of SIGILL (its probe is a child process); a name OpenBLAS does not
  // know falls back to its own choice, which threadpoolctl's report of the kernel running catches.
  const candidates = OPENBLAS_CANDIDATES.map((requested) => ({
    peer: new Peer('numpy', requested, threads),
    probe: { requested: requested ?? 'as loaded' } as KernelProbe,
  }));
  const failed = (candidate: (typeof candidates)[number], error: unknown): void => {
    if (candidate.probe.requested === 'as loaded') throw error; // numpy itself does not run: nothing to compare with
    candidate.probe.error = error instanceof Error ? error.message.split('\n')[0] : String(error);
  };
  try {
    for (const candidate of candidates) {
      try {
        const blas = await candidate.peer.ask<BlasInfo>({ op: 'blas' });
        if (blas.openblas === undefined) throw new Error(`numpy is not running on OpenBLAS (${blas.libraries.map((l) => l.filepath).join(', ') || 'no BLAS'})`);
        candidate.probe.kernel = blas.kernel;
        candidate.probe.gflops = { float32: 0, float64: 0 };
      } catch (error) {
        failed(candidate, error);
      }
    }
    for (let round = 0; round < PROBE_ROUNDS; round++) {
      for (const candidate of candidates.filter((c) => c.probe.gflops && !c.probe.error)) {
        const gflops = candidate.probe.gflops as Record<DType, number>;
        try {
          for (const dtype of ['float32', 'float64'] as const) {
            const { gflops: g } = await candidate.peer.ask<{ gflops: number }>({ op: 'gemm', dtype, n: GEMM_SIZE[dtype], repeats: round === 0 ? 2 : 1 });
            gflops[dtype] = Math.max(gflops[dtype], round2(g));
          }
        } catch (error) {
          failed(candidate, error);
          delete candidate.probe.gflops;
        }
      }
    }
  } finally {
    for (const { peer } of candidates) peer.close();
  }
  return candidates.map((c) => c.probe);
}

/** The fastest float32 GEMM among the kernels that ran as requested (OpenBLAS's own choice included). */
function fastestKernel(probes: KernelProbe[]): KernelProbe {
  const ran = probes.filter((p) => p.gflops && (p.requested === 'as loaded' || p.kernel?.toLowerCase() === p.requested.toLowerCase()));
  return ran.reduce((best, p) => ((p.gflops?.float32 ?? 0) > (best.gflops?.float32 ?? 0) ? p : best));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Wall time, and CPU time of every thread of the process (the fast path's helpers included). */
interface Timing {
  ms: number;
  cpu_ms: number;
}

async function timed(run: () => unknown): Promise<Timing> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  await run();
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - started, cpu_ms: (used.user + used.system) / 1000 };
}

interface Row {
  name: string;
  /** One-minute load average when the case ended: other work on the machine (figures drift with it). */
  load_average: number;
  /** The build the extension runs here: relaxed SIMD where it validates (the engine turns Node 20's flag on). */
  fast_ms: number;
  /** The 128-bit SIMD build on a pool of its own, when the relaxed one runs as `fast`. */
  fast_simd128_ms?: number;
  numpy_ms: number;
  torch_ms: number;
  numpy_as_loaded_ms: number;
  reference_ms: number;
  fast_fresh_memory_ms: number;
  /** The native backend (ONNX Runtime) on the same work, when it loads here. */
  native_ms?: number;
  ratio_native_to_best_peer?: number;
  /** The backend the extension runs this case on (native/select.ts), its time and ratio. */
  backend: 'onnxruntime' | 'wasm';
  chosen_ms: number;
  ratio_chosen_to_best_peer: number;
  /** GFLOP/s of the chosen backend (the header quotes the GEMM peak). */
  gflops: number;
  /** numpy (best kernel, preallocated) or torch, whichever is faster on this case. */
  best_peer: PeerName;
  ratio_fast_to_best_peer: number;
  ratio_fast_to_numpy_as_loaded: number;
  /** The same ratio in CPU time (all threads): steadier under load, though OpenBLAS's spinning threads inflate the peers'. */
  cpu_ratio_fast_to_best_peer: number;
  /** Median CPU time of all threads: steadier than wall time when other work shares the cores. */
  cpu_ms: Record<string, number>;
  samples: Record<string, Timing[]>;
}

async function measure(c: Case, peers: Peer[], dir: string, simd128?: ThreadPool): Promise<Row> {
  const { spec, inputs } = specOf(c);
  const caseDir = join(dir, c.name.replace(/[^a-z0-9]+/gi, '-'));
  rmSync(caseDir, { recursive: true, force: true });
  mkdirSync(caseDir);
  const shapes: Record<string, [number, number]> = {};
  for (const [name, m] of Object.entries(inputs)) {
    writeFileSync(join(caseDir, `${name}.f64`), Buffer.from(m.data.buffer));
    shapes[name] = [m.rows, m.cols];
  }
  const load = { op: 'load', case: c.name, kind: c.kind, dtype: c.dtype, heads: c.heads ?? 1, dir: caseDir, shapes };
  let previous = await forwardFast(spec, true); // warm-up (also compiles and starts the threads)
  for (const peer of peers) {
    await peer.ask(load);
    await peer.ask({ op: 'run', case: c.name });
  }
  const samples: Record<string, Timing[]> = { fast: [], fastFresh: [], reference: [], ...Object.fromEntries(peers.map((p) => [p.name, []])) };
  const settle = async (ms = SETTLE_MS): Promise<void> => {
    gc();
    await new Promise((resolve) => setTimeout(resolve, ms));
  };
  // The fast path and the peers take turns, in an order that rotates every round. The reference and
  // the fresh-memory runs come apart, afterwards: interleaved, the hundreds of MB they allocate and
  // free slowed whatever ran next (numpy: 94–121 ms after other runs, 163–208 ms right after a
  // fresh run; the fast path up to a third while the reference's or a fresh run's memory was unmapped).
  const compared: Array<[string, () => Promise<Timing>]> = [
    ['fast', () => timed(async () => (previous = (await forwardFast(spec, true, { recycle: previous })) ?? previous))],
    ...peers.map((peer): [string, () => Promise<Timing>] => [peer.name, () => peer.ask<Timing>({ op: 'run', case: c.name })]),
  ];
  const runtime = nativeRuntime();
  const nativeRun = prepareNative(spec, true);
  if (runtime.ok && nativeRun) {
    samples.native = [];
    await forwardNative(runtime.ort, spec, nativeRun); // warm-up: the session is created once per shape class
    compared.push(['native', () => timed(() => forwardNative(runtime.ort, spec, nativeRun))]);
  }
  if (simd128) {
    let memory: { output: Matrix } | undefined;
    samples.fastSimd128 = [];
    compared.push(['fastSimd128', () => timed(async () => {
      const prepared = prepareRun(spec, true, { recycle: memory });
      if (!prepared) throw new Error(`the fast path does not plan ${c.name}`);
      await simd128.run(prepared.arena.memory, prepared.plan.phases);
      memory = { output: prepared.arena.view(prepared.plan.output) };
    })]);
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < compared.length; k++) {
      const [name, run] = compared[(round + k) % compared.length];
      await settle();
      samples[name].push(await run());
    }
  }
  // Fresh-memory results are kept until the end of the case for the same reason.
  const freshResults: unknown[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await settle();
    samples.fastFresh.push(await timed(async () => freshResults.push(await forwardFast(spec, true))));
  }
  freshResults.length = 0;
  for (let round = 0; round < REFERENCE_ROUNDS; round++) {
    await settle();
    samples.reference.push(await timed(() => forward(spec, {})));
  }
  await settle(4 * SETTLE_MS); // the next case starts with this one's memory let go
  const wall = (name: string): number => median(samples[name].map((t) => t.ms));
  const cpu = (name: string): number => median(samples[name].map((t) => t.cpu_ms));
  const best: PeerName = wall('torch') < wall('numpy') ? 'torch' : 'numpy';
  const backend = backendFor(spec);
  const chosen = backend === 'onnxruntime' ? 'native' : 'fast';
  return {
    name: c.name,
    load_average: round2(loadavg()[0]),
    fast_ms: round2(wall('fast')),
    numpy_ms: round2(wall('numpy')),
    torch_ms: round2(wall('torch')),
    numpy_as_loaded_ms: round2(wall('numpy-as-loaded')),
    reference_ms: round2(wall('reference')),
    fast_fresh_memory_ms: round2(wall('fastFresh')),
    ...(simd128 && { fast_simd128_ms: round2(wall('fastSimd128')) }),
    ...(samples.native && { native_ms: round2(wall('native')), ratio_native_to_best_peer: round2(wall('native') / wall(best)) }),
    backend,
    chosen_ms: round2(wall(chosen)),
    ratio_chosen_to_best_peer: round2(wall(chosen) / wall(best)),
    gflops: round2(flopsOf(c) / wall(chosen) / 1e6),
    best_peer: best,
    ratio_fast_to_best_peer: round2(wall('fast') / wall(best)),
    ratio_fast_to_numpy_as_loaded: round2(wall('fast') / wall('numpy-as-loaded')),
    cpu_ratio_fast_to_best_peer: round2(cpu('fast') / cpu(best)),
    cpu_ms: Object.fromEntries(Object.keys(samples).map((name) => [name, round2(cpu(name))])),
    samples: Object.fromEntries(
      Object.entries(samples).map(([k, v]) => [k, v.map((t) => ({ ms: round2(t.ms), cpu_ms: round2(t.cpu_ms) }))]),
    ),
  };
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

const EVENT_LOOP_RUNS = 5;

/**
 * Delay of this (host) thread's event loop while the extension's engine worker (src/worker/main.ts,
 * through the real client) runs a 4096-token float32 problem, over several runs: everything the
 * host does for a run included — receiving the result with the panel's pooled views, and building
 * the panel's data from them as the panel does. The worst and the median of each run's maximum.
 */
async function eventLoopDelay(): Promise<Record<string, number>> {
  const worker = new AttentionWorker(join(__dirname, 'latency-worker.cjs'), { maxOldGenerationSizeMb: 2048 }, () => undefined);
  const { spec } = specOf({ name: 'loop', kind: 'sdpa', n: 4096, dtype: 'float32' });
  const problem: Problem = { index: 0, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, options: spec.options, matrices: [] };
  /** One run, as the extension does it; returns its wall time (worker round trip and panel data). */
  const once = async (): Promise<number> => {
    const started = performance.now();
    const [outcome] = await worker.run('loop', [{ index: 0, spec }]).outcomes;
    if (!('result' in outcome)) throw new Error(`event-loop run: ${outcome.error}`);
    adoptResultView(outcome.result, outcome.view);
    panelDataOf({ uri: 'file:///loop', fileName: 'loop', problems: [problem], problemIndex: 0, result: outcome.result });
    return performance.now() - started;
  };
  const maxima: number[] = [];
  const p99s: number[] = [];
  const runs: number[] = [];
  try {
    await once(); // warm-up: thread start, compilation
    for (let k = 0; k < EVENT_LOOP_RUNS; k++) {
      gc(); // this thread's own garbage is not the run's doing
      const histogram = monitorEventLoopDelay({ resolution: 1 });
      histogram.enable();
      runs.push(await once());
      histogram.disable();
      maxima.push(histogram.max / 1e6);
      p99s.push(histogram.percentile(99) / 1e6);
    }
  } finally {
    worker.dispose();
  }
  // The floor other work on the machine sets: the same thread, idle, for as long as a run.
  const idle = monitorEventLoopDelay({ resolution: 1 });
  idle.enable();
  await new Promise((resolve) => setTimeout(resolve, median(runs)));
  idle.disable();
  return {
    runs: EVENT_LOOP_RUNS,
    idle_max_ms: round2(idle.max / 1e6),
    worst_max_ms: round2(Math.max(...maxima)),
    median_max_ms: round2(median(maxima)),
    median_p99_ms: round2(median(p99s)),
    median_run_ms: round2(median(runs)),
  };
}

/** bench/latency.ts, bench/reader.ts or bench/panel.ts (the last two written by their owners) with --json, when present. */
function companion(name: string, needsBuild = false): unknown {
  const file = join(__dirname, `${name}.ts`);
  if (!existsSync(file)) return undefined;
  if (needsBuild) spawnSync(process.execPath, [join(__dirname, '..', 'esbuild.mjs')], { cwd: join(__dirname, '..') });
  const run = spawnSync(process.execPath, ['--import', 'tsx', file, '--json'], { encoding: 'utf8' });
  const last = run.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last);
  } catch {
    return { exitCode: run.status, output: run.stdout.trim(), error: run.stderr.trim().slice(-500) };
  }
}

async function main(): Promise<void> {
  ensurePeers();
  const threads = threadCount();
  const flavour = kernelsFlavour();
  // Both builds when the relaxed one runs: the 128-bit one on a pool of its own, in the same rounds.
  const simd128 = flavour === 'relaxed' ? new ThreadPool(threads, undefined, 'simd128') : undefined;
  const probes = await probeKernels(threads);
  const chosen = fastestKernel(probes);
  const coreType = chosen.requested === 'as loaded' ? undefined : chosen.requested;
  const peers = [new Peer('numpy', coreType, threads), new Peer('torch', coreType, threads), new Peer('numpy-as-loaded', undefined, threads)];
  const blas = Object.fromEntries(await Promise.all(peers.map(async (peer) => [peer.name, await peer.ask<BlasInfo>({ op: 'blas' })] as const)));
  const machine = {
    cpu: cpus()[0]?.model,
    cores: cpus().length,
    memoryGiB: round2(totalmem() / 2 ** 30),
    node: process.version,
    v8: process.versions.v8,
    fastThreads: threads,
    fastKernels: flavour,
    loadAverageAtStart: loadavg().map(round2),
    kernels: probes,
    chosenKernel: chosen.kernel,
    gemmPeakGflops: chosen.gflops,
    peers: blas,
  };
  const peak = chosen.gflops as Record<DType, number>;
  log(`machine: ${machine.cpu}, ${machine.cores} cores, node ${machine.node}, load ${machine.loadAverageAtStart.join(' ')}; fast path on ${threads} threads, ${flavour === 'relaxed' ? 'relaxed SIMD (fused multiply-add)' : '128-bit SIMD (relaxed SIMD does not validate here)'}`);
  const runtime = nativeRuntime();
  log(runtime.ok ? `native backend: onnxruntime-node ${runtime.ort.env.versions.common} on ${nativeThreads()} intra-op threads` : `native backend: not here (${runtime.reason})`);
  log(`OpenBLAS ${blas.numpy.openblas} kernels, GEMM GFLOP/s on ${threads} threads (float32 ${GEMM_SIZE.float32}² / float64 ${GEMM_SIZE.float64}², fastest of ${PROBE_ROUNDS} rounds taking turns):`);
  for (const p of probes) {
    const what = p.gflops ? `${p.kernel}: ${p.gflops.float32} / ${p.gflops.float64}` : `does not run (${p.error})`;
    log(`  OPENBLAS_CORETYPE=${p.requested === 'as loaded' ? '(unset)' : p.requested} → ${what}`);
  }
  log(`peers on ${chosen.kernel}: numpy ${blas.numpy.numpy} (outputs preallocated), torch ${blas.torch.torch} ` +
      `(${blas.torch.sdpa ? 'scaled_dot_product_attention' : 'matmul/softmax steps'}; nn.MultiheadAttention), ${threads} threads; ` +
      `numpy as loaded: kernel ${blas['numpy-as-loaded'].kernel}, every step allocating`);
  log(`medians of ${ROUNDS} interleaved rounds (reference: ${REFERENCE_ROUNDS}); forward pass with every n×n step kept\n`);
  const header = ['case', 'load', 'runs on', 'its ms', 'its ÷ best peer', 'GFLOP/s (GEMM peak)', 'fast ms', 'native ms', 'numpy ms', 'torch ms', 'fast ÷ best peer', 'native ÷ best peer', 'numpy as loaded ms', 'fast ÷ numpy as loaded', 'fast, 128-bit SIMD ms', 'fast, fresh memory ms', 'reference ms', 'CPU ms fast / best peer (ratio)'];
  log(header.join(' | '));
  const dir = mkdtempSync(join(tmpdir(), 'attention-bench-'));
  const cases: Row[] = [];
  try {
    for (const c of CASES.filter((k) => k.name.includes(CASE_FILTER))) {
      const row = await measure(c, peers, dir, simd128);
      cases.push(row);
      log([row.name, row.load_average, row.backend, row.chosen_ms, `${row.ratio_chosen_to_best_peer} (${row.best_peer})`, `${row.gflops} (${peak[c.dtype]})`,
        row.fast_ms, row.native_ms ?? '–', row.numpy_ms, row.torch_ms, row.ratio_fast_to_best_peer, row.ratio_native_to_best_peer ?? '–', row.numpy_as_loaded_ms,
        row.ratio_fast_to_numpy_as_loaded, row.fast_simd128_ms ?? '–', row.fast_fresh_memory_ms, row.reference_ms, `${row.cpu_ms.fast} / ${row.cpu_ms[row.best_peer]} (${row.cpu_ratio_fast_to_best_peer})`].join(' | '));
    }
  } finally {
    for (const peer of peers) peer.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const eventLoop = await eventLoopDelay();
  log(
    `\nhost event loop while the engine worker runs sdpa n=4096 float32 and the host takes the result into the panel's data (${eventLoop.runs} runs, median ${eventLoop.median_run_ms} ms each): ` +
      `max ${eventLoop.worst_max_ms} ms (median of maxima ${eventLoop.median_max_ms} ms), p99 ${eventLoop.median_p99_ms} ms; ` +
      `idle, no run: max ${eventLoop.idle_max_ms} ms`,
  );
  const latency = companion('latency') as { cases?: Latency[] } | undefined;
  for (const row of latency?.cases ?? []) {
    log(`${row.name}: ${row.median_ms} ms (worker round trip ${row.round_trip_ms} ms, compute ${row.compute_ms} ms)`);
  }
  const reader = companion('reader');
  const panel = companion('panel', true); // renders dist/webview.js in Chromium
  if (reader !== undefined) log(`reader: ${JSON.stringify(reader)}`);
  if (panel !== undefined) log(`panel: ${JSON.stringify(panel)}`);
  const report = { machine: { ...machine, loadAverageAtEnd: loadavg().map(round2) }, cases, event_loop: eventLoop, latency, reader, panel };
  if (json) console.log(JSON.stringify(report));
}

main().catch((error: unknown) => {
  console.error(`npm run bench: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
