// The heads views over an encoder–decoder run's kinds (src/views/heads.ts): each question answered
// from the kind it names, a layer's mean for the alignment view against PyTorch's weights, the
// page's description of every kind, the ranges checked per kind, and the messages that carry a
// kind validated (src/protocol.ts).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSavedAttentions } from '../../../src/core/heads/load';
import { DEFAULT_LIMITS } from '../../../src/core/parse/tensors';
import { type HeadsQuery, parseHeadsViewMessage } from '../../../src/protocol';
import { answerQuery, infoOf, outOfRange } from '../../../src/views/heads';
import { infoOfKind } from '../../../src/views/kindInfo';

const DIR = join(__dirname, '..', '..', 'fixtures', 'heads', 'encoder-decoder');
const expected = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8')) as {
  tokens: string[];
  target_tokens: string[];
  kinds: Record<'encoder' | 'decoder' | 'cross', { layers: number; heads: number; weights: number[][][] }>;
};
const run = loadSavedAttentions(join(DIR, 'ids', 'outputs.pt'), DEFAULT_LIMITS).stack;
const crossOnly = loadSavedAttentions(join(DIR, 'cross', 'cross.pt'), DEFAULT_LIMITS).stack;

describe('heads views of an encoder–decoder run', () => {
  it('answers a layer\'s mean of cross-attention as PyTorch\'s weights averaged over its heads', async () => {
    const answer = await answerQuery(run, { kind: 'layerMean', layer: 1, attention: 'cross' });
    assert.ok(answer.kind === 'layerMean');
    const { view } = answer;
    assert.deepEqual([view.rows, view.cols, view.rowBlock, view.colBlock], [8, 7, 1, 1]);
    const heads = expected.kinds.cross.weights[1];
    heads[0].forEach((_, i) => {
      const mean = heads.reduce((sum, weights) => sum + weights[i], 0) / heads.length;
      assert.ok(Math.abs(view.data[i] - mean) <= 1e-15, `[${i}] ${view.data[i]} vs ${mean}`);
    });
  });

  it('answers each question from the kind it names, the run\'s own (cross) when it names none', async () => {
    for (const [attention, layer, head] of [['encoder', 2, 3], ['decoder', 1, 1], ['cross', 0, 1], [undefined, 0, 1]] as const) {
      const answer = await answerQuery(run, { kind: 'head', layer, head, ...(attention ? { attention } : {}) });
      assert.ok(answer.kind === 'head');
      const want = expected.kinds[attention ?? 'cross'].weights[layer][head];
      assert.deepEqual(Array.from(answer.view.data), want.map(Math.fround));
    }
    const grid = await answerQuery(run, { kind: 'grid', size: 8, mode: 'mean', layers: [0, 1, 2], heads: [0, 1, 2, 3], attention: 'encoder' });
    assert.ok(grid.kind === 'grid');
    assert.deepEqual([grid.grid.layers, grid.grid.heads], [[0, 1, 2], [0, 1, 2, 3]]);
  });

  it('checks a question\'s layers and heads against the kind it names', () => {
    const ask = (query: HeadsQuery) => outOfRange(run, query);
    assert.equal(ask({ kind: 'head', layer: 2, head: 3, attention: 'encoder' }), undefined);
    assert.equal(ask({ kind: 'head', layer: 2, head: 0, attention: 'decoder' }), 'There are 2 layers (0–1).');
    assert.equal(ask({ kind: 'lines', layer: 0, heads: [2], k: 3, attention: 'cross' }), 'There are 2 heads (0–1).');
    assert.equal(ask({ kind: 'layerMean', layer: 1, attention: 'cross' }), undefined);
    assert.equal(outOfRange(crossOnly, { kind: 'scores', attention: 'encoder' }), 'This run has no encoder attention.');
    assert.equal(outOfRange(crossOnly, { kind: 'scores', attention: 'cross' }), undefined);
  });

  it('describes every kind to the page: its tokens per axis and its counts', () => {
    const info = infoOf(run, 'outputs.pt', []);
    assert.equal(info.kind, 'cross');
    assert.deepEqual(info.kinds, [
      { kind: 'encoder', tokens: expected.tokens, keyTokens: expected.tokens, layerCount: 3, headCount: 4, queryCount: 7, keyCount: 7 },
      { kind: 'decoder', tokens: expected.target_tokens, keyTokens: expected.target_tokens, layerCount: 2, headCount: 2, queryCount: 8, keyCount: 8 },
      { kind: 'cross', tokens: expected.target_tokens, keyTokens: expected.tokens, layerCount: 2, headCount: 2, queryCount: 8, keyCount: 7 },
    ]);
  });

  it('titles and counts a kind as the page shows it (the HTML report of the kind shown)', () => {
    const info = infoOf(run, 'outputs.pt', ['a note']);
    const encoder = infoOfKind(info, 'encoder');
    assert.deepEqual([encoder.title, encoder.kind, encoder.layerCount, encoder.headCount, encoder.queryCount, encoder.keyCount], ['outputs.pt · encoder', 'encoder', 3, 4, 7, 7]);
    assert.deepEqual(encoder.tokens, expected.tokens);
    assert.deepEqual(encoder.notes, ['a note']);
    // No kind named, or a kind the run lacks: the run's own.
    assert.equal(infoOfKind(info, undefined), info);
    assert.equal(infoOfKind(infoOf(crossOnly, 'cross.pt', []), 'encoder').title, 'cross.pt');
  });

  it('accepts a kind in the page\'s questions, head openings and reports, and nothing else there', () => {
    const query = { type: 'query', requestId: 3, query: { kind: 'layerMean', layer: 1, attention: 'cross' } };
    assert.deepEqual(parseHeadsViewMessage(query), query);
    assert.equal(parseHeadsViewMessage({ ...query, query: { ...query.query, attention: 'vision' } }), undefined);
    assert.equal(parseHeadsViewMessage({ ...query, query: { kind: 'layerMean', layer: -1 } }), undefined);
    const open = { type: 'openHead', layer: 0, head: 1, attention: 'decoder' };
    assert.deepEqual(parseHeadsViewMessage(open), open);
    assert.deepEqual(parseHeadsViewMessage({ type: 'openHead', layer: 0, head: 1 }), { type: 'openHead', layer: 0, head: 1 });
    assert.equal(parseHeadsViewMessage({ ...open, attention: 7 }), undefined);
    const report = { type: 'report', fileName: 'r.html', base64: 'AAAA', width: 10, height: 10, legend: 'max', attention: 'encoder' };
    assert.deepEqual(parseHeadsViewMessage(report), report);
    assert.equal(parseHeadsViewMessage({ ...report, attention: 'both' }), undefined);
  });
});
