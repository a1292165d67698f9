// The worker's side of the heads page's Compare tab: two open stacks paired (A and B), the
// divergence of every head and one head's B − A pooled as the page draws it, against numpy
// (scripts/gen_head_references.py); and one clear message, never an exception, when they differ.
import assert from 'node:assert/strict';
import { divergenceCsv, kindRefusals, pooledDifference, refusalToCompare } from '../../../src/core/heads/compare';
import { comparedInput } from '../../../src/core/model/input';
import { parseHeadsViewMessage } from '../../../src/protocol';
import { answerHeads, closeHeads, holdStack } from '../../../src/worker/heads';
import { assertClose, referenceCase, stackOf } from './references';

/** Pooled values are float32 (what the page draws): equal to numpy's within float32 rounding. */
const FLOAT32 = 1e-7;

function held(stack: ReturnType<typeof stackOf>): number {
  const opened = holdStack(0, stack, 'test', []);
  assert.ok(opened.type === 'headsOpened');
  return opened.stack;
}

describe('compare two runs: the worker side', () => {
  for (const name of ['planted', 'planted-float32'] as const) {
    it(`${name}: B − A of one head pooled in blocks of 4 keeps each block's largest change, as numpy picks it`, () => {
      const reference = referenceCase(name);
      const a = stackOf(reference.weights, reference.dtype, reference.ids);
      const b = stackOf(reference.other!, reference.dtype, reference.ids);
      const expected = reference.expected.difference_1_0_blocks_of_4!;
      // 13 tokens at most 4 cells a side: blocks of 4, the last one partial.
      const map = pooledDifference(a, b, 1, 0, 4);
      assert.deepEqual([map.rows, map.cols, map.rowBlock, map.colBlock], [4, 4, 4, 4]);
      assert.deepEqual([...map.at], expected.at);
      assertClose(map.difference, expected.difference, FLOAT32, 'B − A');
      assertClose(map.a, expected.a, FLOAT32, 'A');
      assertClose(map.b, expected.b, FLOAT32, 'B');
    });
  }

  it('unpooled when the head fits: every entry of B − A, in place', () => {
    const reference = referenceCase('planted');
    const map = pooledDifference(stackOf(reference.weights, 'float64', null), stackOf(reference.other!, 'float64', null), 1, 0, 512);
    assert.deepEqual([map.rows, map.cols, map.rowBlock, map.colBlock], [13, 13, 1, 1]);
    assert.deepEqual([...map.at], Array.from({ length: 169 }, (_, k) => k));
    assertClose(map.difference, reference.expected.difference_1_0!.flat(), FLOAT32, 'B − A');
  });

  it('answers divergence and difference queries for A against the paired B', async () => {
    const reference = referenceCase('planted');
    const a = held(stackOf(reference.weights, 'float64', reference.ids));
    const b = held(stackOf(reference.other!, 'float64', reference.ids));
    try {
      const divergence = await answerHeads({ type: 'headsQuery', id: 1, stack: a, other: b, query: { kind: 'divergence' } });
      assert.ok(divergence.type === 'headsAnswer' && divergence.answer.kind === 'divergence');
      assertClose(divergence.answer.divergence.flat(), reference.expected.divergence!.flat(), 1e-9, 'divergence');
      const difference = await answerHeads({ type: 'headsQuery', id: 2, stack: a, other: b, query: { kind: 'difference', layer: 1, head: 0 } });
      assert.ok(difference.type === 'headsAnswer' && difference.answer.kind === 'difference');
      assertClose(difference.answer.difference.difference, reference.expected.difference_1_0!.flat(), FLOAT32, 'B − A');
      // Out of range, or with no B paired: one message each.
      assert.deepEqual(await answerHeads({ type: 'headsQuery', id: 3, stack: a, other: b, query: { kind: 'difference', layer: 2, head: 0 } }), { type: 'headsFailed', id: 3, error: 'There are 2 layers (0–1).' });
      assert.deepEqual(await answerHeads({ type: 'headsQuery', id: 4, stack: a, query: { kind: 'divergence' } }), { type: 'headsFailed', id: 4, error: 'Choose a run to compare with first (the Compare tab).' });
    } finally {
      closeHeads(a);
      closeHeads(b);
    }
    assert.match(JSON.stringify(await answerHeads({ type: 'headsQuery', id: 5, stack: a, other: b, query: { kind: 'divergence' } })), /headsFailed.*let go/);
  });

  it('runs of different shapes give one message, not an exception', async () => {
    const a = held(stackOf(referenceCase('planted').weights, 'float64', null));
    const b = held(stackOf(referenceCase('no-repeat').weights, 'float64', null));
    try {
      for (const query of [{ kind: 'divergence' }, { kind: 'difference', layer: 0, head: 0 }] as const) {
        assert.deepEqual(await answerHeads({ type: 'headsQuery', id: 6, stack: a, other: b, query }), {
          type: 'headsFailed',
          id: 6,
          error: 'cannot compare runs of different shapes: 2 layers × 3 heads × 13×13 against 1 layer × 2 heads × 6×6',
        });
      }
    } finally {
      closeHeads(a);
      closeHeads(b);
    }
  });

  it('says why B cannot be compared, for the way it was chosen: a text of another length says both lengths', () => {
    const shape = (layerCount: number, headCount: number, tokens: number) => ({ layerCount, headCount, queryCount: tokens, keyCount: tokens });
    assert.equal(refusalToCompare(shape(2, 4, 12), shape(2, 4, 12), 'text'), undefined);
    assert.equal(refusalToCompare(shape(2, 4, 12), shape(2, 4, 9), 'text'), 'B’s text is 9 tokens long and A’s 12: compare texts of equal token length.');
    assert.equal(refusalToCompare(shape(2, 4, 12), shape(3, 4, 12), 'checkpoint'), 'cannot compare runs of different shapes: 2 layers × 4 heads × 12×12 against 3 layers × 4 heads × 12×12. Compare checkpoints of the same architecture.');
    assert.equal(refusalToCompare(shape(2, 4, 12), shape(2, 4, 9), 'file'), 'cannot compare runs of different shapes: 2 layers × 4 heads × 12×12 against 2 layers × 4 heads × 9×9.');
  });

  describe('encoder–decoder runs compare kind by kind', () => {
    // A's shape as the page knows it: the encoder on a 7-token source (3 layers × 4 heads), the
    // decoder on a 5-token target and cross-attention (2 layers × 2 heads each).
    const run = (source: number, target: number, layers = 2) => {
      const kinds = [
        { kind: 'encoder' as const, layerCount: 3, headCount: 4, queryCount: source, keyCount: source },
        { kind: 'decoder' as const, layerCount: layers, headCount: 2, queryCount: target, keyCount: target },
        { kind: 'cross' as const, layerCount: layers, headCount: 2, queryCount: target, keyCount: source },
      ];
      return { ...kinds[2], kinds };
    };

    it('the same source and target lengths: every kind compares', () => {
      assert.equal(refusalToCompare(run(7, 5), run(7, 5), 'text'), undefined);
      assert.deepEqual(kindRefusals(run(7, 5), run(7, 5)), {});
    });

    it('another source length: the decoder compares, the encoder and cross-attention say why not', () => {
      assert.equal(refusalToCompare(run(7, 5), run(9, 5), 'text'), undefined);
      assert.deepEqual(kindRefusals(run(7, 5), run(9, 5)), {
        encoder: 'B’s source is 9 tokens long and A’s 7: the encoder attention compares sources of equal length.',
        cross: 'B’s source is 9 tokens long and A’s 7: the cross attention compares sources and targets of equal length.',
      });
    });

    it('another target length: the encoder compares, the decoder and cross-attention say why not', () => {
      assert.equal(refusalToCompare(run(7, 5), run(7, 1), 'checkpoint'), undefined);
      assert.deepEqual(kindRefusals(run(7, 5), run(7, 1)), {
        decoder: 'B’s target is 1 token long and A’s 5: the decoder attention compares targets of equal length.',
        cross: 'B’s target is 1 token long and A’s 5: the cross attention compares sources and targets of equal length.',
      });
    });

    it('no kind compares: refused in one line that names both lengths', () => {
      assert.equal(refusalToCompare(run(7, 5), run(9, 6), 'text'), 'B’s source is 9 tokens long and A’s 7, and B’s target is 6 tokens long and A’s 5: the cross attention compares sources and targets of equal length.');
    });

    it('a checkpoint of another depth: the kinds of other layer counts say so; the encoder of the same compares', () => {
      assert.deepEqual(Object.keys(kindRefusals(run(7, 5), run(7, 5, 3)) ?? {}), ['decoder', 'cross']);
      assert.equal(kindRefusals(run(7, 5), run(7, 5, 3))?.cross, 'A’s cross attention has 2 layers × 2 heads and B’s 3 layers × 2 heads: compare checkpoints of the same architecture.');
    });

    it('saved cross-attention alone against a whole run: only the cross-attention compares', () => {
      const crossOnly = { kind: 'cross' as const, layerCount: 2, headCount: 2, queryCount: 5, keyCount: 7 };
      assert.equal(refusalToCompare(crossOnly, run(7, 5), 'file'), undefined);
      assert.deepEqual(kindRefusals(crossOnly, run(7, 5)), {});
      assert.deepEqual(kindRefusals(run(7, 5), crossOnly), { encoder: 'B has no encoder attention.', decoder: 'B has no decoder attention.' });
    });

    it('an encoder–decoder run against a decoder-only one: refused in one line, either way round', () => {
      const plain = { layerCount: 2, headCount: 2, queryCount: 5, keyCount: 7 };
      assert.equal(refusalToCompare(run(7, 5), plain, 'checkpoint'), 'A is an encoder–decoder run (encoder, decoder, cross attention) and B a run of one self-attention: their heads do not correspond, so they are not compared.');
      assert.equal(refusalToCompare(plain, run(7, 5), 'checkpoint'), 'B is an encoder–decoder run (encoder, decoder, cross attention) and A a run of one self-attention: their heads do not correspond, so they are not compared.');
      assert.equal(kindRefusals(plain, plain), undefined);
    });

    it('B\'s input: a second text keeps A\'s target, a generated one as the ids A\'s decoder read', () => {
      const decoderIds = [0, 17, 18, 1];
      assert.deepEqual(comparedInput({ text: 'a b', target: { generate: 20 } }, decoderIds, 'c d'), { text: 'c d', target: { ids: decoderIds } });
      assert.deepEqual(comparedInput({ text: 'a b', target: { text: 'x y' } }, decoderIds, 'c d'), { text: 'c d', target: { text: 'x y' } });
      // An mBART run's languages stay A's; a generated target's ids hold its language's code already.
      const languages = { source: 'en_XX', target: 'de_DE' };
      assert.deepEqual(comparedInput({ text: 'a b', target: { text: 'x y' }, languages }, decoderIds, 'c d'), { text: 'c d', target: { text: 'x y' }, languages });
      assert.deepEqual(comparedInput({ text: 'a b', target: { generate: 5 }, languages }, decoderIds), { text: 'a b', target: { ids: decoderIds }, languages: { source: 'en_XX' } });
      // Another checkpoint: the same source (text or ids), the same target.
      assert.deepEqual(comparedInput({ ids: [5, 6], target: { generate: 3 } }, decoderIds), { ids: [5, 6], target: { ids: decoderIds } });
      assert.deepEqual(comparedInput({ ids: [5, 6] }, [5, 6]), { ids: [5, 6] });
      assert.deepEqual(comparedInput({ text: 'a b' }, [1, 2], 'c'), { text: 'c' });
      assert.deepEqual(comparedInput({ probe: { repeat: 2, seed: 1 } }, [3, 4, 3, 4]), { ids: [3, 4, 3, 4] });
    });
  });

  it('the page may ask to compare and for a difference; malformed asks are dropped', () => {
    for (const how of ['text', 'checkpoint', 'file']) assert.deepEqual(parseHeadsViewMessage({ type: 'compare', with: how }), { type: 'compare', with: how });
    assert.equal(parseHeadsViewMessage({ type: 'compare', with: '/etc/passwd' }), undefined);
    const query = { type: 'query', requestId: 9, query: { kind: 'difference', layer: 1, head: 2 } };
    assert.deepEqual(parseHeadsViewMessage(query), query);
    assert.equal(parseHeadsViewMessage({ ...query, query: { kind: 'difference', layer: -1, head: 2 } }), undefined);
    assert.deepEqual(parseHeadsViewMessage({ type: 'query', requestId: 9, query: { kind: 'divergence', other: 7 } }), { type: 'query', requestId: 9, query: { kind: 'divergence' } });
  });

  it('writes the divergence map as CSV, a row per head, full precision', () => {
    const reference = referenceCase('planted');
    const lines = divergenceCsv(reference.expected.divergence!).trim().split('\n');
    assert.equal(lines[0], 'layer,head,divergence');
    assert.equal(lines.length, 7);
    assert.equal(lines[4], `1,0,${reference.expected.divergence![1][0]}`);
  });
});
