// Child process of pool.test.ts (it needs --expose-gc, which mocha's process lacks): runs the
// compute threads on many fresh memories, each dropped after its run, and prints how much the
// process's resident memory grew and how many threads were started.
require('tsx/cjs');
const { ThreadPool } = require('../../../src/core/engine/fast/pool.ts');

const MEMORY_BYTES = 32 * 2 ** 20;
const RUNS = 16;
const budget = Number(process.argv[2]);

async function main() {
  const pool = new ThreadPool(2, budget);
  await pool.run(new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true }), []); // threads up
  global.gc();
  const before = process.memoryUsage().rss;
  for (let i = 0; i < RUNS; i++) {
    const pages = MEMORY_BYTES / 65536;
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    new Uint8Array(memory.buffer).fill(1); // every page resident
    await pool.run(memory, []); // each thread instantiates the kernels on it
    global.gc();
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  global.gc();
  const grownMiB = (process.memoryUsage().rss - before) / 2 ** 20;
  console.log(JSON.stringify({ grownMiB, threadsStarted: pool.threadsStarted, droppedMiB: (RUNS * MEMORY_BYTES) / 2 ** 20 }));
  process.exit(0);
}
void main();
