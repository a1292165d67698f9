// The compute threads of the fast path: one worker_thread per core, started on first use and
// kept (unreferenced, so they never keep a process alive) for later runs. A run hands every
// thread the same program; the threads share out each phase (fast-thread.js) and meet at a
// barrier between phases, so one message per thread per run.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { CancelledError } from '../attention';

/** One kernel call: an export of attention.wasm and its arguments before (part, parts, thread). */
export interface KernelCall {
  kernel: string;
  args: number[];
}

/** Calls that may run concurrently; the next phase starts when every thread finished this one. */
export type Phase = KernelCall[];

/** Beyond 8 threads the n×n passes are bound by memory bandwidth, not cores. */
const MAX_THREADS = 8;
/** Shares each call is cut into, per thread: enough that a core slowed by other work hands its
 * remaining shares to the others, few enough that claiming one (an atomic add) costs nothing. */
const SHARES_PER_THREAD = 8;
/** Bytes of run memories the threads may keep alive before they are replaced (ThreadPool.account). */
const REPLACE_AFTER_BYTES = 512 * 2 ** 20;

let pool: ThreadPool | undefined;

/** The kernels' two builds (build-wasm.mjs): relaxed SIMD's fused multiply-add where the engine
 * has it (VS Code desktop's Electron; Node 20 once its flag is on: `kernelsFlavour`), else 128-bit
 * SIMD; ATTENTION_LENS_KERNELS=simd128 forces the latter (its own tests, and a way around a fault). */
export type KernelsFlavour = 'relaxed' | 'simd128';
const MODULE_FILES: Record<KernelsFlavour, string> = { relaxed: 'attention-relaxed.wasm', simd128: 'attention.wasm' };

/** The .wasm files and fast-thread.js sit next to this module in src/ and next to the bundle in dist/. */
function moduleBytes(flavour: KernelsFlavour) {
  return readFileSync(join(__dirname, MODULE_FILES[flavour]));
}

let flavour: KernelsFlavour | undefined;

/** The build this engine runs: the relaxed one when it validates here, unless the plain one is forced. */
export function kernelsFlavour(): KernelsFlavour {
  flavour ??= process.env.ATTENTION_LENS_KERNELS !== 'simd128' && relaxedValidates() ? 'relaxed' : 'simd128';
  return flavour;
}

/**
 * Node 20's V8 (11.3: code-server 4.100's extension host, the command line run by Node 20)
 * has relaxed SIMD complete but behind a flag, which V8 11.4 turned on for everyone. V8 reads wasm
 * features as it validates a module, so turning the flag on now takes effect; it only lets modules
 * that use those instructions validate, so the rest of the process runs as before. Fused
 * multiply-adds took 10–15% off the head analyses of 12 × 12 heads at 1024 tokens here.
 */
function relaxedValidates(): boolean {
  const relaxed = moduleBytes('relaxed');
  if (WebAssembly.validate(relaxed)) return true;
  try {
    setFlagsFromString('--experimental-wasm-relaxed-simd');
  } catch {
    return false; // an engine without V8's flags: the plain build
  }
  return WebAssembly.validate(relaxed);
}

const compiled: Partial<Record<KernelsFlavour, WebAssembly.Module>> = {};

export function kernelsModule(which: KernelsFlavour = kernelsFlavour()): WebAssembly.Module {
  compiled[which] ??= new WebAssembly.Module(moduleBytes(which));
  return compiled[which];
}

/** This thread's instance of the kernels over each memory (pooling, runs on this thread). */
const instances = new WeakMap<WebAssembly.Memory, Record<string, (...args: number[]) => void>>();

/** The kernels instantiated on this thread over `memory`, once per memory. */
export function kernelsOn(memory: WebAssembly.Memory): Record<string, (...args: number[]) => void> {
  let kernels = instances.get(memory);
  if (!kernels) {
    kernels = new WebAssembly.Instance(kernelsModule(), { env: { memory } }).exports as Record<string, (...args: number[]) => void>;
    instances.set(memory, kernels);
  }
  return kernels;
}

/**
 * A run's phases on this thread, each call whole (one share) with thread 0's scratch: what the
 * compute threads do, without the trip to them, for a run small enough that its caller waits for
 * it synchronously.
 */
export function runPhasesHere(memory: WebAssembly.Memory, phases: Phase[]): void {
  const kernels = kernelsOn(memory);
  for (const phase of phases) for (const { kernel, args } of phase) kernels[kernel](...args, 0, 1, 0);
}

