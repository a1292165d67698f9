// One read of a file as the worker reads it (parseDocument with the numbers on shared memory),
// in a process of its own so that its peak memory is its own: prints one JSON line with the read's
// wall time and the peak resident memory above what the process held before reading the file.
//   node --import tsx bench/readFile.ts FILE
import { readFileSync } from 'node:fs';
import { parseDocument } from '../src/core/parse/index';

const file = process.argv[2];
const baseline = process.memoryUsage.rss();
const started = performance.now();
const text = readFileSync(file, 'utf8');
const parse = parseDocument(text, { sharedMemory: true });
const ms = performance.now() - started;
const peak = process.resourceUsage().maxRSS * 1024;
const cells = parse.problems.reduce((n, problem) => n + problem.matrices.reduce((m, def) => m + def.value.data.length, 0), 0);
console.log(JSON.stringify({ ms, peakAboveBaseline: peak - baseline, cells, diagnostics: parse.diagnostics.map((d) => d.code) }));
