// `npm run bench [-- --json] [--rounds N] [--case TEXT]`: numpy (OpenBLAS), the plain-TypeScript reference and
// the WebAssembly fast path compute the same attention on the same inputs in one process tree;
// numpy and the fast path alternate round by round, the reference and fresh-memory runs follow
// apart; medians are quoted (this machine's timings drift ±20–30%).
// Every implementation does the same work: the forward pass with scores, scaled scores, weights
// and output of every head kept (the panel shows them all); the checks are not timed.
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
import { forwardFast } from '../src/core/engine/fast/index';
import type { AttentionSpec, DType, Matrix, Problem } from '../src/core/types';
import { adoptResultView, panelDataOf } from '../src/panel/model';
import { AttentionWorker } from '../src/worker/client';
import { random } from './inputs';
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

/** What numpy needs on Debian: Debian's numpy alone links the reference BLAS, ~10× slower. */
const NUMPY_PACKAGES = ['python3-numpy', 'libopenblas0-pthread'];

/** numpy in a child process, one JSON command per line. */
class Numpy {
  private readonly child;
  private readonly replies: Array<{ resolve(line: string): void; reject(error: Error): void }> = [];
  private exited: Error | undefined;

  constructor() {
    const env = { ...process.env };
    delete env.OPENBLAS_CORETYPE; // let OpenBLAS choose its kernel, as on a user's machine
    delete env.OPENBLAS_L2_SIZE;
    this.child = spawn('/usr/bin/python3', [join(__dirname, 'numpy_attention.py')], { env, stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: this.child.stdout }).on('line', (line) => this.replies.shift()?.resolve(line));
    const fail = (error: Error): void => {
      this.exited = error;
      for (const reply of this.replies.splice(0)) reply.reject(error);
    };
    this.child.on('error', (error) => fail(new Error(`cannot start /usr/bin/python3: ${error.message}`)));
    this.child.on('exit', (code) => fail(new Error(`bench/numpy_attention.py exited (code ${code}; its error is above)`)));
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
  numpy_ms: number;
  reference_ms: number;
  fast_ms: number;
  fast_fresh_memory_ms: number;
  gflops: number;
  ratio_fast_to_numpy: number;
  /** Median CPU time of all threads: steadier than wall time when other work shares the cores. */
  numpy_cpu_ms: number;
  fast_cpu_ms: number;
  samples: Record<string, Timing[]>;
}

async function measure(c: Case, numpy: Numpy, dir: string): Promise<Row> {
  const { spec, inputs } = specOf(c);
  const caseDir = join(dir, c.name.replace(/[^a-z0-9]+/gi, '-'));
  rmSync(caseDir, { recursive: true, force: true });
  mkdirSync(caseDir);
  const shapes: Record<string, [number, number]> = {};
  for (const [name, m] of Object.entries(inputs)) {
    writeFileSync(join(caseDir, `${name}.f64`), Buffer.from(m.data.buffer));
    shapes[name] = [m.rows, m.cols];
  }
  await numpy.ask({ op: 'load', case: c.name, kind: c.kind, dtype: c.dtype, heads: c.heads ?? 1, dir: caseDir, shapes });

  let previous = await forwardFast(spec, true); // warm-up (also compiles and starts the threads)
  await numpy.ask({ op: 'run', case: c.name });
  const samples: Record<string, Timing[]> = { numpy: [], reference: [], fast: [], fastFresh: [] };
  const settle = async (ms = SETTLE_MS): Promise<void> => {
    gc();
    await new Promise((resolve) => setTimeout(resolve, ms));
  };
  // numpy and the fast path alternate, in an order that flips every round. The reference and the
  // fresh-memory runs come apart, afterwards: interleaved, the hundreds of MB they allocate and free
  // slowed whatever ran next (numpy: 94–121 ms after other runs, 163–208 ms right after a fresh
  // run; the fast path up to a third while the reference's or a fresh run's memory was unmapped).
  const compared: Array<[string, () => Promise<Timing>]> = [
    ['numpy', () => numpy.ask<Timing>({ op: 'run', case: c.name })],
    ['fast', () => timed(async () => (previous = (await forwardFast(spec, true, { recycle: previous })) ?? previous))],
  ];
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
  return {
    name: c.name,
    numpy_ms: round2(wall('numpy')),
    reference_ms: round2(wall('reference')),
    fast_ms: round2(wall('fast')),
    fast_fresh_memory_ms: round2(wall('fastFresh')),
    gflops: round2(flopsOf(c) / wall('fast') / 1e6),
    ratio_fast_to_numpy: round2(wall('fast') / wall('numpy')),
    numpy_cpu_ms: round2(cpu('numpy')),
    fast_cpu_ms: round2(cpu('fast')),
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
  if (existsSync('/etc/debian_version')) {
    // Installed with apt-get when root, else a clear error naming the command (as `npm test` does).
    const system = (await import(join(__dirname, '..', 'scripts', 'lib', 'system.mjs'))) as { ensureDebianPackages(names: string[]): void };
    system.ensureDebianPackages(NUMPY_PACKAGES);
  }
  const numpy = new Numpy();
  const blas = await numpy.ask<Record<string, unknown>>({ op: 'blas' });
  if (blas.openblas === undefined) {
    numpy.close();
    throw new Error(
      `numpy is not running on OpenBLAS (BLAS libraries mapped: ${(blas.libraries as string[]).join(', ') || 'none'}); ` +
        `against the reference BLAS every ratio would be meaningless. On Debian: apt-get install ${NUMPY_PACKAGES.join(' ')}`,
    );
  }
  const machine = {
    cpu: cpus()[0]?.model,
    cores: cpus().length,
    memoryGiB: round2(totalmem() / 2 ** 30),
    node: process.version,
    v8: process.versions.v8,
    loadAverageAtStart: loadavg().map(round2),
    numpy: blas,
  };
  log(`machine: ${machine.cpu}, ${machine.cores} cores, node ${machine.node}, load ${machine.loadAverageAtStart.join(' ')}`);
  log(`numpy ${blas.numpy} on ${blas.openblas} (kernel ${blas.kernel}, ${blas.threads} threads): ${(blas.libraries as string[]).join(', ')}`);
  log(`medians of ${ROUNDS} interleaved rounds (reference: ${REFERENCE_ROUNDS}); forward pass with every n×n step kept\n`);
  const header = ['case', 'numpy ms', 'reference ms', 'fast ms', 'fast (fresh memory) ms', 'GFLOP/s', 'fast ÷ numpy', 'CPU ms numpy / fast'];
  log(header.join(' | '));
  const dir = mkdtempSync(join(tmpdir(), 'attention-bench-'));
  const cases: Row[] = [];
  try {
    for (const c of CASES.filter((k) => k.name.includes(CASE_FILTER))) {
      const row = await measure(c, numpy, dir);
      cases.push(row);
      const cpu = `${row.numpy_cpu_ms} / ${row.fast_cpu_ms}`;
      log([row.name, row.numpy_ms, row.reference_ms, row.fast_ms, row.fast_fresh_memory_ms, row.gflops, row.ratio_fast_to_numpy, cpu].join(' | '));
    }
  } finally {
    numpy.close();
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
