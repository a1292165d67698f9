// Debug-source read speed: a 1024×1024 float32 numpy array and a torch tensor of the same size
// (requires_grad) read from a Python program paused in Debian's debugpy, the way the extension
// reads them — the describe expression, then one `evaluate` (clipboard context) of the read
// expression, then decodeArray — over the Debug Adapter Protocol spoken directly to
// `python3 -m debugpy.adapter` (no editor in between; the editor adds one message hop). Prints the
// median of several reads in ms, the bytes moved, numpy's own time to make the same base64 in the
// same program for scale, and the load average.
//   npx tsx bench/debugRead.ts [--size N] [--runs N]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeExpression, readExpression } from '../src/core/debug/expressions';
import { decodeArray, parseDescriptions } from '../src/core/debug/payload';

const flag = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const size = flag('--size', 1024);
const runs = flag('--runs', 7);

const folder = mkdtempSync(join(tmpdir(), 'attention-debug-bench-'));
const program = join(folder, 'program.py');
writeFileSync(
  program,
  [
    'import numpy as np, torch',
    `a = np.random.default_rng(0).standard_normal((${size}, ${size})).astype(np.float32)`,
    `t = torch.randn(${size}, ${size}, requires_grad=True)`,
    'pause = 1  # line 4: breakpoint',
    '',
  ].join('\n'),
);

/** A minimal DAP client over the adapter's stdio. */
class Dap {
  private seq = 1;
  private buffer = Buffer.alloc(0);
  private readonly waiting = new Map<number, (message: Record<string, unknown>) => void>();
  private readonly events: ((message: Record<string, unknown>) => void)[] = [];
  private readonly child = spawn('/usr/bin/python3', ['-m', 'debugpy.adapter'], { stdio: ['pipe', 'pipe', 'inherit'] });

  constructor() {
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      for (;;) {
        const header = this.buffer.indexOf('\r\n\r\n');
        if (header < 0) return;
        const length = Number(/Content-Length: (\d+)/i.exec(this.buffer.subarray(0, header).toString())?.[1]);
        if (this.buffer.length < header + 4 + length) return;
        const message = JSON.parse(this.buffer.subarray(header + 4, header + 4 + length).toString()) as Record<string, unknown>;
        this.buffer = this.buffer.subarray(header + 4 + length);
        if (message.type === 'response') this.waiting.get(message.request_seq as number)?.(message);
        else if (message.type === 'event') for (const listener of this.events) listener(message);
      }
    });
  }

  request(command: string, args: object = {}): Promise<Record<string, unknown>> {
    const seq = this.seq++;
    const body = JSON.stringify({ seq, type: 'request', command, arguments: args });
    this.child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    return new Promise((resolve, reject) =>
      this.waiting.set(seq, (message) => (message.success ? resolve(message.body as Record<string, unknown>) : reject(new Error(`${command}: ${String(message.message)}`)))),
    );
  }

  event(name: string): Promise<Record<string, unknown>> {
    return new Promise((resolve) => this.events.push((message) => message.event === name && resolve(message.body as Record<string, unknown>)));
  }

  kill(): void {
    this.child.kill();
  }
}

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

async function main() {
  const dap = new Dap();
  try {
    await dap.request('initialize', { adapterID: 'debugpy', clientID: 'bench', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
    const initialized = dap.event('initialized');
    const stopped = dap.event('stopped');
    const launched = dap.request('launch', { program, python: '/usr/bin/python3', console: 'internalConsole', justMyCode: true });
    await initialized;
    await dap.request('setBreakpoints', { source: { path: program }, breakpoints: [{ line: 4 }] });
    await dap.request('configurationDone');
    await launched;
    const { threadId } = (await stopped) as { threadId: number };
    const { stackFrames } = (await dap.request('stackTrace', { threadId, levels: 1 })) as { stackFrames: { id: number }[] };
    const frameId = stackFrames[0].id;
    const evaluate = async (expression: string) =>
      ((await dap.request('evaluate', { expression, frameId, context: 'clipboard', format: { rawString: true } })) as { result: string }).result;

    const report: Record<string, unknown> = { size: `${size}×${size} float32`, runs };
    for (const name of ['a', 't']) {
      const times: number[] = [];
      let bytes = 0;
      for (let run = 0; run < runs; run++) {
        const started = performance.now();
        const descriptions = parseDescriptions(await evaluate(describeExpression('python', [name])), 1);
        const result = await evaluate(readExpression('python', name));
        const read = decodeArray(result, name);
        times.push(performance.now() - started);
        if (typeof descriptions === 'string' || typeof read === 'string' || read.matrix.rows !== size) throw new Error(`bad read of ${name}`);
        bytes = result.length;
      }
      report[name === 'a' ? 'numpy_ms' : 'torch_ms'] = Number(median(times).toFixed(1));
      report.answer_bytes = bytes;
    }
    // For scale: the same base64 made inside the program, with no debugger in between.
    const inProgram: number[] = [];
    for (let run = 0; run < runs; run++) {
      const ms = await evaluate(`(lambda time, s: (__import__('base64').b64encode(a.tobytes()), (time.perf_counter() - s) * 1000)[1])(__import__('time'), __import__('time').perf_counter())`);
      inProgram.push(Number(ms));
    }
    report.base64_in_program_ms = Number(median(inProgram).toFixed(1));
    report.loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(JSON.stringify(report));
    await dap.request('disconnect', { terminateDebuggee: true }).catch(() => undefined);
  } finally {
    dap.kill();
    rmSync(folder, { recursive: true, force: true });
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
