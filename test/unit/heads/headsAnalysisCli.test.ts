// `attention-lens heads` analysis options (src/cli/headsAnalysis.ts): the JSON shape the issue
// names, the values of the core analyses, the probe on the hand-built example, and one clear line
// with exit 1 for each bad input.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { headsAnalysisMain, type HeadsSources } from '../../../src/cli/headsAnalysis';
import { attentionOnlyModelOf, attentionOnlyStack } from '../../../src/core/heads/attentionOnly';
import { divergences } from '../../../src/core/heads/divergence';
import { HEAD_SCORE_NAMES } from '../../../src/core/heads/scores';
import { assertClose, referenceCase, stackOf } from './references';

const root = join(__dirname, '..', '..', '..');
const example = join(root, 'examples', '13-induction-head.json');
const planted = referenceCase('planted');
const model = attentionOnlyModelOf(JSON.parse(readFileSync(example, 'utf8')), example);
const letterId = (letter: string) => (letter.charCodeAt(0) % 23) + 1;

/** Saved attentions as the views' reader gives them: here the planted reference stacks by name. */
const sources: HeadsSources = {
  saved(path, ids) {
    if (path === 'big.pt') return stackOf([...Array(12)].map(() => [[...Array(41)].map(() => Array<number>(41).fill(1 / 41))]), 'float64', null);
    const weights = path === 'other.pt' ? planted.other! : planted.weights;
    if (ids && ids.length !== weights[0][0].length) throw new Error(`--ids has ${ids.length} ids but the attentions have ${weights[0][0].length} queries`);
    return stackOf(weights, 'float64', ids ?? null);
  },
  // A folder `tok/` stands for a model with a tokenizer: the hand-built example, letters as ids 1…23.
  folder: async (path) => {
    if (path !== 'tok/') throw new Error('model folders need the whole-model runner');
    return { run: async (ids) => attentionOnlyStack(model, ids, path), encode: async (text) => [0, ...[...text].map(letterId)], vocabularySize: 24, bos: 0 };
  },
};

async function run(...argv: string[]): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const status = await headsAnalysisMain(argv, sources, { out: (t) => (out += t), err: (t) => (err += t), isFolder: (p) => p.endsWith('/') });
  return { status, out, err };
}

describe('attention-lens heads: analyses', () => {
  it('FILE --ids … --compare FILE2 --json prints scores [L][H], rollout [n][n] and divergence [L][H]', async () => {
    const { status, out } = await run('attn.pt', '--ids', planted.ids!.join(','), '--compare', 'other.pt', '--json');
    assert.equal(status, 0);
    const report = JSON.parse(out) as { scores: Record<string, (number | null)[][]>; rollout: number[][]; divergence: number[][] };
    assert.deepEqual(Object.keys(report.scores), [...HEAD_SCORE_NAMES]);
    for (const name of HEAD_SCORE_NAMES) assertClose(report.scores[name].flat(), planted.expected.scores[name as 'induction'].flat(), 1e-9, name);
    assertClose(report.rollout.flat(), planted.expected.rollout.flat(), 1e-9, 'rollout');
    assertClose(report.divergence.flat(), planted.expected.divergence!.flat(), 1e-9, 'divergence');
  });

  it('DIR --text T --text2 T2 runs the model on both texts and compares them head by head', async () => {
    const { status, out } = await run('tok/', '--text', 'abcabc', '--text2', 'abcabd', '--json');
    assert.equal(status, 0);
    const ids = (text: string) => [0, ...[...text].map(letterId)];
    const expected = await divergences(attentionOnlyStack(model, ids('abcabc'), 'tok/'), attentionOnlyStack(model, ids('abcabd'), 'tok/'));
    assert.deepEqual((JSON.parse(out) as { divergence: number[][] }).divergence, expected);
    assert.ok(expected[1][1] > 0);
  });

  it('--flow adds attention flow', async () => {
    const { out } = await run('attn.pt', '--flow', '--json');
    assertClose((JSON.parse(out) as { flow: number[][] }).flow.flat(), planted.expected.flow!.flat(), 1e-9, 'flow');
  });

  it('prints the scores as tables, null as —', async () => {
    const { status, out } = await run('attn.pt');
    assert.equal(status, 0);
    assert.match(out, /^induction\n +h0 +h1 +h2\n {2}L0 +— +— +—\n/m);
    assert.match(out, /^previous_token\n.*\n {2}L0 +0\.980/m);
  });

  it('--probe induction on the hand-built example ranks layer 1 head 1 first; --repeat sets R', async () => {
    const { status, out } = await run(example, '--probe', 'induction', '--repeat', '20', '--json');
    assert.equal(status, 0);
    const report = JSON.parse(out) as { ids: number[]; ranking: { layer: number; head: number; induction: number }[] };
    assert.equal(report.ids.length, 41);
    assert.deepEqual([report.ranking[0].layer, report.ranking[0].head], [1, 1]);
    assert.ok(report.ranking[0].induction > 0.5);
    assert.match((await run(example, '--probe', 'induction')).out, /^ {2}1\. layer 1 head 1: induction 1\.000$/m);
  });

  const bad: [string[], RegExp][] = [
    [['attn.pt', '--ids', '1,2'], /--ids has 2 ids but the attentions have 13 queries/],
    [['attn.pt', '--ids', '1,x'], /--ids needs whole numbers from 0/],
    [['attn.pt', '--text', 'hello'], /saved attentions take --ids/],
    [['attn.pt', '--probe', 'induction'], /--probe induction runs a model/],
    [['attn.pt', '--probe', 'copying'], /--probe knows `induction` only/],
    [[example, '--probe', 'induction', '--repeat', '0'], /--repeat needs a whole number from 1/],
    [[example, '--text', 'a b'], /this model has no tokenizer: give --ids/],
    [[example, '--ids', '0,99'], /token id 99 is outside the vocabulary 0…23/],
    [[example, '--ids', '0,1,2', '--compare', 'attn.pt'], /--ids has 3 ids but the attentions have 13 queries/],
    [['big.pt', '--flow'], /attention flow is offered up to 40 tokens for 12 layers \(layers × tokens⁴ ≤ 3\.1e\+7\); this input has 41/],
    [['model/', '--text', 'hi'], /model folders need the whole-model runner/],
    [[], /no DIR or FILE given/],
    [[example, '--ids', '0,1,2', '--text2', 'b'], /--text2 compares with the run on --text: give both/],
  ];
  for (const [argv, message] of bad) {
    it(`bad input → one line, exit 1: ${argv.join(' ') || '(nothing)'}`, async () => {
      const { status, out, err } = await run(...argv);
      assert.equal(status, 1);
      assert.equal(out, '');
      assert.match(err, message);
      assert.equal(err.trim().split('\n').length, 1);
    });
  }
});
