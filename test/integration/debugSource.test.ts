// "Show Attention from Debug Variables" against real debuggers in a real VS Code: the built-in
// js-debug on a Node program, and Debian's debugpy (registered by the test-only extension in
// test/fixtures/debugpy-adapter-extension) on a Python program with numpy arrays and torch
// tensors. Each program writes the same numbers to a JSON file; the CLI's results on that file
// are what the panel's results must equal. Every message to the adapters is recorded: the
// extension only reads (no continue or step), evaluates in the clipboard context, once per array
// plus one description, and the programs print nothing meanwhile. A third, in-process adapter of
// the same test extension cannot evaluate at all.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { DebugAttentionOutcome } from '../../src/features/debugSource';
import { activateApi, assertClose, eventually, repoUri, rowsOf } from './support';

interface Message {
  type: string;
  command?: string;
  event?: string;
  arguments?: { context?: string; expression?: string };
  body?: { category?: string };
}

/** Everything sent to and from the adapters, per session. */
const traffic = new Map<string, Message[]>();
const READ_ONLY_REQUESTS = new Set(['threads', 'stackTrace', 'scopes', 'variables', 'evaluate', 'source', 'loadedSources', 'exceptionInfo']);

interface CliResult {
  problems: { heads: { weights: number[][]; output: number[][] }[]; output: number[][] }[];
}

function cli(file: string): CliResult {
  const text = execFileSync(process.execPath, [repoUri('dist', 'cli.js').fsPath, 'run', file, '--json'], {
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    encoding: 'utf8',
  });
  return JSON.parse(text) as CliResult;
}

function assertSameAsCli(outcome: DebugAttentionOutcome | undefined, file: string): void {
  assert.equal(outcome?.error, undefined, `the command failed: ${outcome?.error}`);
  const result = outcome?.outcome?.run?.runs[0]?.result;
  assert.ok(result, 'no result');
  const expected = cli(file).problems[0];
  assertClose(rowsOf(result.heads[0].weights), expected.heads[0].weights, 1e-12, 'weights');
  assertClose(rowsOf(result.output), expected.output, 1e-12, 'output');
}

async function showAttention(args?: object): Promise<DebugAttentionOutcome> {
  return (await vscode.commands.executeCommand<DebugAttentionOutcome>('attentionLens.showDebugAttention', args)) ?? {};
}

/**
 * Starts a session and waits until it is paused on a frame named `frameName`. Returns the
 * started session and the one paused: js-debug runs the program in a child session.
 */
async function startPaused(config: vscode.DebugConfiguration, frameName: string): Promise<{ started: vscode.DebugSession; paused: vscode.DebugSession }> {
  const starting = new Promise<vscode.DebugSession>((resolve) => {
    const listener = vscode.debug.onDidStartDebugSession((session) => {
      if (session.name === config.name) {
        listener.dispose();
        resolve(session);
      }
    });
  });
  assert.ok(await vscode.debug.startDebugging(vscode.workspace.workspaceFolders?.[0], config), `${config.type} did not start`);
  const started = await starting;
  return { started, paused: await pausedIn(started, frameName) };
}

/** The session (this one or a child) paused on a frame named `frameName`. */
async function pausedIn(session: vscode.DebugSession, frameName: string): Promise<vscode.DebugSession> {
  return eventually(async () => {
    const item = vscode.debug.activeStackItem;
    if (!(item instanceof vscode.DebugStackFrame)) return undefined;
    if (item.session.id !== session.id && item.session.parentSession?.id !== session.id) return undefined;
    const { stackFrames } = await item.session.customRequest('stackTrace', { threadId: item.threadId, levels: 1 });
    const name: string = stackFrames[0]?.name ?? '';
    return name === frameName || name.endsWith(`.${frameName}`) ? item.session : undefined; // js-debug: global.forward
  }, `${session.type} paused in ${frameName}`, 40_000);
}

async function stop(session: vscode.DebugSession | undefined): Promise<void> {
  if (!session) return;
  const ended = new Promise<void>((resolve) => {
    const listener = vscode.debug.onDidTerminateDebugSession((s) => {
      if (s.id === session.id) {
        listener.dispose();
        resolve();
      }
    });
  });
  await vscode.debug.stopDebugging(session);
  await ended;
}

