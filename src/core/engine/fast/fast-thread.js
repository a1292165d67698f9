// One compute thread of the fast path (plain JavaScript so it runs unbundled, from the source
// tree under tsx as from dist/). It instantiates the kernels over the run's shared memory and
// works through every phase with the other threads, meeting them at a barrier between phases (a
// phase reads what the previous one wrote).
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

/** Indices into the run's control words (pool.ts). */
const ARRIVED = 0;
const GENERATION = 1;
const NEXT_SHARE = 2;

parentPort.on('message', ({ module, runMemory, control, cancelFlag, phases, parts, thread, threads }) => {
  const state = new Int32Array(control);
  let error = null;
  let cancelled = false;
  let kernels = null;
  try {
    // A fresh instance per run: each run has its own memory (instantiating is cheap, the
    // compiled code is shared).
    kernels = new WebAssembly.Instance(module, { env: { memory: runMemory } }).exports;
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  for (const phase of phases) {
    // Every call of the phase is cut into `parts` shares, and each thread claims the next share
    // until none is left: a core that other work slows down takes fewer shares instead of making
    // the other wait at the barrier (both run at nice 10 and lose time to everything else).
    // Several shares per thread also let V8 switch each kernel to optimised code between calls.
    // A cancelled run claims nothing more; after a failure the thread still meets the others at
    // every barrier, so none waits forever.
    const shares = phase.length * parts;
    for (let share; !error && !cancelled && (share = Atomics.add(state, NEXT_SHARE, 1)) < shares; ) {
      if (cancelFlag && Atomics.load(cancelFlag, 0) !== 0) {
        cancelled = true;
        break;
      }
      const { kernel, args } = phase[Math.floor(share / parts)];
      try {
        kernels[kernel](...args, share % parts, parts, thread); // `thread`: for per-thread scratch
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
    }
    barrier(state, threads);
  }
  parentPort.postMessage({ error, cancelled });
});

/** Generation barrier; the last thread to arrive also resets the share counter for the next phase
 * (every thread has stopped claiming by then). */
function barrier(state, threads) {
  const generation = Atomics.load(state, GENERATION);
  if (Atomics.add(state, ARRIVED, 1) === threads - 1) {
    Atomics.store(state, ARRIVED, 0);
    Atomics.store(state, NEXT_SHARE, 0);
    Atomics.add(state, GENERATION, 1);
    Atomics.notify(state, GENERATION);
  } else {
    while (Atomics.load(state, GENERATION) === generation) Atomics.wait(state, GENERATION, generation);
  }
}
