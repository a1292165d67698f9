// `npx tsx bench/linear.ts [--repeats N]`: the native LinearBackend (ONNX Runtime, native/linear.ts)
// on the products of a GPT-2-small layer at 512 tokens (768 wide: QKV, attention projection, MLP
// up and down), float32, against numpy's np.matmul into a preallocated output (bench/peer_matmul.py)
// on the same number of threads, one after the other. Prints medians, GFLOP/s and the ratio.
// `--against-wasm`: instead, ONNX Runtime and the WebAssembly gemm interleaved in this process on a
// GPT-2-small layer's products at 128, 512 and 1024 tokens and the LM head's one row, by CPU time
// (every thread) and wall (the choice in model/chosenBackend.ts rests on it). A measurement, not a
// test: nothing is asserted.
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { nativeLinearBackend } from '../src/core/engine/native/linear';
import { nativeThreads } from '../src/core/engine/native/runtime';
import type { LinearBackend } from '../src/core/model/backend';
import { WasmLinearBackend } from '../src/core/model/wasmBackend';
import { random } from './inputs';
import { ensurePeers } from './peers';

const repeatsFlag = process.argv.indexOf('--repeats');
const REPEATS = repeatsFlag === -1 ? 15 : Number(process.argv[repeatsFlag + 1]);
const TOKENS = 512;
/** [m, k, n] of each product; B is [k, n] (GPT-2's Conv1D layout). */
const SHAPES: Array<[string, number, number, number]> = [
  ['c_attn (QKV)', TOKENS, 768, 2304],
  ['attn c_proj', TOKENS, 768, 768],
  ['mlp c_fc', TOKENS, 768, 3072],
  ['mlp c_proj', TOKENS, 3072, 768],
];

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1];
const f32 = (rows: number, cols: number, seed: number): Float32Array => Float32Array.from(random(rows, cols, seed, 1).data);

async function main(): Promise<void> {
  const backend = nativeLinearBackend();
  if (!backend) throw new Error('ONNX Runtime does not load here');
  const threads = nativeThreads();
  const ours: number[] = [];
  for (const [, m, k, n] of SHAPES) {
    const a = f32(m, k, 1);
    const b = f32(k, n, 2);
    const bias = f32(1, n, 3);
    await backend.matmul(a, b, m, k, n, false, bias); // warm-up: the session
    const times: number[] = [];
    for (let r = 0; r < REPEATS; r++) {
      const started = performance.now();
      await backend.matmul(a, b, m, k, n, false, bias);
      times.push(performance.now() - started);
    }
    ours.push(median(times));
  }
  backend.dispose();
  ensurePeers();
  const peer = spawnSync('/usr/bin/python3', [join(__dirname, 'peer_matmul.py')], {
    input: JSON.stringify({ shapes: SHAPES.map(([, m, k, n]) => [m, k, n]), repeats: REPEATS, threads }),
    encoding: 'utf8',
  });
  if (peer.status !== 0) throw new Error(`bench/peer_matmul.py: ${peer.stderr}`);
  const numpy = JSON.parse(peer.stdout) as { numpy: string; kernel: string | null; results: Array<{ median_ms: number }> };
  console.log(`LinearBackend on ONNX Runtime vs numpy ${numpy.numpy} (OpenBLAS kernel ${numpy.kernel}, output preallocated), float32, ${threads} threads, medians of ${REPEATS}; load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  console.log('product | m×k·k×n | ORT ms (with bias) | numpy ms | ORT ÷ numpy | ORT GFLOP/s');
  SHAPES.forEach(([name, m, k, n], i) => {
    const gflops = (2 * m * k * n) / ours[i] / 1e6;
    console.log(`${name} | ${m}×${k}·${k}×${n} | ${ours[i].toFixed(2)} | ${numpy.results[i].median_ms.toFixed(2)} | ${(ours[i] / numpy.results[i].median_ms).toFixed(2)} | ${gflops.toFixed(1)}`);
  });
  const total = ours.reduce((x, y) => x + y, 0);
  const numpyTotal = numpy.results.reduce((x, y) => x + y.median_ms, 0);
  console.log(`one layer's products: ORT ${total.toFixed(1)} ms, numpy ${numpyTotal.toFixed(1)} ms (${(total / numpyTotal).toFixed(2)}); 12 layers ≈ ${(12 * total).toFixed(0)} ms`);
}

/** CPU milliseconds of the process so far, every thread. */
const cpuMs = (): number => ((used) => (used.user + used.system) / 1000)(process.cpuUsage());

async function againstWasm(): Promise<void> {
  const native = nativeLinearBackend();
  if (!native) throw new Error('ONNX Runtime does not load here');
  const backends: LinearBackend[] = [native, new WasmLinearBackend()];
  console.log(`ONNX Runtime (${nativeThreads()} threads) and the WebAssembly gemm, interleaved, medians of ${REPEATS}; load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  console.log('m×k·k×n | ORT CPU ms (wall) | wasm CPU ms (wall) | ORT GFLOP per CPU-second | wasm | wasm ÷ ORT, CPU');
  const products: Array<[number, number, number, boolean]> = [[1, 768, 8192, true]];
  for (const tokens of [128, 512, 1024]) for (const [, , k, n] of SHAPES) products.push([tokens, k, n, false]);
  for (const [m, k, n, transposed] of products) {
    const a = f32(m, k, 1);
    const b = f32(k, n, 2);
    const bias = transposed ? undefined : f32(1, n, 3);
    const cpu: number[][] = backends.map(() => []);
    const wall: number[][] = backends.map(() => []);
    for (const backend of backends) await backend.matmul(a, b, m, k, n, transposed, bias); // warm-up: sessions, memory
    for (let r = 0; r < REPEATS; r++) {
      for (const [i, backend] of backends.entries()) {
        const [started, startedCpu] = [performance.now(), cpuMs()];
        await backend.matmul(a, b, m, k, n, transposed, bias);
        wall[i].push(performance.now() - started);
        cpu[i].push(cpuMs() - startedCpu);
      }
    }
    const [ortCpu, wasmCpu] = cpu.map(median);
    const rate = (ms: number) => ((2 * m * k * n) / ms / 1e6).toFixed(1);
    console.log(`${m}×${k}·${k}×${n}${transposed ? 'ᵀ' : ''} | ${ortCpu.toFixed(1)} (${median(wall[0]).toFixed(1)}) | ${wasmCpu.toFixed(1)} (${median(wall[1]).toFixed(1)}) | ${rate(ortCpu)} | ${rate(wasmCpu)} | ${(wasmCpu / ortCpu).toFixed(2)}`);
  }
  for (const backend of backends) backend.dispose();
}

(process.argv.includes('--against-wasm') ? againstWasm() : main()).then(() => process.exit(0)).catch((error: unknown) => {
  console.error(`bench/linear.ts: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