/** What was sent to the session's adapter from `from` on, and its events. */
function since(session: vscode.DebugSession, from: number) {
  const messages = (traffic.get(session.id) ?? []).slice(from);
  return {
    requests: messages.filter((m) => m.type === 'request'),
    // Telemetry events never reach the Debug Console.
    outputs: messages.filter((m) => m.type === 'event' && m.event === 'output' && m.body?.category !== 'telemetry'),
  };
}

function assertOnlyRead(session: vscode.DebugSession, from: number, arrays: number): void {
  const { requests, outputs } = since(session, from);
  const writes = requests.filter((m) => !READ_ONLY_REQUESTS.has(m.command ?? ''));
  assert.deepEqual(writes.map((m) => m.command), [], 'requests that change the program');
  const evaluates = requests.filter((m) => m.command === 'evaluate');
  assert.equal(evaluates.length, arrays + 1, `one evaluate per array and one description: ${evaluates.map((m) => m.arguments?.expression?.slice(0, 60)).join(' | ')}`);
  assert.ok(evaluates.every((m) => m.arguments?.context === 'clipboard'), 'evaluates in the clipboard context (prints nothing)');
  assert.deepEqual(outputs, [], 'output while reading');
}

/** Accepts the open picker (with its items as pre-picked) until the command finishes. */
async function acceptPicker(command: Promise<DebugAttentionOutcome>): Promise<DebugAttentionOutcome> {
  let finished: DebugAttentionOutcome | undefined;
  void command.then((outcome) => (finished = outcome));
  return eventually(async () => {
    if (!finished) await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    return finished;
    // On a loaded machine the describe, the reads and the run after the pick take a while.
  }, 'the picker accepted', 60_000);
}

