// ONNX Runtime's CPU provider, loaded on first use in the thread that computes (the worker, the
// CLI, a test), never on the extension host's. It may be absent (a web extension, the universal
// .vsix, a platform without binaries) or fail to load (an old glibc): then `nativeRuntime()` says
// why once and the WebAssembly kernels answer everything. Sessions are cached by their graph's key,
// one per shape class.
import { availableParallelism } from 'node:os';
import type * as Ort from 'onnxruntime-node';
import type { Graph } from './graph';

/** Which backend runs what: chosen by measurement (`auto`), or forced by ATTENTION_LENS_BACKEND. */
export type BackendChoice = 'auto' | 'native' | 'wasm';

export function backendChoice(): BackendChoice {
  const forced = process.env.ATTENTION_LENS_BACKEND;
  return forced === 'native' || forced === 'wasm' ? forced : 'auto';
}

export type NativeRuntime = { ok: true; ort: typeof Ort } | { ok: false; reason: string };

let runtime: NativeRuntime | undefined;

/** ONNX Runtime, or why it is not here; looked up once per thread. */
export function nativeRuntime(): NativeRuntime {
  runtime ??= load();
  return runtime;
}

function load(): NativeRuntime {
  try {
    // Required at run time, not bundled: the package carries its platform's binaries beside dist/.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ort = require('onnxruntime-node') as typeof Ort;
    ort.env.logLevel = 'error';
    return { ok: true, ort };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message.split('\n')[0] : String(error) };
  }
}

/** ONNX Runtime's intra-op threads: every core, but one left to the editor when there are more than 2. */
export function nativeThreads(cores = availableParallelism()): number {
  return cores > 2 ? cores - 1 : cores;
}

const sessions = new Map<string, Promise<Ort.InferenceSession>>();

/** The session of a graph, created once per key (the graph is only built on a miss). */
export function sessionFor(ort: typeof Ort, key: string, build: () => Graph, options: Ort.InferenceSession.SessionOptions = {}): Promise<Ort.InferenceSession> {
  let session = sessions.get(key);
  if (!session) {
    session = ort.InferenceSession.create(build().encode(), {
      ...options,
      executionProviders: ['cpu'],
      intraOpNumThreads: nativeThreads(),
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      // Idle threads sleep rather than spin for the next run: the cores go back to the editor (and
      // to other work on a shared machine) the moment a run ends.
      extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
    });
    // A graph ONNX Runtime refuses is not cached: the next run reports it again.
    session.catch(() => sessions.delete(key));
    sessions.set(key, session);
  }
  return session;
}

/** Releases the cached sessions whose keys start with `prefix` (a LinearBackend's dispose; tests). */
export async function releaseSessions(prefix = ''): Promise<void> {
  const released = [...sessions].filter(([key]) => key.startsWith(prefix));
  for (const [key] of released) sessions.delete(key);
  await Promise.all(released.map(([, session]) => session.then((s) => s.release(), () => undefined)));
}

/** How many sessions are cached whose keys start with `prefix` (tests: one per shape class, not per size). */
export function cachedSessions(prefix = ''): number {
  return [...sessions.keys()].filter((key) => key.startsWith(prefix)).length;
}
