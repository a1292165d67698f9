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
import { evaluate, READ_TIMEOUT_MS } from '../src/features/debugAdapter';

const RUNS = 3;
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

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

/** Reads one variable as the command does (describe, bulk read, decode), without running or showing it. */
async function timeReads(session: vscode.DebugSession, language: DebugLanguage, name: string): Promise<number> {
  const frameId = (vscode.debug.activeStackItem as vscode.DebugStackFrame).frameId;
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    const descriptions = parseDescriptions(await evaluate(session, frameId, describeExpression(language, [name]), 'describe'), 1);
    const read = decodeArray(await evaluate(session, frameId, readExpression(language, name), `read ${name}`, READ_TIMEOUT_MS), name);
    if (typeof descriptions === 'string' || typeof read === 'string') throw new Error(`no read of ${name}: ${String(descriptions)} ${String(read)}`);
    times.push(performance.now() - started);
  }
  return Number(median(times).toFixed(0));
}

export async function run(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'attention-debug-editor-bench-'));
  const report: Record<string, unknown> = { size: '1024×1024 float32', runs: RUNS };
  try {
    const py = join(folder, 'program.py');
    writeFileSync(py, ['import numpy as np', 'a = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)', 'pause = 1', ''].join('\n'));
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(vscode.Uri.file(py), new vscode.Position(2, 0)))]);
    let session = await pausedSession({ type: 'debugpy', request: 'launch', name: 'bench (python)', program: py, python: '/usr/bin/python3', console: 'internalConsole' });
    report.python_numpy_ms = await timeReads(session, 'python', 'a');
    await vscode.debug.stopDebugging(session);
    const js = join(folder, 'program.js');
    writeFileSync(
      js,
      [
        'const rows = Array.from({ length: 1024 }, (_, i) => Float32Array.from({ length: 1024 }, (_, j) => Math.sin(i * 1024 + j)));',
        'const flat = Float32Array.from({ length: 1024 * 1024 }, (_, k) => Math.cos(k));',
        'const nested = rows.map((row) => Array.from(row));',
        'debugger;',
        'setTimeout(() => {}, 600_000);',
        '',
      ].join('\n'),
    );
    session = await pausedSession({ type: 'node', request: 'launch', name: 'bench (node)', program: js, console: 'internalConsole' });
    report.js_Float32Array_ms = await timeReads(session, 'javascript', 'flat');
    report.js_rows_of_Float32Array_ms = await timeReads(session, 'javascript', 'rows');
    report.js_nested_numbers_ms = await timeReads(session, 'javascript', 'nested');
    await vscode.debug.stopDebugging(session.parentSession ?? session);

    report.loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(`debug read bench: ${JSON.stringify(report)}`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