function panelTitles(): string[] {
  return vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .filter((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.includes('attentionLens'))
    .map((tab) => tab.label);
}

describe('debug source', function () {
  this.timeout(120_000);
  const folder = mkdtempSync(join(tmpdir(), 'attention-debug-'));
  let tracker: vscode.Disposable;
  let session: vscode.DebugSession | undefined;

  before(async () => {
    await activateApi();
    tracker = vscode.debug.registerDebugAdapterTrackerFactory('*', {
      createDebugAdapterTracker(s) {
        const log: Message[] = [];
        traffic.set(s.id, log);
        return { onWillReceiveMessage: (m: Message) => log.push(m), onDidSendMessage: (m: Message) => log.push(m) };
      },
    });
  });
  after(() => tracker.dispose());
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      for (const [id, log] of traffic) console.log(`adapter traffic of ${id}:`, JSON.stringify(log.slice(-15)).slice(0, 3000));
      console.log('active stack item:', vscode.debug.activeStackItem?.session.name, vscode.debug.activeDebugSession?.name);
    }
    await stop(session);
    session = undefined;
  });

  it('says so when there is no debug session', async () => {
    const outcome = await showAttention({ variables: ['q'] });
    assert.match(outcome.error ?? '', /no debug session/);
  });

  it('reads a Node program paused in js-debug, follows it to the next stop, refuses while it runs', async () => {
    const first = join(folder, 'node-first.json');
    const second = join(folder, 'node-second.json');
    const { started, paused } = await startPaused(
      { type: 'node', request: 'launch', name: 'attention arrays (node)', program: repoUri('test', 'fixtures', 'debug', 'arrays.js').fsPath, args: [first, second], console: 'internalConsole' },
      'forward',
    );
    session = started;
    const from = traffic.get(paused.id)?.length ?? 0;
    const outcome = await showAttention({ variables: ['X', 'W_Q', 'W_K', 'W_V'] });
    assertSameAsCli(outcome, first);
    assertOnlyRead(paused, from, 4);

    // From the palette: the picker offers the variables in scope, those named like roles picked.
    // An accept that reaches the picker before its items are drawn picks nothing (the command then
    // does nothing): the palette is opened again once.
    let picked = await acceptPicker(showAttention());
    if (!picked.outcome) picked = await acceptPicker(showAttention());
    assert.deepEqual(picked.outcome?.run?.runs[0]?.problem.matrices.map((m) => m.name).sort(), ['W_K', 'W_Q', 'W_V', 'X']);
    assertSameAsCli(picked, first);
    const problem = outcome.outcome?.run?.runs[0]?.problem;
    assert.match(problem?.name ?? '', /forward \(arrays\.js:\d+\)$/);
    assert.deepEqual(problem?.matrices.map((m) => m.name), ['X', 'W_Q', 'W_K', 'W_V']);
    await eventually(() => (panelTitles().some((title) => title.includes('forward')) ? true : undefined), 'the panel titled with the frame');

    // The next stop (X doubled) refreshes the panel's results by itself.
    const api = await activateApi();
    const version = api.results.get(outcome.uri!)?.version;
    await vscode.commands.executeCommand('workbench.action.debug.continue');
    const refreshed = await eventually(() => {
      const run = api.results.get(outcome.uri!);
      return run && run.version !== version && run.runs[0]?.result ? run : undefined;
    }, 'the results of the second stop');
    assertSameAsCli({ uri: outcome.uri, outcome: { run: refreshed, failures: [], cancelled: false } }, second);

    const notArray = await showAttention({ variables: ['label'], roles: { label: 'X' } });
    assert.equal(notArray.error, 'label is a string, not an array');

    await vscode.commands.executeCommand('workbench.action.debug.continue');
    const running = await eventually(async () => {
      const attempt = await showAttention({ variables: ['X'] });
      return /running/.test(attempt.error ?? '') ? attempt : undefined;
    }, 'the read refused while the program runs');
    assert.match(running.error ?? '', /the program is running: pause it or stop at a breakpoint first/);
  });

  it('reads token labels and a flat Float64Array (W_V, 16 values) in the shape X fixes, and says so', async () => {
    const file = join(folder, 'node-flat.json');
    const { started, paused } = await startPaused(
      { type: 'node', request: 'launch', name: 'attention flat (node)', program: repoUri('test', 'fixtures', 'debug', 'flat.js').fsPath, args: [file], console: 'internalConsole' },
      'forward',
    );
    session = started;
    const from = traffic.get(paused.id)?.length ?? 0;
    const outcome = await showAttention({ variables: ['tokens', 'X', 'W_Q', 'W_K', 'W_V'] });
    assertSameAsCli(outcome, file);
    assertOnlyRead(paused, from, 5);
    const problem = outcome.outcome?.run?.runs[0]?.problem;
    assert.deepEqual(problem?.tokens, ['zebra', 'quokka', 'narwhal']);
    assert.deepEqual(problem?.matrices.map((m) => `${m.name} ${m.value.rows}×${m.value.cols}`), ['X 3×4', 'W_Q 4×2', 'W_K 4×2', 'W_V 4×4']);
    assert.deepEqual(outcome.notes, ["W_V: 16 values read as 4×4 (row-major), from X's 4 columns"]);

    // From the palette, tokens is offered as the labels and picked with the arrays.
    let picked = await acceptPicker(showAttention());
    if (!picked.outcome) picked = await acceptPicker(showAttention());
    assert.deepEqual(picked.outcome?.run?.runs[0]?.problem.tokens, ['zebra', 'quokka', 'narwhal']);
    assertSameAsCli(picked, file);
  });

  it('reads numpy arrays and torch tensors from a Python program paused in debugpy', async () => {
    const numpyFile = join(folder, 'numpy.json');
    const torchFile = join(folder, 'torch.json');
    const program = repoUri('test', 'fixtures', 'debug', 'arrays.py');
    const document = await vscode.workspace.openTextDocument(program);
    const stops = ['# stop: numpy', '# stop: torch'].map((marker) => {
      const line = document.getText().split('\n').findIndex((text) => text.includes(marker));
      return new vscode.SourceBreakpoint(new vscode.Location(program, new vscode.Position(line, 0)));
    });
    vscode.debug.addBreakpoints(stops);
    try {
      const { started, paused } = await startPaused(
        { type: 'debugpy', request: 'launch', name: 'attention arrays (python)', program: program.fsPath, args: [numpyFile, torchFile], python: '/usr/bin/python3', console: 'internalConsole', justMyCode: true },
        'with_numpy',
      );
      session = started;
      let from = traffic.get(paused.id)?.length ?? 0;
      const numpy = await showAttention({ variables: ['x', 'w_q', 'w_k', 'w_v'] });
      assertSameAsCli(numpy, numpyFile);
      assertOnlyRead(paused, from, 4);
      assert.match(numpy.outcome?.run?.runs[0]?.problem.name ?? '', /^with_numpy \(arrays\.py:\d+\)$/);

      // At the next stop the panel reads x, w_q… again, which are not in scope there: it says so.
      const api = await activateApi();
      await vscode.commands.executeCommand('workbench.action.debug.continue');
      await pausedIn(paused, 'with_torch');
      const gone = await eventually(() => api.results.get(numpy.uri!)?.runs[0]?.error, 'the panel saying x is gone');
      assert.match(gone, /^Attention: cannot read x, w_q, w_k, w_v in with_torch \(arrays\.py:\d+\): .*NameError.*'x' is not defined/);
      from = traffic.get(paused.id)?.length ?? 0;
      const torch = await showAttention({ variables: ['q', 'k', 'v'] });
      assertSameAsCli(torch, torchFile);
      assertOnlyRead(paused, from, 3);
      const frameId = (vscode.debug.activeStackItem as vscode.DebugStackFrame).frameId;
      const grad = await paused.customRequest('evaluate', { expression: '(k.requires_grad, k.grad is None, tuple(q.shape))', frameId, context: 'watch' });
      assert.equal(grad.result, '(True, True, (1, 4, 8))', "the program's tensors are as they were");

      // A larger array is not read unless the caller agrees (the palette asks, with its size).
      from = traffic.get(paused.id)?.length ?? 0;
      const big = await showAttention({ variables: ['big'], roles: { big: 'X' } });
      assert.equal(big.error, 'big is larger than 1,048,576 numbers: pass readLarge to read it');
      assert.equal(since(paused, from).requests.filter((m) => m.command === 'evaluate').length, 1, 'only the description was evaluated');
    } finally {
      vscode.debug.removeBreakpoints(stops);
    }
  });

  it('reads numpy projections of heads × rows × columns as in tensor files, and token labels, from debugpy', async () => {
    const file = join(folder, 'heads.json');
    const program = repoUri('test', 'fixtures', 'debug', 'heads.py');
    const document = await vscode.workspace.openTextDocument(program);
    const line = document.getText().split('\n').findIndex((text) => text.includes('# stop: heads'));
    const stops = [new vscode.SourceBreakpoint(new vscode.Location(program, new vscode.Position(line, 0)))];
    vscode.debug.addBreakpoints(stops);
    try {
      const { started, paused } = await startPaused(
        { type: 'debugpy', request: 'launch', name: 'attention heads (python)', program: program.fsPath, args: [file], python: '/usr/bin/python3', console: 'internalConsole', justMyCode: true },
        'with_heads',
      );
      session = started;
      const from = traffic.get(paused.id)?.length ?? 0;
      const outcome = await showAttention({ variables: ['tokens', 'x', 'w_q', 'w_k', 'w_v', 'w_o'] });
      assertSameAsCli(outcome, file);
      assertOnlyRead(paused, from, 6);
      const result = outcome.outcome?.run?.runs[0]?.result;
      assert.equal(result?.heads.length, 2);
      const expected = cli(file).problems[0];
      assertClose(rowsOf(result!.heads[1].weights), expected.heads[1].weights, 1e-12, 'head 2 weights');
      assert.deepEqual(outcome.outcome?.run?.runs[0]?.problem.tokens, ['zebra', 'quokka', 'narwhal']);
    } finally {
      vscode.debug.removeBreakpoints(stops);
    }
  });

  it('says so when the debugger cannot evaluate, after asking for nothing that changes the program', async () => {
    const { started, paused } = await startPaused({ type: 'attention-lens-no-evaluate', request: 'launch', name: 'attention no evaluate' }, 'forward');
    session = started;
    const from = traffic.get(paused.id)?.length ?? 0;
    const outcome = await showAttention({ variables: ['q', 'k', 'v'] });
    assert.equal(outcome.error, 'the "attention-lens-no-evaluate" debugger does not support evaluating expressions, which reading arrays needs');
    const { requests } = since(paused, from);
    assert.deepEqual([...new Set(requests.map((m) => m.command))].filter((command) => !READ_ONLY_REQUESTS.has(command ?? '')), []);
  });
});
