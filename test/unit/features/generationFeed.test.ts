// A generation's way to its heads page: the feed hands a page that is ready late the prompt, its
// attention and every step so far with its row, then each as it comes without keeping the rows;
// when the run ends it lets them go; Stop reaches the run only while it runs. And the page's generation messages as the host validates them.
import { strict as assert } from 'node:assert';
import { GenerationFeed } from '../../../src/features/generationFeed';
import { type HostToHeadsView, parseHeadsViewMessage } from '../../../src/protocol';

const prediction = { position: 2, kind: 'next' as const, top: [{ id: 7, token: 'a', probability: 0.5 }] };
const step = (index: number) => ({ index, position: 3 + index, id: 7, token: 'a', candidates: prediction, ms: 1 });
const row = (index: number) => ({ position: 2 + index, layers: 1, heads: 1, keys: 3 + index, weights: new Float32Array(3 + index) });

describe('generation feed', () => {
  it('replays the prompt, its attention and the steps so far with their rows to a page ready late, then forwards each step without keeping its row', () => {
    const feed = new GenerationFeed(() => undefined);
    const attention = { queries: 2, layers: 1, heads: 1, weights: new Float32Array([1, 0.5, 0.5]) };
    feed.receive({ type: 'modelGenerating', id: 1, prompt: ['x', 'y', 'z'], maxNewTokens: 4, decoding: {} });
    feed.receive({ type: 'modelPrompt', id: 1, attention });
    feed.receive({ type: 'modelStep', id: 1, step: step(0), row: row(0), computedAt: 10 });
    feed.receive({ type: 'modelStep', id: 1, step: step(1), row: row(1), computedAt: 11 });
    const seen: HostToHeadsView[] = [];
    feed.attach((message) => seen.push(message));
    assert.deepEqual(seen, [
      { type: 'generating', prompt: ['x', 'y', 'z'], maxNewTokens: 4, decoding: {} },
      { type: 'generationPrompt', attention },
      { type: 'generationStep', step: step(0), computedAt: 10, row: row(0) },
      { type: 'generationStep', step: step(1), computedAt: 11, row: row(1) },
    ]);
    feed.receive({ type: 'modelStep', id: 1, step: step(2), row: row(2), computedAt: 12 });
    assert.deepEqual(seen.at(-1), { type: 'generationStep', step: step(2), row: row(2), computedAt: 12 });
    feed.detach();
    feed.receive({ type: 'modelStep', id: 1, step: step(3), row: row(3), computedAt: 13 });
    assert.equal(seen.length, 5, 'a closed page is sent nothing');
    // A page made again gets the steps; the rows went to the first page, and one made after it closed keeps its own.
    const again: HostToHeadsView[] = [];
    feed.attach((message) => again.push(message));
    assert.deepEqual(again, [
      { type: 'generating', prompt: ['x', 'y', 'z'], maxNewTokens: 4, decoding: {} },
      { type: 'generationStep', step: step(0), computedAt: 10 },
      { type: 'generationStep', step: step(1), computedAt: 11 },
      { type: 'generationStep', step: step(2), computedAt: 12 },
      { type: 'generationStep', step: step(3), computedAt: 13, row: row(3) },
    ]);
    feed.end();
    const late: HostToHeadsView[] = [];
    feed.attach((message) => late.push(message));
    assert.ok(late.every((message) => message.type !== 'generationStep' || message.row === undefined), 'after the run the page asks the run, not the feed');
  });

  it('Stop reaches the run while it runs, not after', () => {
    let stops = 0;
    const feed = new GenerationFeed(() => stops++);
    feed.stop();
    feed.end();
    feed.stop();
    assert.equal(stops, 1);
  });

  it('the page may stop, ask for a row and open a head at a step; malformed asks are dropped', () => {
    assert.deepEqual(parseHeadsViewMessage({ type: 'stopGeneration', extra: 1 }), { type: 'stopGeneration' });
    assert.deepEqual(parseHeadsViewMessage({ type: 'openHead', layer: 1, head: 2, step: 3 }), { type: 'openHead', layer: 1, head: 2, step: 3 });
    assert.deepEqual(parseHeadsViewMessage({ type: 'openHead', layer: 1, head: 2 }), { type: 'openHead', layer: 1, head: 2 });
    assert.equal(parseHeadsViewMessage({ type: 'openHead', layer: 1, head: 2, step: -1 }), undefined);
    assert.equal(parseHeadsViewMessage({ type: 'openHead', layer: 1, head: 2, step: '3' }), undefined);
    assert.deepEqual(parseHeadsViewMessage({ type: 'query', requestId: 4, query: { kind: 'row', position: 9 } }), { type: 'query', requestId: 4, query: { kind: 'row', position: 9 } });
    assert.equal(parseHeadsViewMessage({ type: 'query', requestId: 4, query: { kind: 'row', position: 1.5 } }), undefined);
  });
});
