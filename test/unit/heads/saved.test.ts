// Saved attentions → AttentionStack: every layout the writers produce (scripts/gen_saved_attentions.py:
// torch.save of a stacked tensor, a tuple, a list, a dict with input_ids; numpy.save / savez;
// safetensors with tokens in its metadata), read against the weights PyTorch wrote, and each bad
// input's one message.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSavedAttentions } from '../../../src/core/heads/load';
import { HeadsInputError, savedStack } from '../../../src/core/heads/saved';
import type { AttentionStack } from '../../../src/core/heads/stack';
import { DEFAULT_LIMITS } from '../../../src/core/parse/tensors';

const DIR = join(__dirname, '..', '..', 'fixtures', 'heads', 'saved');
interface FileExpectation {
  layers: number;
  heads: number;
  queries: number;
  keys: number;
  tokens?: string[];
  ids?: number[];
  weights?: number[][][];
}
const expected = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8')) as { tokens: string[]; files: Record<string, FileExpectation>; weights: number[][][] };
const load = (name: string, ids?: number[]) => loadSavedAttentions(join(DIR, name), DEFAULT_LIMITS, ids);

function assertWeights(stack: AttentionStack, weights: number[][][], tolerance: number): void {
  for (let layer = 0; layer < stack.layerCount; layer++) {
    for (let head = 0; head < stack.headCount; head++) {
      const got = stack.weights(layer, head);
      const want = weights[layer][head];
      assert.equal(got.length, want.length);
      want.forEach((value, i) => assert.ok(Math.abs(got[i] - value) <= tolerance, `layer ${layer} head ${head} [${i}]: ${got[i]} vs ${value}`));
    }
  }
}

function loadError(name: string, ids?: number[]): string {
  try {
    load(name, ids);
  } catch (error) {
    assert.ok(error instanceof HeadsInputError, `not a HeadsInputError: ${String(error)}`);
    return error.message;
  }
  assert.fail(`${name} was read`);
}

describe('saved attentions', () => {
  for (const [name, file] of Object.entries(expected.files)) {
    it(`reads ${name}`, () => {
      const { stack, notes } = load(name);
      assert.deepEqual([stack.layerCount, stack.headCount, stack.queryCount, stack.keyCount], [file.layers, file.heads, file.queries, file.keys]);
      // float16 keeps ~3 decimal digits; float32 is exact to its rounding.
      assertWeights(stack, file.weights ?? expected.weights, name.endsWith('.safetensors') ? 0 : 1e-7);
      assert.deepEqual(stack.tokens, file.tokens ?? ['0', '1', '2', '3', '4']);
      assert.deepEqual(stack.tokenIds, file.ids);
      assert.deepEqual(stack.source, { kind: 'saved', file: name.split('/').pop() });
      assert.ok(notes.length >= 2, notes.join(' | '));
    });
  }

  it('says which batch item it shows', () => {
    assert.match(load('pt/batch2.pt').notes.join(' '), /batch of 2, item 0 is shown/);
  });

  it('names ids given on the command line with the tokenizer.json beside the file', () => {
    const { stack, notes } = load('ids/attn.pt', [5, 4, 3, 2, 1]);
    assert.deepEqual(stack.tokens, ['it', 'on', 'sat', 'cat', 'The']);
    assert.deepEqual(stack.tokenIds, [5, 4, 3, 2, 1]);
    assert.match(notes.join(' '), /the ids given, named by tokenizer\.json/);
  });

  it('refuses pre-softmax scores, saying they may be scores', () => {
    assert.match(loadError('bad/scores.npy'), /layer 0 head 0 query 0 .*(sums to|negative weight).*may be pre-softmax scores/);
  });

  it('refuses layers whose shapes disagree', () => {
    assert.equal(loadError('bad/mismatch.npz'), 'The layers\' shapes disagree: `attentions.1` is 1×3×4×4 but `attentions.0` is 1×3×5×5.');
  });

  it('refuses ids whose count differs from the queries', () => {
    assert.equal(loadError('ids/attn.pt', [1, 2, 3]), 'There are 3 ids (the ids given) but the attentions have 5 queries.');
  });

  it('refuses a file without attentions, and tokens of the wrong count', () => {
    const tensor = (key: string, shape: number[], data: number[]) => ({ key, dtype: 'float32' as const, shape, data: Float32Array.from(data) });
    assert.throws(() => savedStack({ file: 'w.pt', content: { format: 'torch', tensors: [tensor('weight', [2, 2], [1, 0, 0, 1])] } }), /w\.pt holds no attentions/);
    const one = tensor('attn', [1, 2, 2], [1, 0, 0.5, 0.5]);
    assert.throws(() => savedStack({ file: 'a.pt', content: { format: 'torch', tensors: [one] }, sidecarTokens: ['a', 'b', 'c'] }), /The tokens name 3 tokens but the attentions have 2 queries/);
    assert.throws(() => savedStack({ file: 'a.pt', content: { format: 'torch', tensors: [one] }, sidecarTokens: { not: 'tokens' } }), /tokens\.json is not a list of token strings/);
    assert.throws(() => savedStack({ file: 'a.pt', content: { format: 'torch', tensors: [tensor('attn', [1, 1, 2], [1, Number.NaN])] } }), /holds NaN/);
  });

  it('keeps a fully masked row (all zero) and labels decoding queries with the last tokens', () => {
    // 1 head, 2 queries over 3 keys (a decode step with a cache), the first row fully masked.
    const content = { format: 'npy' as const, tensors: [{ key: 'array', dtype: 'float32' as const, shape: [1, 1, 2, 3], data: Float32Array.from([0, 0, 0, 0.2, 0.3, 0.5]) }] };
    const { stack } = savedStack({ file: 'd.npy', content, sidecarTokens: ['a', 'b', 'c'] });
    assert.deepEqual([stack.tokens, stack.keyTokens], [['b', 'c'], ['a', 'b', 'c']]);
    assert.equal(stack.lowerTriangular, undefined);
  });

  it('finds, as it checks the rows, whether every head is causal (the analyses then read only the lower triangles)', () => {
    // 2 layers × 1 head of 3 × 3; `past` is the weight of layer 1's last-but-one row past its diagonal.
    const open = (past: number) => {
      const causal = [1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5];
      const other = [1, 0, 0, 0.5, 0.5 - past, past, 0.2, 0.3, 0.5];
      const content = { format: 'npy' as const, tensors: [{ key: 'array', dtype: 'float32' as const, shape: [2, 1, 3, 3], data: Float32Array.from([...causal, ...other]) }] };
      return savedStack({ file: 'c.npy', content }).stack.lowerTriangular;
    };
    assert.equal(open(0), true);
    assert.equal(open(2 ** -126), undefined); // the smallest normal float32 past the diagonal
  });
});
