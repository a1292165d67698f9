// Encoder–decoder runs against the float64 PyTorch references of scripts/gen_seq2seq_fixtures.py
// (issue 25's tolerances): the three kinds of attention, the decoder's final state and logits, the
// target from text, greedy generation with the cache against the reference's full re-runs, every
// kind's step-by-step problem against the run's own weights, and bad input as one clear message.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAttention } from '../../../src/core/engine';
import type { AttentionKind } from '../../../src/core/heads/stack';
import { relativeBucket } from '../../../src/core/model/relative';
import { runModel, type ModelRun } from '../../../src/core/model/run';
import type { TargetInput } from '../../../src/core/model/input';
import { folderFiles } from '../../../src/node/modelFiles';
import { modelFixture, REFERENCE_TOLERANCE, relativeError } from '../model/fixtures';
import { LANGUAGE_FIXTURES, SEQ2SEQ_FIXTURES, type Seq2SeqFixtureName, seq2seqFixture, seq2seqReference } from './fixtures';

function run(name: Seq2SeqFixtureName | 't5-missing-bias', source: { text: string } | { ids: number[] }, target: TargetInput): Promise<ModelRun> {
  return runModel(folderFiles(seq2seqFixture(name)), { ...source, target });
}

/** The largest difference between a stack's heads and the reference's [layer][head][q][k]. */
function worstAttention(stack: ModelRun, reference: number[][][][]): number {
  assert.equal(stack.layerCount, reference.length);
  assert.equal(stack.headCount, reference[0].length);
  let worst = 0;
  reference.forEach((layer, l) =>
    layer.forEach((head, h) => {
      assert.equal(head.length, stack.queryCount);
      assert.equal(head[0].length, stack.keyCount);
      const weights = stack.weights(l, h);
      head.flat().forEach((v, i) => (worst = Math.max(worst, Math.abs(v - weights[i]))));
    }),
  );
  return worst;
}

