// Big files: for number files of about 1, 9, 45 and 200 MB (one `X = [[…], …]` of 512 columns, numpy's
// print style, written here and deleted after), the reader's speed and peak memory (bench/readFile.ts,
// a process per read), numpy.loadtxt and json.loads + np.array on the same numbers as the anchor,
// and — for the sizes an editor can open (VS Code syncs files up to 50 MB to extensions) — the
// extension host's event-loop delay while the real worker reads the file and then while the user
// types in it: the host does what DocumentAnalyzer does (the text in 1 MB slices, one per turn;
// then each keystroke's edit, a read after every sixth, as the 300 ms debounce does at 50 ms a
// key) and receives each reading. For contrast, how long reading on the host blocked it before:
// the reader's time (the extension read a document on the host, in one go). And the CLI on the
// same file, `attention-lens run FILE` (dist/cli.js, when built): seconds, exit, peak memory.
//   node --import tsx bench/bigFiles.ts [--json] [--sizes 1,9,45,200]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { AttentionWorker } from '../src/worker/client';
import { writeNumberFile } from './inputs';

const json = process.argv.includes('--json');
const sizesFlag = process.argv.indexOf('--sizes');
const SIZES_MB = sizesFlag === -1 ? [1, 9, 45, 200] : process.argv[sizesFlag + 1].split(',').map(Number);
const COLS = 512;
/** Bytes per number as written (`-0.5753, `), to size the files. */
const BYTES_PER_NUMBER = 8.5;
const EDITOR_LIMIT_MB = 50;
const SLICE_CHARS = 2 ** 20;
const KEYSTROKES = 30;
const KEY_INTERVAL_MS = 50;
const READ_EVERY = 6;
const CLI = join(__dirname, '..', 'dist', 'cli.js');

const round = (value: number, digits = 1) => Number(value.toFixed(digits));
void main();

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'big-files-bench-'));
  const rows: Record<string, unknown>[] = [];
  try {
    for (const sizeMB of SIZES_MB) {
      const file = join(dir, `x${sizeMB}.py`);
      const bytes = writeNumberFile(file, 'X', Math.max(1, Math.round((sizeMB * 2 ** 20) / (COLS * BYTES_PER_NUMBER))), COLS);
      const reader = readInChild(file);
      const anchors = pythonAnchors(file);
      const row: Record<string, unknown> = {
        sizeMB: round(bytes / 2 ** 20),
        readerMs: round(reader.ms),
        readerMBps: round(bytes / 2 ** 20 / (reader.ms / 1000)),
        peakAboveBaselineMB: round(reader.peakAboveBaseline / 2 ** 20),
        peakPerFileByte: round(reader.peakAboveBaseline / bytes, 2),
        numpyLoadtxtMs: anchors?.loadtxt ?? null,
        jsonLoadsNumpyMs: anchors?.json ?? null,
      };
      if (existsSync(CLI)) Object.assign(row, cliRun(file));
    if (bytes <= EDITOR_LIMIT_MB * 2 ** 20) Object.assign(row, { hostReadMsBefore: row.readerMs }, await hostDelay(file));
      rows.push(row);
      if (!json) console.log(JSON.stringify(row));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
}
  const report = { benchmark: 'bigFiles', loadAverage: loadavg().map((x) => round(x, 2)), rows };
  if (json) console.log(JSON.stringify(report));
  else console.log(`load average at the end: ${report.loadAverage.join(' ')}`);
}

/** `attention-lens run FILE` as a user runs it (the built dist/cli.js): seconds, exit status, and
 * its error lines. */
function cliRun(file: string): Record<string, unknown> {
  const started = performance.now();
  const run = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, CLI, 'run', file], { encoding: 'utf8', maxBuffer: 2 ** 26 });
  const peakKB = Number(run.stderr.trim().split('\n').pop());
  const errors = [...run.stdout.split('\n'), ...run.stderr.split('\n').slice(0, -1)].filter((line) => /: error: |^attention-lens:/.test(line));
  return { cliSeconds: round((performance.now() - started) / 1000), cliExit: run.status, cliPeakRssMB: round(peakKB / 1024), cliErrors: errors.map((line) => line.trim()) };
}

