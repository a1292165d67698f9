// Every message that crosses a thread or frame boundary: extension host ⇄ worker, and
// extension host ⇄ webview (panel, bottom view). Discriminated unions on `type`; each request
// carries an `id` that its reply repeats. Messages from a webview are untrusted: the host
// validates them (see the validators below) before acting.

// ---- extension host ⇄ worker (owned by the extension/worker work) ----

import type { AttentionResult, AttentionSpec } from './core/types';

/** Run some problems of one document. A newer request for the same document supersedes this
 * one: the host sets `cancelFlag[0]` to 1 (Atomics), which the worker reads between heads, row
 * blocks and problems, so cancelling never needs a round trip through the worker's busy loop. */
export interface WorkerRunRequest {
  type: 'run';
  id: number;
  cancelFlag: Int32Array; // backed by a SharedArrayBuffer
  problems: { index: number; spec: AttentionSpec }[];
}

export type WorkerRequest = WorkerRunRequest;

/** One outcome per requested problem, in request order. */
export type WorkerProblemOutcome =
  | { index: number; result: AttentionResult }
  | { index: number; error: string };

export type WorkerResponse =
  | { type: 'result'; id: number; outcomes: WorkerProblemOutcome[] }
  | { type: 'cancelled'; id: number }
  | { type: 'failed'; id: number; error: string };

// ---- extension host ⇄ webview (owned by the panel work) ----