describe('encoder–decoder forward against the PyTorch references', function () {
  this.timeout(300000);
  before(() => seq2seqFixture('t5-v1_0')); // generates the set once

  const runs = new Map<Seq2SeqFixtureName, Promise<ModelRun>>();
  const byIds = (name: Seq2SeqFixtureName) => {
    const reference = seq2seqReference(name);
    if (!runs.has(name)) runs.set(name, run(name, { ids: reference.source_ids }, { ids: reference.target_ids }));
    return runs.get(name)!;
  };

  for (const name of SEQ2SEQ_FIXTURES) {
    it(`${name}: encoder, decoder and cross attentions, final hidden state and logits`, async () => {
      const reference = seq2seqReference(name);
      const cross = await byIds(name);
      assert.equal(cross.kind, 'cross');
      const kinds = cross.kinds!;
      assert.equal(kinds.cross, cross);
      assert.deepEqual(kinds.encoder!.tokenIds, reference.source_ids);
      assert.deepEqual(cross.tokenIds, reference.target_ids);
      assert.deepEqual(cross.keyTokens, kinds.encoder!.tokens);
      assert.deepEqual(cross.tokens, kinds.decoder!.tokens);
      assert.equal(kinds.decoder!.lowerTriangular, true);
      for (const [kind, want] of [['encoder', reference.encoder_attentions], ['decoder', reference.decoder_attentions], ['cross', reference.cross_attentions]] as const) {
        const worst = worstAttention(kinds[kind]!, want);
        assert.ok(worst <= REFERENCE_TOLERANCE.attention, `${kind} attention off by ${worst}`);
      }
      const hidden = relativeError(reference.hidden_last, cross.hiddenLast);
      assert.ok(hidden <= REFERENCE_TOLERANCE.hiddenRelative, `hidden_last off by ${hidden} (relative)`);
      const logits = relativeError(reference.logits_last, cross.logitsLast!);
      assert.ok(logits <= REFERENCE_TOLERANCE.logitsRelative, `logits_last off by ${logits} (relative)`);
      assert.equal(cross.predictions[0].position, reference.target_ids.length - 1);
    });

    it(`${name}: greedy generation with the cache gives the reference's full re-runs' tokens`, async () => {
      const reference = seq2seqReference(name);
      const generated = await run(name, { ids: reference.source_ids }, { generate: reference.generate });
      assert.deepEqual(generated.tokenIds, reference.generated);
      assert.equal(generated.timings.generatedTokens, reference.generated.length - 1);
      // The recorded pass is the decoder on exactly those ids.
      assert.equal(generated.kinds!.decoder!.queryCount, reference.generated.length);
    });
  }

  it('text source and target through tokenizer.json: the decoder input is decoder_start_token_id, then the target tokens', async () => {
    for (const name of ['t5-v1_0', 'bart-bin', 'mbart'] as const) {
      const reference = seq2seqReference(name);
      const fromText = await run(name, { text: reference.source_text! }, { text: reference.target_text! });
      assert.deepEqual(fromText.kinds!.encoder!.tokenIds, reference.source_ids, name);
      assert.deepEqual(fromText.tokenIds, reference.target_ids, name);
      assert.ok(relativeError(reference.logits_last, fromText.logitsLast!) <= REFERENCE_TOLERANCE.logitsRelative);
    }
    const t5 = await run('t5-v1_0', { text: 'The cat.' }, { text: 'Die Katze.' });
    assert.deepEqual(t5.kinds!.encoder!.tokens, ['the', 'cat', '.', '</s>']);
    assert.deepEqual(t5.tokens, ['<pad>', 'die', 'katze', '.', '</s>']);
  });

  it("every kind's step-by-step problem gives the run's weights (a cross head: X from the decoder, the source the encoder's output, the checkpoint's W_Q, W_K, W_V)", async () => {
    for (const name of ['t5-v1_0', 'bart-bin', 'marian-f16', 'mbart'] as const) {
      const cross = await byIds(name);
      for (const kind of ['encoder', 'decoder', 'cross'] as AttentionKind[]) {
        const stack = cross.kinds![kind]!;
        for (const [l, h] of [[0, 0], [stack.layerCount - 1, stack.headCount - 1]]) {
          const spec = await stack.drillDownSpec(l, h);
          if (kind === 'cross') {
            assert.ok(spec.X && spec.context && spec.WQ && spec.WK && spec.WV, `${name} cross: X, context and the projections`);
            assert.equal(spec.context.rows, stack.keyCount);
            assert.deepEqual(spec.keyTokens, stack.keyTokens);
          }
          const stepped = runAttention(spec).heads[0].weights.data;
          const ran = stack.weights(l, h);
          assert.equal(stepped.length, ran.length);
          let worst = 0;
          ran.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - stepped[i]))));
          assert.ok(worst < 1e-5, `${name} ${kind} L${l} H${h}: off by ${worst}`);
        }
      }
    }
    const t5 = await (await byIds('t5-v1_0')).kinds!.encoder!.drillDownSpec(0, 1);
    assert.equal(t5.mask?.kind, 'additive');
    assert.match(t5.options.name!, /relative position bias as the additive mask/);
    await assert.rejects(async () => (await byIds('bart-bin')).drillDownSpec(2, 0), /no layer 2, head 0: the decoder has layers 0–1 of heads 0–1/);
  });

  it('relative buckets: exact near, logarithmic far, halves by direction in the encoder, only the past in the decoder', () => {
    // T5's published settings: 32 buckets, max distance 128.
    assert.deepEqual([-3, -1, 0, 1, 3].map((r) => relativeBucket(r, true, 32, 128)), [3, 1, 0, 17, 19]);
    assert.deepEqual([0, -7, -8, -12, -16, -127, -128, -1000].map((r) => relativeBucket(r, true, 32, 128)), [0, 7, 8, 9, 10, 15, 15, 15]);
    assert.deepEqual([0, 5, -5, -15, -16, -1000].map((r) => relativeBucket(r, false, 32, 128)), [0, 0, 5, 15, 16, 31]);
  });

  it('bad input: one clear message each', async () => {
    await assert.rejects(run('t5-missing-bias', { ids: [3, 4] }, { ids: [0, 5] }), /the checkpoint has no relative attention bias table encoder\.block\.0\.layer\.0\.SelfAttention\.relative_attention_bias\.weight/);
    await assert.rejects(run('t5-v1_0', { ids: [3, 4] }, { ids: [0, 40] }), /^RangeError: target token id 40 is outside the vocabulary \(0…39\)$/);
    await assert.rejects(run('bart-bin', { ids: Array.from({ length: 25 }, () => 5) }, { ids: [2] }), /the source has 25 tokens but bart has 24 positions/);
    await assert.rejects(run('t5-v1_1-bf16', { text: 'the cat' }, { ids: [0] }), /has no tokenizer\.json: give the source \(--ids 1,2,3\) as token ids instead/);
    await assert.rejects(run('marian-f16', { ids: [3] }, { text: 'die katze' }), /has no tokenizer\.json \(only SentencePiece's source\.spm and target\.spm, which this extension does not read\): give the target/);
    await assert.rejects(run('bart-bin', { ids: [3] }, { generate: 0 }), /generate needs a positive whole number/);
    await assert.rejects(runModel(folderFiles(seq2seqFixture('bart-bin')), { ids: [3] }), /an encoder–decoder model \(bart\): give a target too/);
    await assert.rejects(runModel(folderFiles(modelFixture('gpt2')), { ids: [3], target: { ids: [1] } }), /is a decoder-only model \(gpt2\): it has no decoder to take a target/);
    await assert.rejects(runModel(folderFiles(modelFixture('bert')), { ids: [3], target: { generate: 3 } }), /is an encoder-only model \(bert\)/);
  });
});

describe('encoder–decoder fixtures', () => {
  it('every float64 reference agrees with a second route, buckets per pair and greedy tokens with a cache (gen_seq2seq_fixtures --check)', function () {
    this.timeout(300_000);
    const out = mkdtempSync(join(tmpdir(), 'seq2seq-check-'));
    try {
      const report = execFileSync('/usr/bin/python3', [join(__dirname, '..', '..', '..', 'scripts', 'gen_seq2seq_fixtures.py'), out, '--check'], { encoding: 'utf8' });
      const checked = [...report.matchAll(/^(\S+): largest difference (\S+); generated (\[[^\]]*\]) == \3 \(loops\), \3 \(cached\)$/gm)];
      assert.deepEqual(checked.map((m) => m[1]).sort(), [...SEQ2SEQ_FIXTURES].sort(), report);
      for (const [, , difference] of checked) assert.ok(Number(difference) < 1e-9, report);
      // The language fixtures: their second route, and greedy tokens with a cache from the language's start.
      const languages = [...report.matchAll(/^(\S+): largest difference (\S+); generated (\[[^\]]*\]) == \3 \(cached\)/gm)];
      assert.deepEqual(languages.map((m) => m[1]).sort(), [...LANGUAGE_FIXTURES].sort(), report);
      for (const [, , difference] of languages) assert.ok(Number(difference) < 1e-9, report);
      assert.match(report, /^buckets: vectorised and per pair agree$/m);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
