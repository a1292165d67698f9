// The few Debug Adapter Protocol requests the debug source makes, through VS Code's
// `customRequest`, each bounded in time and turned into a message a user can act on. Only
// requests that read: threads, stackTrace, scopes, variables, evaluate — never continue or step.
import * as vscode from 'vscode';
import { readExpression, type DebugLanguage } from '../core/debug/expressions';
import { decodeArray, joinReads, readSlices, type ArrayRead, type ValueDescription } from '../core/debug/payload';

/** A failure to show as is (no stack, no "Error:"). */
export class DebugReadError extends Error {}

class DebugTimeoutError extends DebugReadError {}

/** How long a small request (threads, stack, scopes, variables, describe) may take. */
const REQUEST_TIMEOUT_MS = 20_000;
/** How long the bulk read of one array may take. */
export const READ_TIMEOUT_MS = 60_000;

interface StackFrame {
  id: number;
  name: string;
  line: number;
  source?: { name?: string; path?: string };
}

export interface PausedFrame {
  threadId: number;
  frameId: number;
  name: string;
  line: number;
  sourcePath?: string;
  sourceName?: string;
}

export interface DapVariable {
  name: string;
  value: string;
  type?: string;
  evaluateName?: string;
}

const seconds = (ms: number) => `${ms / 1000} s`;

export async function request<T>(session: vscode.DebugSession, command: string, args: object, timeoutMs = REQUEST_TIMEOUT_MS, what = command): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DebugTimeoutError(`the debugger did not answer within ${seconds(timeoutMs)} (${what}); the program may be busy`)), timeoutMs);
  });
  try {
    return (await Promise.race([Promise.resolve(session.customRequest(command, args)), timeout])) as T;
  } catch (error) {
    if (error instanceof DebugReadError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    if (command === 'evaluate' && /not supported|unrecognized|unknown (request|command)|not implemented/i.test(message)) {
      throw new DebugReadError(`the "${session.type}" debugger does not support evaluating expressions, which reading arrays needs`);
    }
    throw new DebugReadError(`the debugger could not ${what}: ${message}`);
  } finally {
    clearTimeout(timer);
  }
}

/** The frame selected in the Call Stack view (else the top frame of the first thread), checking that the program is paused. */
export async function pausedFrame(session: vscode.DebugSession): Promise<PausedFrame> {
  const item = vscode.debug.activeStackItem;
  const ours = item?.session.id === session.id ? item : undefined;
  let threadId = ours?.threadId;
  if (threadId === undefined) {
    const { threads } = await request<{ threads: { id: number }[] }>(session, 'threads', {}, REQUEST_TIMEOUT_MS, 'list threads');
    threadId = threads[0]?.id;
    if (threadId === undefined) throw new DebugReadError('the program has no threads: is it still starting?');
  }
  let frames: StackFrame[];
  try {
    ({ stackFrames: frames } = await request<{ stackFrames: StackFrame[] }>(session, 'stackTrace', { threadId, startFrame: 0, levels: 100 }, REQUEST_TIMEOUT_MS, 'read the call stack'));
  } catch (error) {
    if (error instanceof DebugTimeoutError) throw error;
    throw new DebugReadError('the program is running: pause it or stop at a breakpoint first');
  }
  const wanted = ours instanceof vscode.DebugStackFrame ? ours.frameId : undefined;
  const frame = frames.find((candidate) => candidate.id === wanted) ?? frames[0];
  if (!frame) throw new DebugReadError('the program is running: pause it or stop at a breakpoint first');
  return { threadId, frameId: frame.id, name: frame.name, line: frame.line, sourcePath: frame.source?.path, sourceName: frame.source?.name };
}

/** The variables in scope of a frame, innermost scope first; expensive scopes (often globals of a large program) are skipped. */
export async function variablesInScope(session: vscode.DebugSession, frameId: number): Promise<(DapVariable & { scope: string })[]> {
  const { scopes } = await request<{ scopes: { name: string; variablesReference: number; expensive?: boolean }[] }>(session, 'scopes', { frameId }, REQUEST_TIMEOUT_MS, 'list the scopes');
  const all: (DapVariable & { scope: string })[] = [];
  for (const scope of scopes) {
    if (scope.expensive || scope.variablesReference === 0) continue;
    const { variables } = await request<{ variables: DapVariable[] }>(session, 'variables', { variablesReference: scope.variablesReference }, REQUEST_TIMEOUT_MS, `list the ${scope.name} variables`);
    all.push(...variables.map((variable) => ({ ...variable, scope: scope.name })));
  }
  return all;
}

/**
 * Evaluates an expression in a frame. The clipboard context is the one that prints nothing (the
 * REPL context echoes into the Debug Console, debugpy redirects output for it) and that returns
 * a long string whole (the watch and hover contexts cut it); rawString asks debugpy not to quote it.
 */
export async function evaluate(session: vscode.DebugSession, frameId: number, expression: string, what: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<string> {
  const { result } = await request<{ result: string }>(session, 'evaluate', { expression, frameId, context: 'clipboard', format: { rawString: true } }, timeoutMs, what);
  return result;
}

/**
 * Reads one array described by `description`: a large one in parts, evaluated concurrently and
 * joined (core/debug/payload.ts readSlices), else in one evaluate. `stacked`: a heads×rows×cols
 * array (given weights) is read too. A string says why it cannot be read.
 */
export async function readArray(session: vscode.DebugSession, frameId: number, language: DebugLanguage, array: { name: string; expression: string; stacked: boolean }, description: ValueDescription): Promise<ArrayRead | string> {
  const { name, expression, stacked } = array;
  const whole = async () => decodeArray(await evaluate(session, frameId, readExpression(language, expression), `read ${name}`, READ_TIMEOUT_MS), name, stacked);
  const slices = readSlices(description);
  if (!slices) return whole();
  const answers = await Promise.all(slices.map((slice) => evaluate(session, frameId, readExpression(language, expression, slice), `read ${name}`, READ_TIMEOUT_MS)));
  const parts = answers.map((answer) => decodeArray(answer, name));
  // A part that cannot be read (a ragged row, a non-number) is read again whole, for the message's row numbers.
  if (parts.some((part) => typeof part === 'string')) return whole();
  return joinReads(parts as ArrayRead[], name, description.shape.length === 1);
}
