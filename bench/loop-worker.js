// The engine side of the event-loop measurement in bench/run.ts: a worker_thread that, like the
// extension's engine worker, runs the fast path on a spec it is sent and posts the result back.
// Plain JavaScript that registers tsx, so it can load the TypeScript sources without a build.
'use strict';
require('tsx/cjs');
const { parentPort } = require('node:worker_threads');
const { runAttentionFast } = require('../src/core/engine/fast/index.ts');

parentPort.on('message', async (spec) => {
  const result = await runAttentionFast(spec);
  parentPort.postMessage({ elapsedMs: result.elapsedMs, result });
});
