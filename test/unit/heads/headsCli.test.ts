// `attention-lens heads FILE`: the layout and tokens as read, each query's strongest keys, and one
// message for each mistake (a usage error, or the input's); of saved encoder–decoder attentions
// (scripts/gen_saved_encoder_decoder.py), cross-attention by default and each kind on request
// (--attention) with its own tokens per axis.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HeadsCommandError, parseHeadsArgs, runHeads } from '../../../src/cli/heads';

const DIR = join(__dirname, '..', '..', 'fixtures', 'heads', 'saved');
const ENCODER_DECODER = join(__dirname, '..', '..', 'fixtures', 'heads', 'encoder-decoder');
const heads = (...argv: string[]) => runHeads(parseHeadsArgs(argv));
async function failure(...argv: string[]): Promise<HeadsCommandError> {
  try {
    await heads(...argv);
  } catch (error) {
    assert.ok(error instanceof HeadsCommandError, String(error));
    return error;
  }
  assert.fail('no error');
}

describe('attention-lens heads', () => {
  it('prints the layout, the tokens and a head\'s strongest keys', async () => {
    const text = await heads(join(DIR, 'sidecar', 'layers.npz'), '--layer', '1', '--head', '2', '--top', '2');
    const lines = text.split('\n');
    assert.match(lines[0], /layers\.npz: 2 layers × 3 heads, 5 queries × 5 keys$/);
    assert.ok(lines.includes('note: Tokens: tokens.json beside the file.'));
    assert.ok(lines.includes('tokens: "The" "cat" "sat" "on" "it"'));
    // Causal: the first query sees only itself.
    assert.ok(lines.includes('  0 "The" → "The" (0) 1.0000, "cat" (1) 0.0000'), text);
  });

  it('prints JSON with the ids and their tokens', async () => {
    const report = JSON.parse(await heads(join(DIR, 'ids', 'attn.pt'), '--json', '--ids', '1,2,3,4,5')) as { layers: number; tokens: string[]; tokenIds: number[] };
    assert.deepEqual([report.layers, report.tokens, report.tokenIds], [2, ['The', 'cat', 'sat', 'on', 'it'], [1, 2, 3, 4, 5]]);
  });

  it('gives one message for each mistake', async () => {
    assert.equal((await failure(join(DIR, 'ids', 'attn.pt'), '--ids', '1,2')).message, 'There are 2 ids (the ids given) but the attentions have 5 queries.');
    assert.equal((await failure(join(DIR, 'ids', 'attn.pt'), '--ids', 'a,b')).usage, true);
    assert.equal((await failure(join(DIR, 'npy', 'stacked.npy'), '--layer', '2', '--head', '0')).message, '--layer 2: the file has layers 0–1');
    assert.equal((await failure(join(DIR, 'npy', 'stacked.npy'), '--layer', '0')).message, '--layer and --head go together');
    assert.match((await failure(join(DIR, 'missing.pt'))).message, /cannot read .*missing\.pt: ENOENT/);
    assert.match((await failure(join(DIR, 'bad', 'scores.npy'))).message, /may be pre-softmax scores/);
  });
});

describe('attention-lens heads on encoder–decoder attentions', () => {
  const expected = JSON.parse(readFileSync(join(ENCODER_DECODER, 'expected.json'), 'utf8')) as { tokens: string[]; target_tokens: string[]; target_ids: number[] };
  const file = join(ENCODER_DECODER, 'ids', 'outputs.pt');

  it('prints cross-attention by default, its target as queries and its source as keys', async () => {
    const lines = (await heads(file)).split('\n');
    assert.match(lines[0], /outputs\.pt: 2 layers × 2 heads, 8 queries × 7 keys$/);
    assert.equal(lines[1], 'attention: cross (the file has encoder, decoder, cross: --attention chooses)');
    assert.ok(lines.includes(`tokens: ${expected.target_tokens.map((t) => JSON.stringify(t)).join(' ')}`));
    assert.ok(lines.includes(`key tokens: ${expected.tokens.map((t) => JSON.stringify(t)).join(' ')}`));
  });

  it('prints the kind asked for, in JSON with the kinds the file has', async () => {
    const report = JSON.parse(await heads(file, '--attention', 'decoder', '--json')) as { attention: string; kinds: string[]; layers: number; heads: number; tokens: string[]; keyTokens: string[]; tokenIds: number[]; rollout: number[][] | null };
    assert.deepEqual([report.attention, report.kinds, report.layers, report.heads], ['decoder', ['encoder', 'decoder', 'cross'], 2, 2]);
    assert.deepEqual([report.tokens, report.keyTokens, report.tokenIds], [expected.target_tokens, expected.target_tokens, expected.target_ids]);
    // The decoder's self-attention has a rollout; cross-attention has none.
    assert.equal(report.rollout?.length, 8);
    assert.equal((JSON.parse(await heads(file, '--json')) as { rollout: null }).rollout, null);
  });

  it('refuses a kind the file does not have, and a kind that does not exist', async () => {
    assert.equal((await failure(join(ENCODER_DECODER, 'cross', 'cross.pt'), '--attention', 'encoder')).message, '--attention encoder: the file has cross attentions');
    const unknown = await failure(file, '--attention', 'self');
    assert.deepEqual([unknown.message, unknown.usage], ['--attention needs one of encoder, decoder, cross', true]);
  });
});
