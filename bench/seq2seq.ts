// Encoder–decoder models against PyTorch in the same run (issue 43's bench lines): a
// Marian-opus-mt-en-de-shaped folder (74M) and a T5-small-shaped one (60M), random weights
// (scripts/gen-bench-models.mjs), each on a 64-token source: our whole run (encoder, decoder on a
// 16-token target, every kind's heads pooled for the views) against PyTorch's float32 forward of
// the same folder (scripts/gen_seq2seq_fixtures.py --time: the fixture script's forward written
// from transformers' modeling files), and greedy generation per token — ours with the decoder's
// key/value cache (the loop alone, not the recording pass after it) against PyTorch's loop with
// its cache — PyTorch on the fastest OpenBLAS kernel (bench/peers.ts). Not a test: nothing here
// asserts a time.
//
//     npm run bench:seq2seq [-- --rounds N]
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { makeDeferredSessions } from '../src/core/engine/native/linear';
import { runModel } from '../src/core/model/run';
import { folderFiles } from '../src/node/modelFiles';
import { ensurePeers, fastestOpenBlas } from './peers';
// @ts-expect-error: a plain .mjs script without types
import { writeFolder } from '../scripts/gen-bench-models.mjs';

const ROOT = join(__dirname, '..');
const OUT = join(ROOT, 'test-output', 'models-big');
const SCRIPT = join(ROOT, 'scripts', 'gen_seq2seq_fixtures.py');
const SOURCE_TOKENS = 64;
const TARGET_TOKENS = 16;
const GENERATE = 32;
const CASES = [
  { name: 'opus-mt-en-de', label: 'Marian opus-mt-en-de-shaped (74M)', start: 58100 },
  { name: 't5-small', label: 'T5-small-shaped (60M)', start: 0 },
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
/** Deterministic ids inside both vocabularies, clear of the special tokens. */
const idsOf = (n: number, salt: number) => Array.from({ length: n }, (_, i) => 100 + ((i * 7919 + salt) % 30000));

async function main(): Promise<void> {
  const at = process.argv.indexOf('--rounds');
  const rounds = at > 0 ? Number(process.argv[at + 1]) : 3;
  ensurePeers();
  const blas = fastestOpenBlas();
  mkdirSync(OUT, { recursive: true });
  console.log(`load ${loadavg()[0].toFixed(2)}; PyTorch on OpenBLAS's ${blas.name} kernel; ${SOURCE_TOKENS}-token source, ${TARGET_TOKENS}-token target, ${GENERATE} generated; ${rounds} rounds each, medians`);
  console.log('| case | ours: forward, first run / sessions made after it / later runs (ms) | PyTorch forward (ms) | ours ÷ PyTorch | ours: generation (ms/token) | PyTorch with its cache (ms/token) | ours ÷ PyTorch |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const { name, label, start } of CASES) {
    const folder: string = writeFolder(OUT, name);
    const source = idsOf(SOURCE_TOKENS, 1);
    const target = [start, ...idsOf(TARGET_TOKENS - 1, 2)];
    writeFileSync(join(folder, 'bench.json'), JSON.stringify({ source_ids: source, target_ids: target, generate: GENERATE }));
    const forward: number[] = [];
    const perToken: number[] = [];
    let packMs = 0;
    for (let round = 0; round < rounds; round++) {
      const started = performance.now();
      await runModel(folderFiles(folder), { ids: source, target: { ids: target } });
      forward.push(performance.now() - started);
      // What the idle time after a first run does in the editor: the sessions of the weights it fed are made.
      if (round === 0) {
        const packing = performance.now();
        await makeDeferredSessions();
        packMs = performance.now() - packing;
      }
      const generated = await runModel(folderFiles(folder), { ids: source, target: { generate: GENERATE } });
      perToken.push((generated.timings.generateMs ?? NaN) / (generated.timings.generatedTokens ?? NaN));
    }
    const peer = spawnSync('/usr/bin/python3', [SCRIPT, folder, '--time', String(rounds)], { encoding: 'utf8', env: blas.env });
    if (peer.status !== 0) throw new Error(`PyTorch's run failed: ${peer.stderr}`);
    const torch = JSON.parse(peer.stdout) as { forward_ms: number; generate_ms_per_token: number };
    const later = median(forward.slice(1).length ? forward.slice(1) : forward);
    const ours = median(perToken);
    console.log(
      `| ${label} | ${forward[0].toFixed(0)} / ${packMs.toFixed(0)} / ${later.toFixed(0)} | ${torch.forward_ms.toFixed(0)} | ${(later / torch.forward_ms).toFixed(2)}× | ${ours.toFixed(1)} | ${torch.generate_ms_per_token.toFixed(1)} | ${(ours / torch.generate_ms_per_token).toFixed(2)}× |`,
    );
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
