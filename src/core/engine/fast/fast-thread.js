// One compute thread of the fast path (plain JavaScript so it runs unbundled, from the source
// tree under tsx as from dist/). It instantiates the kernels over the run's shared memory and
// runs its share of every phase; `threads` instances run the same program, meeting at a barrier
// between phases (a phase reads what the previous one wrote).
'use strict';
const { readlinkSync } = require('node:fs');
const { setPriority } = require('node:os');
const { parentPort } = require('node:worker_threads');

/**
 * Compute threads yield to the editor: at nice 10 they lose the CPU to the extension host's and
 * the UI's threads whenever those wake (event-loop delay during a 4096-token run on this loaded
 * 2-core machine: max ≈ 100 ms at nice 0, ≈ 15 ms at nice 10). An idle machine runs them as fast.
 * Linux names the thread in /proc/thread-self; elsewhere the default priority stays.
 */
const COMPUTE_NICE = 10;
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), COMPUTE_NICE);
} catch {
  // not Linux, or not permitted: run at the default priority
}

/** Calls per kernel per thread: V8 switches a wasm function to optimised code between calls. */
const CHUNKS = 8;

parentPort.on('message', ({ module, runMemory, control, phases, thread, threads }) => {
  const state = new Int32Array(control);
  let error = null;
  let kernels = null;
  try {
    // A fresh instance per run: each run has its own memory (instantiating is cheap, the
    // compiled code is shared).
    kernels = new WebAssembly.Instance(module, { env: { memory: runMemory } }).exports;
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  for (const phase of phases) {
    // After a failure the thread still meets the others at every barrier, so none waits forever.
    if (!error) {
      try {
        for (const { kernel, args } of phase) {
          for (let chunk = 0; chunk < CHUNKS; chunk++) kernels[kernel](...args, thread + threads * chunk, threads * CHUNKS);
        }
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
    }
    barrier(state, threads);
  }
  parentPort.postMessage({ error });
});

/** Generation barrier over state = [arrived, generation]. */
function barrier(state, threads) {
  const generation = Atomics.load(state, 1);
  if (Atomics.add(state, 0, 1) === threads - 1) {
    Atomics.store(state, 0, 0);
    Atomics.add(state, 1, 1);
    Atomics.notify(state, 1);
  } else {
    while (Atomics.load(state, 1) === generation) Atomics.wait(state, 1, generation);
  }
}