function readInChild(file: string): { ms: number; peakAboveBaseline: number; cells: number } {
  const child = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, 'readFile.ts'), file], { encoding: 'utf8', maxBuffer: 2 ** 24 });
  if (child.status !== 0) throw new Error(`bench/readFile.ts failed: ${child.stderr}`);
  return JSON.parse(child.stdout);
}

/** Milliseconds numpy.loadtxt (rows with their brackets stripped) and json.loads + np.array take. */
function pythonAnchors(file: string): { loadtxt: number; json: number } | undefined {
  const script = [
    'import json, sys, time, numpy as np',
    'path = sys.argv[1]',
    't = time.perf_counter()',
    "a = np.loadtxt((line.strip().strip('[],') for line in open(path) if line.lstrip().startswith('[')), delimiter=',')",
    'loadtxt = (time.perf_counter() - t) * 1000',
    'del a',
    'text = open(path).read()',
    't = time.perf_counter()',
    "b = np.array(json.loads(text[text.index('['):]))",
    'loads = (time.perf_counter() - t) * 1000',
    "print(json.dumps({'loadtxt': round(loadtxt, 1), 'json': round(loads, 1)}))",
  ].join('\n');
  const python = spawnSync('/usr/bin/python3', ['-c', script, file], { encoding: 'utf8' });
  return python.status === 0 ? JSON.parse(python.stdout) : undefined;
}

/** The host's event-loop delay while the real worker reads the file and while the user types. */
async function hostDelay(file: string): Promise<Record<string, number>> {
  const text = readFileSync(file, 'utf8');

  const worker = new AttentionWorker(join(__dirname, 'latency-worker.cjs'), { maxOldGenerationSizeMb: 2048 }, () => undefined);
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  try {
    histogram.enable();
    let longestSendMs = 0;
    for (let offset = 0; offset === 0 || offset < text.length; offset += SLICE_CHARS) {
      const sent = performance.now();
      worker.sendText('doc', 1, offset, text.slice(offset, offset + SLICE_CHARS));
      longestSendMs = Math.max(longestSendMs, performance.now() - sent);
      await tick();
    }
    const opened = await worker.read('doc', 1, Infinity);
    if (!opened) throw new Error('the worker lost the text');
    const openMax = histogram.max / 1e6;
    histogram.reset();
    // Typing: overwrite one digit after another in the middle of the matrix.
    let version = 1;
    let workerReadMs = 0;
    let reads = 0;
    const middle = text.indexOf('\n', text.length >> 1) + 6;
    for (let key = 1; key <= KEYSTROKES; key++) {
      worker.sendEdits('doc', version, version + 1, [{ offset: middle + (key % 4), length: 1, text: String(key % 10) }]);
      version++;
      if (key % READ_EVERY === 0) {
        const reading = await worker.read('doc', version, Infinity);
        if (!reading) throw new Error('the worker lost an edit');
        workerReadMs += reading.readMs;
        reads++;
      }
      await new Promise((resolve) => setTimeout(resolve, KEY_INTERVAL_MS));
    }
    histogram.disable();
    const typingMax = histogram.max / 1e6;
    const typingP99 = histogram.percentile(99) / 1e6;
    // The control: the same thread doing nothing for as long (on a shared machine the scheduler
    // alone delays a timer by milliseconds).
    histogram.reset();
    histogram.enable();
    await new Promise((resolve) => setTimeout(resolve, KEYSTROKES * KEY_INTERVAL_MS));
    histogram.disable();
    return {
      workerOpenReadMs: round(opened.readMs),
      hostLongestSliceSendMs: round(longestSendMs, 2),
      hostDelayMaxOpeningMs: round(openMax),
      hostDelayMaxTypingMs: round(typingMax),
      hostDelayP99TypingMs: round(typingP99),
      hostDelayMaxIdleMs: round(histogram.max / 1e6),
      workerReadMsWhileTyping: round(workerReadMs / reads),
    };
  } finally {
    histogram.disable();
    worker.dispose();
  }
}
