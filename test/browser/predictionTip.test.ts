// A model run's heads page in Chromium: resting the mouse on a token of the head view asks the
// worker's code for that position's prediction (the run's own predictAt, on the GPT-2 and BERT
// fixtures) and shows its top 5 in a tooltip; rapid hovering asks once, for where the mouse
// rests, and a token already answered asks no more. The page's clock is Playwright's, so the
// rest is a step of the test, not a wait.
import assert from 'node:assert/strict';
import { runModel, type ModelRun } from '../../src/core/model/run';
import { folderFiles } from '../../src/node/modelFiles';
import { quoted, weightText } from '../../webview/heads/page';
import { modelFixture, modelReference } from '../unit/model/fixtures';
import { type HeadsPage, openHeads } from './headsPage';

const ROW = 16;
/** Longer than the page's rest before it asks (predictionTip.ts). */
const REST = 500;

const predictQueries = async (panel: HeadsPage) => (await panel.sent()).flatMap((m) => (m.type === 'query' && m.query.kind === 'predict' ? [m.query.position] : []));

/** Moves the mouse onto query token `index` of the head view (its left column). */
async function onToken(panel: HeadsPage, index: number): Promise<void> {
  const box = (await panel.page.locator('#lines-canvas').boundingBox())!;
  await panel.page.mouse.move(box.x + 100, box.y + index * ROW + ROW / 2);
}

async function tipFor(panel: HeadsPage, position: number): Promise<{ hidden: boolean; text: string }> {
  await panel.page.waitForSelector(`#prediction-tooltip[data-position="${position}"]`, { state: 'attached' });
  return panel.page.$eval('#prediction-tooltip', (tip) => ({ hidden: (tip as HTMLElement).hidden, text: tip.textContent ?? '' }));
}

describe('heads page: a model run\'s predictions on hover of a token', function () {
  this.timeout(180_000);
  let panel: HeadsPage | undefined;
  let gpt2: ModelRun;
  let bert: ModelRun;
  before(async () => {
    gpt2 = await runModel(folderFiles(modelFixture('gpt2')), { text: modelReference('gpt2').text! });
    bert = await runModel(folderFiles(modelFixture('bert')), { text: modelReference('bert').text! });
  });
  afterEach(async () => {
    if (!panel) return;
    assert.deepEqual(panel.errors, [], 'the page logged errors');
    assert.deepEqual(await panel.violations(), [], 'CSP violations');
    await panel.close();
    panel = undefined;
  });

  async function openLines(run: ModelRun): Promise<HeadsPage> {
    const opened = await openHeads(run, { ownContext: true }); // the fake clock is the whole context's
    // Installed, then paused: time moves only by runFor.
    await opened.page.clock.install();
    await opened.page.clock.pauseAt(Date.now() + 60_000);
    await opened.page.click('#tab-heads-lines');
    return opened;
  }

  it('asks once for the token the mouse rests on, shows its top 5 next tokens, and keeps the answer', async () => {
    panel = await openLines(gpt2);
    for (let i = 0; i <= 7; i++) await onToken(panel, i);
    assert.deepEqual(await predictQueries(panel), [], 'nothing asked while the mouse moves');
    await panel.page.clock.runFor(REST);
    const expected = async (position: number) => {
      const prediction = (await gpt2.predictAt(position))!;
      return `after ${quoted(gpt2.tokens[position])}: ${prediction.top.map((t) => `${t.token} ${weightText(t.probability)}`).join(', ')}`;
    };
    assert.deepEqual(await tipFor(panel, 7), { hidden: false, text: await expected(7) });
    assert.deepEqual(await predictQueries(panel), [7]);
    await onToken(panel, 3);
    await panel.page.clock.runFor(REST);
    assert.deepEqual(await tipFor(panel, 3), { hidden: false, text: await expected(3) });
    await onToken(panel, 7);
    assert.deepEqual(await tipFor(panel, 7), { hidden: false, text: await expected(7) }, 'shown at once from the kept answer');
    assert.deepEqual(await predictQueries(panel), [7, 3]);
    await panel.page.mouse.move(0, 0);
    assert.equal(await panel.page.$eval('#prediction-tooltip', (tip) => (tip as HTMLElement).hidden), true);
  });

  it('shows a BERT [MASK]\'s top 5 fillers, and nothing on a token that is not masked', async () => {
    panel = await openLines(bert);
    const mask = bert.tokens.indexOf('[MASK]');
    const [fillers] = bert.predictions;
    await onToken(panel, mask);
    await panel.page.clock.runFor(REST);
    const text = `[MASK] (${mask}): ${fillers.top.map((t) => `${t.token} ${weightText(t.probability)}`).join(', ')}`;
    assert.deepEqual(await tipFor(panel, mask), { hidden: false, text });
    await onToken(panel, 1);
    await panel.page.clock.runFor(REST);
    assert.equal((await tipFor(panel, 1)).hidden, true);
    assert.deepEqual(await predictQueries(panel), [mask, 1]);
  });
});
