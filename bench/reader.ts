// Reader speed: a 1024×1024 matrix written as text (~8 MB of nested lists, like a pasted numpy
// print-out) read by parseDocument, median of several runs (after one warm-up). Prints the median
// wall time in ms and the median CPU time of this process (which other jobs on a shared machine
// inflate less), or one JSON line with --json, and the time Python's json + numpy take for the
// same literal, for scale.
//   npx tsx bench/reader.ts [--json] [--size N]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from '../src/core/parse/index';

const json = process.argv.includes('--json');
const sizeFlag = process.argv.indexOf('--size');
const size = sizeFlag === -1 ? 1024 : Number(process.argv[sizeFlag + 1]);
const RUNS = 7;

/** Deterministic numbers in numpy's print style (`-0.575`), seeded LCG so every run reads the same text. */
function matrixText(n: number): string {
  let seed = 12345;
  const rows: string[] = [];
  for (let i = 0; i < n; i++) {
    const row: string[] = [];
    for (let j = 0; j < n; j++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      row.push(((seed / 2 ** 32) * 2 - 1).toFixed(4));
    }
    rows.push(`    [${row.join(', ')}]`);
  }
  return `# attention: name="bench"\nX = np.array([\n${rows.join(',\n')}\n])\n`;
}

const text = matrixText(size);
const times: number[] = [];
const cpuTimes: number[] = [];
let cells = 0;
for (let run = -1; run < RUNS; run++) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = parseDocument(text);
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  if (run >= 0) {
    times.push(elapsed);
    cpuTimes.push((used.user + used.system) / 1000);
  }
  cells = result.problems[0]?.matrices[0]?.value.data.length ?? 0;
}
if (cells !== size * size) throw new Error(`read ${cells} cells, expected ${size * size}`);
const medianOf = (values: number[]): number => values.slice().sort((a, b) => a - b)[values.length >> 1];
const median = medianOf(times);

const numpyMs = timeNumpy(text);
const report = {
  benchmark: 'reader',
  size: `${size}x${size}`,
  megabytes: Number((text.length / 1e6).toFixed(2)),
  medianMs: Number(median.toFixed(1)),
  medianCpuMs: Number(medianOf(cpuTimes).toFixed(1)),
  numpyMedianMs: numpyMs === undefined ? null : Number(numpyMs.toFixed(1)),
  ratioToNumpy: numpyMs === undefined ? null : Number((median / numpyMs).toFixed(2)),
};
if (json) console.log(JSON.stringify(report));
else {
  console.log(`reader: ${report.size} (${report.megabytes} MB) median ${report.medianMs} ms (CPU ${report.medianCpuMs} ms) over ${RUNS} runs`);
  if (numpyMs !== undefined) console.log(`python json.loads + np.array on the same literal: ${report.numpyMedianMs} ms (ratio ${report.ratioToNumpy})`);
}

/** Median ms of Python reading the same literal with json + numpy, or undefined without python3/numpy. */
function timeNumpy(source: string): number | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'reader-bench-'));
  try {
    const literal = join(dir, 'literal.json');
    writeFileSync(literal, source.slice(source.indexOf('(') + 1, source.lastIndexOf(')')));
    const script = [
      'import json, sys, time, numpy as np',
      'text = open(sys.argv[1]).read()',
      'times = []',
      `for _ in range(${RUNS}):`,
      '    t = time.perf_counter(); np.array(json.loads(text)); times.append((time.perf_counter() - t) * 1000)',
      'print(sorted(times)[len(times) // 2])',
    ].join('\n');
    const python = spawnSync('/usr/bin/python3', ['-c', script, literal], { encoding: 'utf8' });
    return python.status === 0 ? Number(python.stdout.trim()) : undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
