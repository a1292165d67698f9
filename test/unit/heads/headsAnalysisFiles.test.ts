// `attention-lens heads` analyses on real saved files (the views' fixtures, written by torch.save
// and numpy): the CLI's readers end to end, and their refusals as one line with exit 1.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { cliHeadsSources, headsAnalysisMain } from '../../../src/cli/headsAnalysis';

const saved = join(__dirname, '..', '..', 'fixtures', 'heads', 'saved');

async function run(...argv: string[]): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const status = await headsAnalysisMain(argv, cliHeadsSources(2 ** 24), { out: (t) => (out += t), err: (t) => (err += t) });
  return { status, out, err };
}

describe('attention-lens heads: analyses of saved files', () => {
  it('the same attentions saved as one tensor and as a list of layers diverge by 0 everywhere', async () => {
    const { status, out } = await run(join(saved, 'pt', 'stacked.pt'), '--compare', join(saved, 'pt', 'list.pt'), '--json');
    assert.equal(status, 0);
    const report = JSON.parse(out) as { scores: { entropy: number[][] }; rollout: number[][]; divergence: number[][] };
    assert.deepEqual(report.divergence, [
      [0, 0, 0],
      [0, 0, 0],
    ]);
    assert.equal(report.rollout.length, 5);
    // The files hold float32 attention, whose rollout is computed in float32.
    assert.ok(report.rollout.every((row) => Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-6));
  });

  const bad: [string[], RegExp][] = [
    [[join(saved, 'bad', 'scores.npy'), '--flow'], /has a negative weight .*they may be pre-softmax scores/],
    [[join(saved, 'pt', 'stacked.pt'), '--compare', join(saved, 'bad', 'scores.npy')], /pre-softmax scores/],
    [[join(saved, 'pt', 'stacked.pt'), '--ids', '1,2', '--flow'], /2 ids .* but the attentions have 5 queries/],
    [[join(saved, 'missing.pt'), '--flow'], /ENOENT/],
  ];
  for (const [argv, message] of bad) {
    it(`one line, exit 1: ${argv.map((a) => a.replace(saved, '…')).join(' ')}`, async () => {
      const { status, out, err } = await run(...argv);
      assert.equal(status, 1);
      assert.equal(out, '');
      assert.match(err, message);
      assert.equal(err.trim().split('\n').length, 1);
    });
  }
});
