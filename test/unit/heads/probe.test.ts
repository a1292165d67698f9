// The induction probe on the hand-built 2-layer attention-only transformer of
// examples/13-induction-head: its layer-1 head 1 is an induction head only through its
// composition with layer 0's previous-token head, so the probe must rank it first — and must not
// once that composition is broken.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AttentionOnlyModel, attentionOnlyModelOf, attentionOnlyStack } from '../../../src/core/heads/attentionOnly';
import { inductionProbe, probeIds } from '../../../src/core/heads/probe';
import { assertClose } from './references';

const root = join(__dirname, '..', '..', '..');
const exampleFile = join(root, 'examples', '13-induction-head.json');
const model = attentionOnlyModelOf(JSON.parse(readFileSync(exampleFile, 'utf8')), exampleFile);
const vocabularySize = model.tokenEmbedding.rows;

function probe(m: AttentionOnlyModel, repeat?: number) {
  return inductionProbe(async (ids) => attentionOnlyStack(m, ids, exampleFile), { vocabularySize, bos: m.bos, repeat });
}

describe('induction probe on the hand-built attention-only transformer', () => {
  it("runs every head as numpy's forward pass does (scripts/gen_induction_example.py)", () => {
    const reference = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'heads', 'induction-example.json'), 'utf8')) as { ids: number[]; attention: number[][][][] };
    const stack = attentionOnlyStack(model, reference.ids, exampleFile);
    reference.attention.forEach((layer, l) => layer.forEach((head, h) => assertClose(stack.weights(l, h), head.flat(), 1e-12, `layer ${l} head ${h}`)));
  });

  it('ranks the planted layer-1 head first, with induction > 0.5', async () => {
    const { ranking, ids } = await probe(model);
    assert.equal(ids.length, 1 + 2 * 32);
    assert.deepEqual([ranking[0].layer, ranking[0].head], [1, 1]);
    assert.ok(ranking[0].value > 0.5, `induction ${ranking[0].value}`);
    assert.ok(ranking[1].value < 0.5, `the runner-up scores ${ranking[1].value}`);
  });

  it('no longer finds it once layer 0 attends to the current token instead of the previous one', async () => {
    // Key of position j moved from query j + 1's place to query j's: layer 0 copies the current
    // token, so layer 1 matches t_j = t_i (a duplicate-token head), not t_{j−1} = t_i.
    const layer0 = model.layers[0];
    const positions = model.positionEmbedding.rows;
    const key = layer0.key[0];
    const unshifted = new Float64Array(key.data.length);
    for (let r = 0; r < key.rows; r++) {
      for (let c = 1; c < positions; c++) unshifted[r * key.cols + c - 1] = key.data[r * key.cols + c];
    }
    const broken = { ...model, layers: [{ ...layer0, key: [{ ...key, data: unshifted }, layer0.key[1]] }, model.layers[1]] };
    const { ranking, scores } = await probe(broken);
    const planted = ranking.find((h) => h.layer === 1 && h.head === 1)!;
    assert.ok(planted.value < 0.5, `induction ${planted.value}`);
    assert.ok(scores.duplicate_token[1][1]! > 0.5);
  });

  it('draws the same seeded ids each time, R settable, never BOS among the random tokens', () => {
    const ids = probeIds({ vocabularySize, bos: 0, repeat: 5, seed: 3 });
    assert.deepEqual(ids, probeIds({ vocabularySize, bos: 0, repeat: 5, seed: 3 }));
    assert.equal(ids.length, 11);
    assert.deepEqual(ids.slice(1, 6), ids.slice(6));
    assert.ok(!ids.slice(1).includes(0));
    assert.throws(() => probeIds({ vocabularySize, bos: 0, repeat: 0 }), /--repeat must be a positive integer/);
  });

  it('says when the probe is longer than the model has positions', async () => {
    await assert.rejects(probe(model, 40), /81 tokens, but the model has 72 positions/);
  });
});
