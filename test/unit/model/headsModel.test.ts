// `attention-lens heads DIR …` on a model folder: the whole-model runner feeds the head analyses.
// Scores and rollout of a text equal those of the float64 PyTorch reference's attentions (within the
// float32 attention tolerance), the probe ranks every head, and a folder without a tokenizer
// refuses a text in one line.
import assert from 'node:assert/strict';
import { cliHeadsSources, headsAnalysisMain } from '../../../src/cli/headsAnalysis';
import { analyseStack } from '../../../src/core/heads/analysis';
import { HEAD_SCORE_NAMES } from '../../../src/core/heads/scores';
import { assertClose, stackOf } from '../heads/references';
import { modelFixture, modelReference, REFERENCE_TOLERANCE } from './fixtures';

async function heads(...argv: string[]): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const status = await headsAnalysisMain(argv, cliHeadsSources(2 ** 27), { out: (t) => (out += t), err: (t) => (err += t) });
  return { status, out, err };
}

describe('attention-lens heads on a model folder', function () {
  this.timeout(120_000);

  it('DIR --text: the scores and rollout of the model\'s own attentions', async () => {
    const reference = modelReference('gpt2');
    const { status, out, err } = await heads(modelFixture('gpt2'), '--text', reference.text!, '--json');
    assert.equal(status, 0, err);
    const report = JSON.parse(out) as { scores: Record<string, (number | null)[][]>; rollout: number[][] };
    const expected = await analyseStack(stackOf(reference.attentions, 'float64', reference.token_ids));
    for (const name of HEAD_SCORE_NAMES) {
      assertClose(report.scores[name].flat(), expected.scores[name as 'induction'].flat(), 10 * REFERENCE_TOLERANCE.attention, name);
    }
    assertClose(report.rollout.flat(), Array.from(expected.rollout ?? []), 10 * REFERENCE_TOLERANCE.attention, 'rollout');
  });

  it('--probe induction runs the model on BOS + random tokens twice and ranks every head', async () => {
    const { status, out, err } = await heads(modelFixture('llama-gqa-bf16'), '--probe', 'induction', '--repeat', '6', '--json');
    assert.equal(status, 0, err);
    const probe = JSON.parse(out) as { ranking: unknown[]; ids: number[] };
    const reference = modelReference('llama-gqa-bf16');
    assert.equal(probe.ranking.length, reference.attentions.length * reference.attentions[0].length);
    assert.equal(probe.ids.length, 13);
  });

  it('a text for a folder without tokenizer.json is one line and exit 1', async () => {
    const { status, out, err } = await heads(modelFixture('qwen3'), '--text', 'hello');
    assert.equal(status, 1);
    assert.equal(out, '');
    assert.match(err, /no tokenizer/);
    assert.equal(err.trim().split('\n').length, 1);
  });
});
