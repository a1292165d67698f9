// Debug-source read speed in the real editor (code-server): the extension's reads — describe,
// one bulk `evaluate` through VS Code's customRequest, decode — of 1024×1024 numbers from a Python
// program under Debian's debugpy (a float32 numpy array) and a Node program under the built-in
// js-debug (a 1024×1024-element Float32Array, 1024 rows of Float32Array, and 1024 rows of plain
// numbers). In code-server every message between the extension host and an adapter passes through
// the workbench in the browser, twice. Runs in the extension host as VS Code's
// `extensionTestsPath` (bench/debugEditor.mjs starts it) and prints one JSON line: the median read
// time of each, and the load average. Running attention and drawing the panel are not included.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { describeExpression, readExpression, type DebugLanguage } from '../src/core/debug/expressions';
import { decodeArray, parseDescriptions } from '../src/core/debug/payload';
import { evaluate, READ_TIMEOUT_MS, readArray } from '../src/features/debugAdapter';

const RUNS = 3;
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
const ms = (value: number) => Number(value.toFixed(0));

async function until<T>(probe: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function pausedSession(config: vscode.DebugConfiguration): Promise<vscode.DebugSession> {
  if (!(await vscode.debug.startDebugging(undefined, config))) throw new Error(`${config.type} did not start`);
  return until(() => {
    const item = vscode.debug.activeStackItem;
    return item instanceof vscode.DebugStackFrame ? item.session : undefined;
  }, `${config.type} to pause`);
}

/**
 * Reads one variable as the command does (describe, bulk read — in concurrent parts when large —
 * and decode), without running or showing it: the session's first read, then the median of RUNS
 * more. Then, for comparison, the same array in one evaluate (as before the parts), and where that
 * read's time goes: building the payload in the program (the same expression asked for its length
 * only), passing a string of the payload's length through (one the program makes without work),
 * and decoding.
 */
async function timeReads(session: vscode.DebugSession, language: DebugLanguage, name: string, constantFirst = 0): Promise<Record<string, number>> {
  const frameId = (vscode.debug.activeStackItem as vscode.DebugStackFrame).frameId;
  // DEBUG_BENCH_CONSTANT_FIRST=1: a string as long as the read's, passed before anything else (is
  // the first session's slow first read the path warming up, whatever it carries?).
  let constantFirstMs: number | undefined;
  if (constantFirst > 0) {
    const started = performance.now();
    await evaluate(session, frameId, language === 'python' ? `'A' * ${constantFirst}` : `'A'.repeat(${constantFirst})`, 'constant', READ_TIMEOUT_MS);
    constantFirstMs = performance.now() - started;
  }
  const times: number[] = [];
  const decodes: number[] = [];
  let length = 0;
  for (let run = 0; run <= RUNS; run++) {
    const started = performance.now();
    const descriptions = parseDescriptions(await evaluate(session, frameId, describeExpression(language, [name]), 'describe'), 1);
    if (typeof descriptions === 'string') throw new Error(`no description of ${name}: ${descriptions}`);
    const read = await readArray(session, frameId, language, { name, expression: name, stacked: false }, descriptions[0]);
    if (typeof read === 'string') throw new Error(`no read of ${name}: ${read}`);
    times.push(performance.now() - started);
  }
  const wholes: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    await evaluate(session, frameId, describeExpression(language, [name]), 'describe');
    const whole = await evaluate(session, frameId, readExpression(language, name), `read ${name}`, READ_TIMEOUT_MS);
    const decodeStarted = performance.now();
    decodeArray(whole, name);
    decodes.push(performance.now() - decodeStarted);
    wholes.push(performance.now() - started);
    length = whole.length;
  }
  const lengthOnly = language === 'python' ? `len(${readExpression(language, name)})` : `${readExpression(language, name)}.length`;
  const constant = language === 'python' ? `'A' * ${length}` : `'A'.repeat(${length})`;
  const builds: number[] = [];
  const transfers: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    let started = performance.now();
    await evaluate(session, frameId, lengthOnly, 'length');
    builds.push(performance.now() - started);
    started = performance.now();
    await evaluate(session, frameId, constant, 'constant', READ_TIMEOUT_MS);
    transfers.push(performance.now() - started);
  }
  return {
    ...(constantFirstMs !== undefined ? { constant_string_before_first_read: ms(constantFirstMs) } : {}),
    first: ms(times[0]),
    warm: ms(median(times.slice(1))),
    warm_in_one_evaluate: ms(median(wholes)),
    warm_build_in_program: ms(median(builds)),
    warm_transfer_of_as_many_chars: ms(median(transfers)),
    warm_decode: ms(median(decodes)),
    chars: length,
  };
}

/** Characters of the base64 of 1024×1024 float32 values, as the reads pass them. */
const BASE64_CHARS = 4 * Math.ceil((4 * 1024 * 1024) / 3);

export async function run(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'attention-debug-editor-bench-'));
  const report: Record<string, unknown> = { size: '1024×1024 float32', runs: RUNS };
  try {
    const py = join(folder, 'program.py');
    writeFileSync(py, ['import numpy as np', 'a = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)', 'pause = 1', ''].join('\n'));
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(vscode.Uri.file(py), new vscode.Position(2, 0)))]);
    // The window's first debug session warms the workbench and the adapter up (its first read took
    // 1.25–1.5 s where a later session's took 0.86): reported apart, like js-debug's below.
    let session: vscode.DebugSession | undefined;
    for (const key of ['python_first_session_numpy', 'python_numpy']) {
      session = await pausedSession({ type: 'debugpy', request: 'launch', name: 'bench (python)', program: py, python: '/usr/bin/python3', console: 'internalConsole' });
      report[key] = await timeReads(session, 'python', 'a', process.env.DEBUG_BENCH_CONSTANT_FIRST ? BASE64_CHARS : 0);
      await vscode.debug.stopDebugging(session);
    }
    const js = join(folder, 'program.js');
    writeFileSync(
      js,
      [
        'const rows = Array.from({ length: 1024 }, (_, i) => Float32Array.from({ length: 1024 }, (_, j) => Math.sin(i * 1024 + j)));',
        'const flat = Float32Array.from({ length: 1024 * 1024 }, (_, k) => Math.cos(k));',
        'const nested = rows.map((row) => Array.from(row));',
        'const doubles = rows.map((row) => Array.from(row, (x) => x / 3));',
        'debugger;',
        'setTimeout(() => {}, 600_000);',
        '',
      ].join('\n'),
    );
    // A session of its own for each, so that each has a first read. The window's first js-debug
    // session is slower for its first few reads whatever it reads (measured: 1.5–6 s, then the
    // warm figure; js-debug and the workbench warming up), so it is a session of its own too.
    const order = (process.env.DEBUG_BENCH_ORDER ?? 'warmup,flat,rows,nested,doubles').split(',');
    const keys: Record<string, string> = { warmup: 'js_first_session_Float32Array', flat: 'js_Float32Array', rows: 'js_rows_of_Float32Array', nested: 'js_nested_numbers', doubles: 'js_nested_doubles' };
    for (const [key, name] of order.map((name) => [keys[name], name === 'warmup' ? 'flat' : name])) {
      session = await pausedSession({ type: 'node', request: 'launch', name: 'bench (node)', program: js, console: 'internalConsole' });
      report[key] = await timeReads(session, 'javascript', name);
      await vscode.debug.stopDebugging(session.parentSession ?? session);
    }

    report.loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(`debug read bench: ${JSON.stringify(report)}`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
