// Saved attentions of an encoder–decoder model → one stack per kind (scripts/gen_saved_encoder_decoder.py:
// torch.save of the outputs dict with input_ids and decoder_input_ids, numpy.savez of stacked
// arrays with tokens.json, safetensors per layer with the tokens in its metadata, cross-attentions
// alone), read against the weights PyTorch wrote, each kind with its tokens per axis; and the bad
// inputs' one message.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSavedAttentions } from '../../../src/core/heads/load';
import { HeadsInputError } from '../../../src/core/heads/saved';
import { kindOfKey, readSavedAttentions } from '../../../src/core/heads/savedEncoderDecoder';
import type { AttentionKind, AttentionStack } from '../../../src/core/heads/stack';
import { DEFAULT_LIMITS } from '../../../src/core/parse/tensors';

const DIR = join(__dirname, '..', '..', 'fixtures', 'heads', 'encoder-decoder');
interface KindExpectation {
  layers: number;
  heads: number;
  queries: number;
  keys: number;
  weights: number[][][];
}
const expected = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8')) as {
  tokens: string[];
  target_tokens: string[];
  token_ids: number[];
  target_ids: number[];
  kinds: Record<AttentionKind, KindExpectation>;
};
const load = (name: string, ids?: number[]) => loadSavedAttentions(join(DIR, name), DEFAULT_LIMITS, ids);

function assertKind(stack: AttentionStack, kind: AttentionKind): void {
  const want = expected.kinds[kind];
  assert.equal(stack.kind, kind);
  assert.deepEqual([stack.layerCount, stack.headCount, stack.queryCount, stack.keyCount], [want.layers, want.heads, want.queries, want.keys]);
  // The source labels the encoder's axes and the cross keys; the target the decoder's and the cross queries.
  assert.deepEqual(stack.tokens, kind === 'encoder' ? expected.tokens : expected.target_tokens);
  assert.deepEqual(stack.keyTokens, kind === 'decoder' ? expected.target_tokens : expected.tokens);
  for (let layer = 0; layer < stack.layerCount; layer++) {
    for (let head = 0; head < stack.headCount; head++) {
      const got = stack.weights(layer, head);
      const values = want.weights[layer][head];
      assert.equal(got.length, values.length);
      // float32 files: exact to float32's rounding of PyTorch's float64 softmax.
      values.forEach((value, i) => assert.ok(Math.abs(got[i] - value) <= 1e-7, `${kind} layer ${layer} head ${head} [${i}]: ${got[i]} vs ${value}`));
    }
  }
}

function loadError(name: string): string {
  try {
    load(name);
  } catch (error) {
    assert.ok(error instanceof HeadsInputError, `not a HeadsInputError: ${String(error)}`);
    return error.message;
  }
  assert.fail(`${name} was read`);
}

