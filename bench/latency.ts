// `tsx bench/latency.ts [--json]`: what the user waits for, through the real worker client
// (src/worker/client.ts) and worker (src/worker/main.ts), on a warm worker:
//   - edit to result: read the document's text, build the spec, run it in the worker and receive
//     the result, for the 3-token worked example and the 512-token example;
//   - the round trip of a 1024-token float32 problem (Q, K, V given, d_k = 64): post, compute
//     with every n×n step kept, result back on this thread.
// Medians of RUNS runs after WARM_UP runs, PAUSE_MS apart. A benchmark, not a test: nothing is asserted.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from '../src/core/parse';
import { buildSpec } from '../src/core/spec';
import type { AttentionSpec } from '../src/core/types';
import { AttentionWorker } from '../src/worker/client';
import { random } from './inputs';

const json = process.argv.includes('--json');
const RUNS = 5;
const WARM_UP = 2;
/** Pause between runs, as between two edits (the extension waits for typing to pause anyway). */
const PAUSE_MS = 300;
const root = join(__dirname, '..');

export interface Latency {
  name: string;
  median_ms: number;
  /** Medians of the parts: reading the text and building the spec; the worker round trip. */
  read_ms: number;
  round_trip_ms: number;
  /** Compute time the engine reports (inside the worker). */
  compute_ms: number;
  samples_ms: number[];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

function specFromText(text: string): AttentionSpec {
  const [problem] = parseDocument(text).problems;
  const { spec } = buildSpec(problem);
  if (!spec) throw new Error('the benchmark document has no computable problem');
  return spec;
}

/** `text` given: edit to result (the text is read on every run); else the spec's round trip. */
async function measure(worker: AttentionWorker, name: string, source: { text: string } | { spec: AttentionSpec }): Promise<Latency> {
  const samples: { total: number; read: number; trip: number; compute: number }[] = [];
  for (let k = 0; k < WARM_UP + RUNS; k++) {
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    const started = performance.now();
    const spec = 'text' in source ? specFromText(source.text) : source.spec;
    const read = performance.now();
    const [outcome] = await worker.run(name, [{ index: 0, spec }]).outcomes;
    const done = performance.now();
    if (!('result' in outcome)) throw new Error(`${name}: ${outcome.error}`);
    if (k >= WARM_UP) samples.push({ total: done - started, read: read - started, trip: done - read, compute: outcome.result.elapsedMs });
  }
  return {
    name,
    median_ms: round2(median(samples.map((s) => s.total))),
    read_ms: round2(median(samples.map((s) => s.read))),
    round_trip_ms: round2(median(samples.map((s) => s.trip))),
    compute_ms: round2(median(samples.map((s) => s.compute))),
    samples_ms: samples.map((s) => round2(s.total)),
  };
}

async function main(): Promise<void> {
  const worker = new AttentionWorker(join(__dirname, 'latency-worker.cjs'), { maxOldGenerationSizeMb: 2048 }, () => undefined);
  const example = (file: string): { text: string } => ({ text: readFileSync(join(root, 'examples', file), 'utf8') });
  const options = { heads: 1, score: 'scaled_dot' as const, dtype: 'float32' as const };
  const rows: Latency[] = [];
  try {
    rows.push(await measure(worker, 'edit to result: 3 tokens (01-worked-example.md)', example('01-worked-example.md')));
    rows.push(await measure(worker, 'edit to result: 512 tokens (large/512-tokens.py)', example('large/512-tokens.py')));
    const spec: AttentionSpec = { options, Q: random(1024, 64, 1, 1), K: random(1024, 64, 2, 1), V: random(1024, 64, 3, 1) };
    rows.push(await measure(worker, 'round trip: sdpa n=1024 float32', { spec }));
  } finally {
    worker.dispose();
  }
  if (json) {
    console.log(JSON.stringify({ runs: RUNS, cases: rows }));
    return;
  }
  console.log(`through the worker client, warm worker, medians of ${RUNS} runs ${PAUSE_MS} ms apart`);
  console.log('case | total ms | read + spec ms | worker round trip ms | compute ms (in worker)');
  for (const r of rows) console.log([r.name, r.median_ms, r.read_ms, r.round_trip_ms, r.compute_ms].join(' | '));
}

void main();
