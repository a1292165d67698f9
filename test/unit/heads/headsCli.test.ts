// `attention-lens heads FILE`: the layout and tokens as read, each query's strongest keys, and one
// message for each mistake (a usage error, or the input's).
import * as assert from 'node:assert/strict';
import { join } from 'node:path';
import { HeadsCommandError, parseHeadsArgs, runHeads } from '../../../src/cli/heads';

const DIR = join(__dirname, '..', '..', 'fixtures', 'heads', 'saved');
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