describe('saved encoder–decoder attentions', () => {
  for (const name of ['ids/outputs.pt', 'npz/stacked.npz', 'safetensors/layers.safetensors']) {
    it(`reads the three kinds of ${name}, each with its tokens per axis`, () => {
      const { stack, notes } = load(name);
      assert.deepEqual(Object.keys(stack.kinds ?? {}).sort(), ['cross', 'decoder', 'encoder']);
      for (const kind of ['encoder', 'decoder', 'cross'] as const) {
        const of = stack.kinds![kind]!;
        assertKind(of, kind);
        // One run: every kind's stack knows the others.
        assert.equal(of.kinds, stack.kinds);
      }
      // The stack itself is the cross-attention's (the alignment), as a model run's is.
      assert.equal(stack, stack.kinds!.cross);
      assert.match(notes.join(' | '), /Encoder: .*Decoder: .*Cross: .*Source tokens: .*Target tokens: /);
    });
  }

  it('names input_ids and decoder_input_ids with the tokenizer.json beside the file', () => {
    const { stack, notes } = load('ids/outputs.pt');
    assert.deepEqual(stack.kinds!.encoder!.tokenIds, expected.token_ids);
    assert.deepEqual(stack.kinds!.decoder!.tokenIds, expected.target_ids);
    // Cross-attention's queries are the target's.
    assert.deepEqual(stack.kinds!.cross!.tokenIds, expected.target_ids);
    assert.match(notes.join(' | '), /Source tokens: `input_ids`, named by tokenizer\.json\. \| Target tokens: `decoder_input_ids`, named by tokenizer\.json\./);
  });

  it('reads a file of cross-attentions alone as a stack of that one kind', () => {
    const { stack } = load('cross/cross.pt');
    assert.deepEqual(Object.keys(stack.kinds ?? {}), ['cross']);
    assertKind(stack, 'cross');
  });

  it('finds the decoder causal, the encoder and cross not', () => {
    const { stack } = load('npz/stacked.npz');
    assert.equal(stack.kinds!.decoder!.lowerTriangular, true);
    assert.equal(stack.kinds!.encoder!.lowerTriangular, undefined);
    assert.equal(stack.kinds!.cross!.lowerTriangular, undefined);
  });

  it('refuses a cross-attention whose source length is not the encoder\'s, naming both tensors', () => {
    assert.equal(loadError('bad/source-mismatch.pt'), 'The source lengths disagree: `encoder_attentions.0` (1×4×7×7) has 7 source positions but `cross_attentions.0` (1×2×8×6) has 6.');
  });

  it('refuses target tokens whose count is not the target\'s, and says which entry', () => {
    const tensor = (key: string, shape: number[]) => {
      const k = shape[shape.length - 1];
      const data = new Float32Array(shape.reduce((a, b) => a * b));
      for (let row = 0; row < data.length / k; row++) data[row * k] = 1;
      return { key, dtype: 'float32' as const, shape, data };
    };
    const content = { format: 'npz' as const, tensors: [tensor('encoder_attentions', [1, 1, 3, 3]), tensor('cross_attentions', [1, 1, 2, 3])] };
    assert.throws(() => readSavedAttentions({ file: 'o.npz', content, sidecarTokens: { tokens: ['a', 'b', 'c'], target_tokens: ['x'] } }), /^HeadsInputError: tokens\.json's `target_tokens` names 1 tokens but the target has 2 positions\.$/);
    assert.throws(() => readSavedAttentions({ file: 'o.npz', content, sidecarTokens: ['a', 'b'] }), /tokens\.json's `tokens` names 2 tokens but the source has 3 positions/);
    // A bare list names the source; the target then shows positions.
    const { stack, notes } = readSavedAttentions({ file: 'o.npz', content, sidecarTokens: ['a', 'b', 'c'] });
    assert.deepEqual([stack.tokens, stack.keyTokens], [['0', '1'], ['a', 'b', 'c']]);
    assert.match(notes.join(' '), /Target tokens: positions 0…1/);
  });

  it('leaves out the other tensors of a saved outputs dict, and says so', () => {
    const eye = { key: 'cross_attentions.0', dtype: 'float32' as const, shape: [1, 1, 2, 2], data: new Float32Array([1, 0, 0, 1]) };
    const logits = { key: 'logits', dtype: 'float32' as const, shape: [1, 2, 5], data: new Float32Array(10) };
    const { stack, notes } = readSavedAttentions({ file: 'o.pt', content: { format: 'torch', tensors: [eye, logits] } });
    assert.equal(stack.kind, 'cross');
    assert.match(notes.join(' '), /Not attentions, left out: `logits`\./);
  });

  it('knows a kind by a part of the tensor\'s name', () => {
    assert.deepEqual(['encoder_attentions.3', 'out/cross_attentions', 'Decoder_Attentions', 'attentions.0', 'cross_attention'].map(kindOfKey), ['encoder', 'cross', 'decoder', undefined, undefined]);
  });
});
