// The worker thread as the user meets it: a newer run cancels the older, a run too big for
// `attentionLens.maxMatrixElements` is refused before it starts, and a killed worker is an error
// message followed by a fresh worker on the next run — the extension host keeps running.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { attentionCost } from '../../src/core/engine/cost';
import type { RunOutcome } from '../../src/features/runner';
import { activateApi, closeAllEditors, eventually, openExample } from './support';

describe('worker', () => {
  before(activateApi);
  afterEach(closeAllEditors);

  it('activates quickly and lazily: the activation time is measured and reported', async () => {
    const api = await activateApi();
    assert.ok(Number.isFinite(api.activationMs) && api.activationMs > 0, String(api.activationMs));
    console.log(`      activation took ${api.activationMs.toFixed(1)} ms`);
  });

  it('a newer run of the same document cancels the older one', async () => {
    const { document } = await openExample('large/2048-tokens.py');
    const first = vscode.commands.executeCommand<RunOutcome>('attentionLens.runFile', document.uri);
    const second = vscode.commands.executeCommand<RunOutcome>('attentionLens.runFile', document.uri);
    const [older, newer] = await Promise.all([first, second]);
    assert.equal(older?.cancelled, true);
    assert.equal(newer?.cancelled, false);
    assert.deepEqual(newer?.failures, []);
    assert.equal(newer?.run?.runs[0]?.result?.heads[0].weights.rows, 2048);
  });

  it('refuses a run above attentionLens.maxMatrixElements, with the numbers, before it starts', async () => {
    const config = vscode.workspace.getConfiguration('attentionLens');
    await config.update('maxMatrixElements', 100, vscode.ConfigurationTarget.Global);
    try {
      const { document } = await openExample('02-causal-mask.md');
      const outcome = await vscode.commands.executeCommand<RunOutcome>('attentionLens.runFile', document.uri);
      const cost = attentionCost({ queries: 4, keys: 4, dModel: 4, dK: 2, dV: 2, heads: 1, dtype: 'float64', outputProjection: false });
      const numbers = cost.totalBytes / 8;
      assert.ok(cost.totalBytes >= 1024 && cost.totalBytes < 1024 ** 2, 'the message below writes this size in KiB');
      assert.equal(
        outcome?.failures[0]?.error,
        `problem 1 ("Causal mask") was not run: it would keep ${numbers} numbers (${(cost.totalBytes / 1024).toPrecision(3)} KiB as float64; 1 head of 4×4 attention), ` +
          'more than attentionLens.maxMatrixElements = 100. Raise that setting, use fewer tokens, or compute the output alone in O(n·d) memory: attention-lens run FILE --output-only.',
      );
      assert.equal(outcome?.run?.runs[0]?.result, undefined);
    } finally {
      await config.update('maxMatrixElements', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('a killed worker fails the running job with an error, and the next run starts a fresh worker', async () => {
    const api = await activateApi();
    const { document } = await openExample('large/2048-tokens.py');
    const running = vscode.commands.executeCommand<RunOutcome>('attentionLens.runFile', document.uri);
    await eventually(() => (api.worker.running ? true : undefined), 'the worker to start');
    const startsBefore = api.worker.starts;
    await api.worker.kill();
    const outcome = await running;
    assert.match(outcome?.workerError ?? '', /^The attention worker stopped unexpectedly \(exit code \d+\)\. The next run starts a fresh worker\.$/);
    assert.equal(api.worker.running, false);

    const small = await openExample('02-causal-mask.md');
    const next = await vscode.commands.executeCommand<RunOutcome>('attentionLens.runFile', small.document.uri);
    assert.deepEqual(next?.failures, []);
    assert.ok(next?.run?.runs[0]?.result);
    assert.equal(api.worker.starts, startsBefore + 1);
  });
});