/** How many compute threads the pool has (or will have): one per core, at most MAX_THREADS. */
export function threadCount(): number {
  return Math.max(1, Math.min(MAX_THREADS, availableParallelism()));
}

/** The pool, its threads started on first use: a process that never runs a fast problem (they
 * all go to the reference engine) never starts them. */
export function threadPool(): ThreadPool {
  pool ??= new ThreadPool(threadCount());
  return pool;
}

/**
 * Starts the compute threads and has each instantiate the kernels, without waiting: a caller that
 * will run the fast path after other work (a model run reads its folder and builds its tokenizer
 * first) pays the threads' start (~300 ms here) on the other core meanwhile, not at its first run.
 */
export function warmThreads(): void {
  threadPool()
    .run(new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true }), [])
    .catch(() => undefined); // a failure shows again, and is reported, at the first real run
}

interface ThreadReply {
  error: string | null;
  cancelled: boolean;
}

export class ThreadPool {
  private workers: Worker[] = [];
  private queue: Promise<void> = Promise.resolve();
  /** The memories the current threads have run on, and their bytes. */
  private seen = new WeakSet<WebAssembly.Memory>();
  private seenBytes = 0;
  /** Threads started so far, replacements included. */
  threadsStarted = 0;

  /** Shares every kernel call is cut into: a kernel's (part, parts) ranges over them. */
  readonly parts: number;

  constructor(
    readonly size: number,
    private readonly replaceAfterBytes = REPLACE_AFTER_BYTES,
    /** The build the threads run (the benchmark runs both side by side). */
    readonly flavour: KernelsFlavour = kernelsFlavour(),
  ) {
    this.parts = size * SHARES_PER_THREAD;
    this.startThreads();
  }

  private startThreads(): void {
    this.workers = Array.from({ length: this.size }, () => {
      const worker = new Worker(join(__dirname, 'fast-thread.js'));
      worker.unref();
      return worker;
    });
    this.threadsStarted += this.size;
    this.seen = new WeakSet();
    this.seenBytes = 0;
  }

  /**
   * A thread keeps every memory it ran on alive until its isolate collects the wrapper, and an
   * idle compute thread's isolate almost never collects (it allocates next to nothing): ten
   * 4096-token runs on fresh memory kept 2.0 GB resident, which terminating the threads gave back.
   * So once the threads have run on more than `replaceAfterBytes` of distinct memories, they are
   * replaced after the run (the new pair is ready about 150 ms later here, before a next edit).
   */
  private account(memory: WebAssembly.Memory): void {
    if (this.seen.has(memory)) return;
    this.seen.add(memory);
    this.seenBytes += memory.buffer.byteLength;
    if (this.seenBytes <= this.replaceAfterBytes) return;
    for (const worker of this.workers) void worker.terminate();
    this.startThreads();
  }

  /**
   * Runs the phases on every thread; runs are queued, one at a time. Once `cancelFlag[0]` is
   * non-zero the threads claim no more work, and the run rejects with RunCancelled as soon as the
   * shares under way end (the memory is then no longer written: it may be reused).
   */
  run(memory: WebAssembly.Memory, phases: Phase[], cancelFlag?: Int32Array): Promise<void> {
    const result = this.queue.then(() => this.runNow(memory, phases, cancelFlag)).finally(() => this.account(memory));
    this.queue = result.catch(() => undefined);
    return result;
  }

  private runNow(memory: WebAssembly.Memory, phases: Phase[], cancelFlag?: Int32Array): Promise<void> {
    const module = kernelsModule(this.flavour);
    const control = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT); // barrier and next share
    const replies = this.workers.map(
      (worker, thread) =>
        new Promise<ThreadReply>((resolve, reject) => {
          const onError = (error: Error): void => {
            worker.off('message', onMessage);
            reject(error);
          };
          const onMessage = (reply: ThreadReply): void => {
            worker.off('error', onError);
            worker.unref();
            resolve(reply);
          };
          worker.once('message', onMessage);
          worker.once('error', onError);
          worker.ref(); // a pending run keeps the process alive until it answers
          worker.postMessage({ module, runMemory: memory, control, cancelFlag, phases, parts: this.parts, thread, threads: this.size });
        }),
    );
    return Promise.all(replies).then((all) => {
      const failed = all.find((reply) => reply.error !== null);
      if (failed) throw new Error(`fast attention kernel failed: ${failed.error}`);
      if (all.some((reply) => reply.cancelled)) throw new CancelledError();
    });
  }
}
