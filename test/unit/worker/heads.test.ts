// The heads views' data path through the worker thread (src/worker/heads.ts): saved attentions
// opened there and held under an id, a problem's weights adopted, the answers the page draws
// (pooled grid, top-k lines, one head) equal to the core's, bad input as one rejected message, and
// a closed stack let go.
import * as assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadSavedAttentions } from '../../../src/core/heads/load';
import { headLines, poolGrid } from '../../../src/core/heads/pool';
import { DEFAULT_LIMITS } from '../../../src/core/parse/tensors';
import { AttentionWorker } from '../../../src/worker/client';

const saved = join(__dirname, '..', '..', 'fixtures', 'heads', 'saved');

describe('worker: heads', function () {
  this.timeout(120_000);
  const worker = new AttentionWorker(join(__dirname, 'tsWorker.cjs'), {}, () => undefined);
  after(() => worker.dispose());

  it('opens saved attentions and answers grid, lines and head queries as the core computes them', async () => {
    const file = join(saved, 'pt', 'tuple.pt');
    const { stack: id, info } = await worker.openHeads(file, DEFAULT_LIMITS.maxElements);
    const { stack } = loadSavedAttentions(file, DEFAULT_LIMITS);
    assert.deepEqual([info.title, info.source, info.layerCount, info.headCount, info.queryCount, info.keyCount], ['tuple.pt', 'saved', 2, 3, 5, 5]);
    const grid = await worker.queryHeads(id, { kind: 'grid', size: 2, mode: 'mean', layers: [1], heads: [0, 2] });
    assert.deepEqual(grid, { kind: 'grid', grid: await poolGrid(stack, 2, 'mean', [1], [0, 2]) });
    const lines = await worker.queryHeads(id, { kind: 'lines', layer: 0, heads: [1], k: 2 });
    assert.deepEqual(lines, { kind: 'lines', lines: headLines(stack, 0, [1], 2) });
    const head = await worker.queryHeads(id, { kind: 'head', layer: 1, head: 2 });
    assert.ok(head.kind === 'head');
    assert.deepEqual([...head.view.data], [...stack.weights(1, 2)]);
    // Saved float32 weights travel as float32: exact, in half the bytes.
    assert.ok(stack.weights(1, 2) instanceof Float32Array && head.view.data instanceof Float32Array);
    await assert.rejects(worker.queryHeads(id, { kind: 'head', layer: 2, head: 0 }), /There are 2 layers \(0–1\)/);
    worker.closeHeads(id);
    await assert.rejects(worker.queryHeads(id, { kind: 'head', layer: 0, head: 0 }), /let go/);
  });

  it('adopts a problem\'s weights as one layer', async () => {
    const weights = [{ rows: 2, cols: 2, data: Float64Array.from([1, 0, 0.25, 0.75]) }, { rows: 2, cols: 2, data: Float64Array.from([1, 0, 0.5, 0.5]) }];
    const { stack: id, info } = await worker.adoptHeads({ title: 'a.md · problem 1', tokens: ['a', 'b'], weights, document: 'file:///a.md', problem: 0 });
    assert.deepEqual([info.source, info.layerCount, info.headCount, info.tokens, info.keyTokens], ['problem', 1, 2, ['a', 'b'], ['a', 'b']]);
    const lines = await worker.queryHeads(id, { kind: 'lines', layer: 0, heads: [0], k: 1 });
    assert.ok(lines.kind === 'lines');
    assert.deepEqual([[...lines.lines.keys], [...lines.lines.weights]], [[0, 1], [1, 0.75]]);
    // A float64 problem's head travels exact: a weight float32 cannot hold survives.
    const third = Float64Array.from([1, 0, 1 / 3, 2 / 3]);
    const exact = await worker.adoptHeads({ title: 'b.md · problem 1', tokens: ['a', 'b'], weights: [{ rows: 2, cols: 2, data: third }], document: 'file:///b.md', problem: 0 });
    const head = await worker.queryHeads(exact.stack, { kind: 'head', layer: 0, head: 0 });
    assert.ok(head.kind === 'head');
    assert.deepEqual(head.view.data, third);
  });

  it('rejects bad input with its one message, and goes on serving', async () => {
    await assert.rejects(worker.openHeads(join(saved, 'bad', 'mismatch.npz'), DEFAULT_LIMITS.maxElements), /The layers' shapes disagree/);
    await assert.rejects(worker.openHeads(join(saved, 'ids', 'attn.pt'), DEFAULT_LIMITS.maxElements, [1]), /There is 1 id \(the ids given\) but the attentions have 5 queries/);
    assert.equal((await worker.openHeads(join(saved, 'npy', 'stacked.npy'), DEFAULT_LIMITS.maxElements)).info.layerCount, 2);
  });
});
