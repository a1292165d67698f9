// The worker answers the heads page's analysis queries (scores + rollout, flow) on an open stack.
import assert from 'node:assert/strict';
import { HEAD_SCORE_NAMES } from '../../../src/core/heads/scores';
import { answerHeads, closeHeads, openHeads } from '../../../src/worker/heads';
import { assertClose, referenceCase } from './references';

describe('worker: head analyses of an open stack', () => {
  const planted = referenceCase('planted');
  const n = planted.ids!.length;
  const weights = planted.weights[0].map((head) => ({ rows: n, cols: n, data: Float64Array.from(head.flat()) }));
  const opened = openHeads({ type: 'headsAdopt', id: 1, title: 'planted layer 0', weights, document: 'note.md', problem: 0 });
  assert.equal(opened.type, 'headsOpened');
  const stack = opened.type === 'headsOpened' ? opened.stack : -1;
  after(() => closeHeads(stack));

  it('answers `scores` with every score of every head (numpy values) and the rollout', async () => {
    const reply = await answerHeads({ type: 'headsQuery', id: 2, stack, query: { kind: 'scores' } });
    assert.ok(reply.type === 'headsAnswer' && reply.answer.kind === 'scores');
    // A problem's stack has no ids: the token scores are null; the others are layer 0's.
    for (const name of HEAD_SCORE_NAMES) {
      const expected = name === 'induction' || name === 'duplicate_token' ? [null, null, null] : planted.expected.scores[name][0];
      assertClose(reply.answer.scores[name][0], expected, 1e-9, name);
    }
    assert.equal(reply.answer.rollout?.length, n * n);
  });

  it('answers `flow` with rows that sum to 1', async () => {
    const reply = await answerHeads({ type: 'headsQuery', id: 3, stack, query: { kind: 'flow' } });
    assert.ok(reply.type === 'headsAnswer' && reply.answer.kind === 'flow');
    for (let i = 0; i < n; i++) assert.ok(Math.abs(reply.answer.flow.subarray(i * n, (i + 1) * n).reduce((a, b) => a + b, 0) - 1) < 1e-12);
  });

  it('refuses flow for cross-attention with one clear message', async () => {
    const cross = openHeads({ type: 'headsAdopt', id: 4, title: 'cross', weights: [{ rows: 2, cols: 3, data: Float64Array.of(0.5, 0.5, 0, 0.2, 0.3, 0.5) }], document: 'x.md', problem: 0 });
    assert.ok(cross.type === 'headsOpened');
    const reply = await answerHeads({ type: 'headsQuery', id: 5, stack: cross.stack, query: { kind: 'flow' } });
    closeHeads(cross.stack);
    assert.deepEqual(reply, { type: 'headsFailed', id: 5, error: 'attention flow needs self-attention (as many keys as queries)' });
  });
});
