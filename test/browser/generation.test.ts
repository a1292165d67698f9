// A generation on the heads page in Chromium, on a real generation of the GPT-2 fixture
// (core/model/generate.ts): the test stands in for the host, posting the prompt and each step as
// the worker does (each with its attention row), then the run's stack, whose queries the worker's
// own code answers. The page shows each token as it arrives, with its candidates and its rows;
// from the prompt's attention and each step's row, its model view and head view grow by a row a
// token, showing the numbers streamed; Stop posts stopGeneration; once the run ends the slider and
// ←/→ move through the answer, the head view keeps to the step's query, any step's rows are asked
// for and drawn, hovering a token shows its step's candidates, a click on a head's row opens that
// head at that step, and the page says how the tokens were chosen (greedy, or sampled with which
// values).
import assert from 'node:assert/strict';
import { generateModel } from '../../src/core/model/generate';
import type { ModelRun } from '../../src/core/model/run';
import { folderFiles } from '../../src/node/modelFiles';
import type { GenerationStep, PromptAttention } from '../../src/core/model/generate';
import type { HeadsViewToHost } from '../../src/protocol';
import { quoted, weightText } from '../../webview/heads/page';
import { modelFixture, modelReference } from '../unit/model/fixtures';
import { closeChecked, type HeadsPage, openHeads } from './headsPage';

const NEW_TOKENS = 6;

/** The live message of a step, as src/worker/models.ts posts it. */
function stepMessage({ attention, ...step }: GenerationStep) {
  const weights = new Float32Array(attention.reduce((sum, layer) => sum + layer.length, 0));
  attention.reduce((at, layer) => (weights.set(layer, at), at + layer.length), 0);
  const row = { position: step.position - 1, layers: attention.length, heads: attention[0].length / step.position, keys: step.position, weights };
  return { type: 'generationStep', step, row, computedAt: Date.now() };
}

const textOf = (panel: HeadsPage) => panel.page.$$eval('#generation-text .generated', (spans) => spans.map((span) => span.textContent));
const chosenOf = (panel: HeadsPage) => panel.page.$eval('#generation-candidates [data-chosen]', (item) => item.textContent);

describe('heads page: a generation, token by token', function () {
  this.timeout(180_000);
  let run: ModelRun;
  let promptAttention: PromptAttention;
  let panel: HeadsPage | undefined;
  const posted: HeadsViewToHost[] = [];
  before(async () => {
    run = await generateModel(folderFiles(modelFixture('gpt2')), { text: modelReference('gpt2').text! }, { maxNewTokens: NEW_TOKENS, onPrompt: (attention) => (promptAttention = attention) });
  });
  afterEach(async () => {
    await closeChecked(panel);
    panel = undefined;
    posted.length = 0;
  });

  it('paints each token as it arrives, with its 5 candidates and its rows, and Stop asks the host to stop', async () => {
    const generation = run.generation!;
    const prompt = run.tokens.slice(0, generation.promptLength);
    panel = await openHeads(run, {
      onPosted: (message) => posted.push(message),
      opening: {
        text: 'gpt2 (generating…)',
        meanwhile: async (page, send) => {
          await send({ type: 'generating', prompt, maxNewTokens: NEW_TOKENS, decoding: generation.decoding });
          for (const step of generation.steps.slice(0, 3)) {
            await send(stepMessage(step));
            // Each token is on the page before the next step is sent.
            await page.waitForFunction((count) => document.querySelectorAll('#generation-text .generated').length === count, step.index + 1);
            await page.waitForSelector(`#generation-rows[data-keys="${step.position}"]`);
            const items = await page.$$eval('#generation-candidates li', (lis) => lis.length);
            assert.ok(items === 5 || items === 6, 'the 5 candidates, and the chosen token when outside them');
          }
          assert.equal(await page.$eval('#generation-candidates [data-chosen]', (item) => item.textContent), `✓ ${quoted(generation.steps[2].token)} ${weightText(generation.steps[2].candidates.top.find((c) => c.id === generation.steps[2].id)!.probability)}`);
          await page.click('#generation-stop');
          await page.waitForFunction(() => (document.querySelector('#generation-stop') as HTMLButtonElement).disabled);
          assert.equal(await page.$eval('#generation-text', (text) => text.querySelectorAll('.prompt').length), prompt.length);
          assert.equal(await page.$eval('#generation-decoding', (line) => line.textContent), 'greedy: the most probable token at each step', 'how the tokens are chosen, from the start');
          const latencies = await page.$eval('#generation', (section) => (section as HTMLElement).dataset.latencies ?? '');
          assert.equal(latencies.split(' ').length, 3, 'a paint time for each step');
          for (const step of generation.steps.slice(3)) await send(stepMessage(step));
        },
      },
    });
    assert.ok(posted.some((message) => message.type === 'stopGeneration'), 'Stop reached the host');
    await panel.page.waitForSelector('#generation[data-finished]');
    assert.deepEqual(await textOf(panel), generation.steps.map((step) => step.token.replace(/␣/g, ' ').replace(/↵/g, '\n')));
  });

  it('while it writes, the model view and the head view grow by a row a token, showing the rows streamed', async () => {
    const generation = run.generation!;
    const prompt = run.tokens.slice(0, generation.promptLength);
    const grown: string[] = [];
    // The live model view paints before the run's does: the test waits for its own steps to end.
    let streamed!: Promise<void>;
    panel = await openHeads(run, {
      onPosted: (message) => posted.push(message),
      opening: {
        text: 'gpt2 (generating…)',
        meanwhile: (page, send) => (streamed = (async () => {
          await send({ type: 'generating', prompt, maxNewTokens: NEW_TOKENS, decoding: generation.decoding });
          await send({ type: 'generationPrompt', attention: promptAttention });
          const legend = '#heads-live #grid-legend';
          // Before any step: the prompt but its last token (whose row step 0 computes).
          await page.waitForFunction(([selector, n]) => document.querySelector(selector)?.textContent?.includes(`${n} queries × ${n} keys`), [legend, prompt.length - 1] as const);
          for (const step of generation.steps.slice(0, 4)) {
            await send(stepMessage(step));
            const n = step.position; // rows 0…position − 1: this step's row is the newest
            await page.waitForFunction(([selector, count]) => document.querySelector(selector)?.textContent?.includes(`${count} queries × ${count} keys`), [legend, n] as const);
            grown.push(await page.$eval(legend, (element) => element.textContent ?? ''));
            // The newest row's strongest key in L0 H0's thumbnail (one weight a cell below 48 tokens), hovered: the weight streamed.
            const q = n - 1;
            const row = step.attention[0].subarray(0, step.position);
            const key = [...row.keys()].sort((a, b) => row[b] - row[a])[0];
            const box = (await page.locator('#heads-live #grid-canvas').boundingBox())!;
            await page.mouse.move(box.x + 28 + ((key + 0.5) * 48) / n, box.y + 28 + ((q + 0.5) * 48) / n);
            const tip = await page.$eval('#heads-live #grid-tooltip', (element) => element.textContent ?? '');
            assert.equal(tip, `Layer 0 · head 0 · ${quoted(run.tokens[q])} (${q}) → ${quoted(run.tokens[key])} (${key}): ${weightText(row[key])}`);
          }
          // The head view has the newest query's lines, from its streamed row.
          await page.click('#heads-live #tab-heads-lines');
          const step = generation.steps[3];
          const q = step.position - 1;
          const lines = (await page.locator('#heads-live #lines-canvas').boundingBox())!;
          await page.mouse.move(lines.x + 20, lines.y + q * 16 + 8);
          const row = step.attention[0].subarray(0, step.position);
          const key = [...row.keys()].sort((a, b) => row[b] - row[a])[0];
          const reading = await page.$eval('#heads-live #lines-hover', (element) => element.textContent ?? '');
          assert.ok(reading.startsWith(`Query ${quoted(run.tokens[q])} (${q}) → head 0: ${quoted(run.tokens[key])} ${weightText(row[key])}`), reading);
          for (const step of generation.steps.slice(4)) await send(stepMessage(step));
        })()),
      },
    });
    await streamed;
    assert.equal(grown.length, 4);
    // The run's stack replaces the live views with the page's own.
    await panel.page.waitForSelector('#generation[data-finished]');
    assert.equal(await panel.page.$('#heads-live'), null);
  });

  it('a prompt too long to send its attention: the page says the views come at the end', async () => {
    const generation = run.generation!;
    const prompt = run.tokens.slice(0, generation.promptLength);
    let note = '';
    let noted!: Promise<void>;
    panel = await openHeads(run, {
      opening: {
        text: 'gpt2 (generating…)',
        meanwhile: (page, send) => (noted = (async () => {
          await send({ type: 'generating', prompt, maxNewTokens: NEW_TOKENS, decoding: generation.decoding });
          await send({ type: 'generationPrompt', attention: { queries: promptAttention.queries, layers: promptAttention.layers, heads: promptAttention.heads } });
          await send(stepMessage(generation.steps[0]));
          await page.waitForSelector('#heads-live-note');
          assert.equal(await page.$('#heads-live'), null);
          note = await page.$eval('#heads-live-note', (line) => line.textContent ?? '');
        })()),
      },
    });
    await noted;
    assert.equal(note, `The prompt's ${prompt.length} tokens are too many to draw every head as the answer grows: the model view and head view come when it is written.`);
  });

  it('after the run: the slider and ←/→ move through the steps, the head view keeps to the step, any step’s rows are asked and drawn', async () => {
    const { steps } = run.generation!;
    panel = await openHeads(run, { onPosted: (message) => posted.push(message) });
    await panel.page.waitForSelector('#generation[data-finished]');
    assert.equal(await panel.page.$eval('#generation-decoding', (line) => line.textContent), 'greedy: the most probable token at each step', 'how the tokens were chosen');
    const last = steps.length - 1;
    await panel.page.waitForSelector(`#generation-rows[data-position="${steps[last].position - 1}"]`);
    assert.equal(await chosenOf(panel), `✓ ${quoted(steps[last].token)} ${weightText(steps[last].candidates.top.find((c) => c.id === steps[last].id)!.probability)}`);
    await panel.page.keyboard.press('ArrowLeft');
    await panel.page.keyboard.press('ArrowLeft');
    const shownStep = last - 2;
    await panel.page.waitForSelector(`#generation-rows[data-position="${steps[shownStep].position - 1}"]`);
    assert.equal(await panel.page.$eval('#generation-step', (slider) => (slider as HTMLInputElement).value), String(shownStep));
    assert.equal(await panel.page.$eval('#lines-canvas', (canvas) => (canvas as HTMLElement).dataset.focused), String(steps[shownStep].position - 1), 'the head view keeps to the query that chose the token');
    const rowQueries = posted.flatMap((m) => (m.type === 'query' && m.query.kind === 'row' ? [m.query.position] : []));
    assert.ok(rowQueries.includes(steps[shownStep].position - 1), 'the step’s rows asked for');
    // The row drawn is the one the step computed: a head's strongest key in the tooltip.
    const box = (await panel.page.locator('#generation-rows').boundingBox())!;
    await panel.page.mouse.move(box.x + 5, box.y + 3);
    const tip = await panel.page.$eval('#generation-rows-tip', (element) => element.textContent ?? '');
    const row = steps[shownStep].attention[0].subarray(0, steps[shownStep].position);
    const strongest = [...row.keys()].sort((a, b) => row[b] - row[a])[0];
    assert.ok(tip.startsWith(`L0 H0: ${quoted(run.tokens[strongest])} (${strongest}) ${weightText(row[strongest])}`), tip);
    await panel.page.mouse.click(box.x + 5, box.y + 3);
    // The page's post reaches the test (the host) asynchronously.
    for (let waited = 0; !posted.some((m) => m.type === 'openHead') && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(posted.filter((m) => m.type === 'openHead').at(-1), { type: 'openHead', layer: 0, head: 0, step: shownStep });
    // Hovering a generated token: its step's candidates.
    await panel.page.hover('#generation-text span[data-step="1"]');
    const hovered = await panel.page.$eval('#generation-tip', (element) => ({ hidden: (element as HTMLElement).hidden, text: element.textContent ?? '' }));
    assert.equal(hovered.hidden, false);
    assert.ok(hovered.text.startsWith(`step 1: `) && hovered.text.includes(`✓${quoted(steps[1].token)}`), hovered.text);
  });

  it('a sampled run says how its tokens were drawn', async () => {
    const sampled = await generateModel(folderFiles(modelFixture('gpt2')), { text: modelReference('gpt2').text! }, { maxNewTokens: 3, sampling: { temperature: 1.5, topK: 3, seed: 7 } });
    panel = await openHeads(sampled);
    await panel.page.waitForSelector('#generation[data-finished]');
    assert.equal(await panel.page.$eval('#generation-decoding', (line) => line.textContent), 'sampled: temperature 1.5, top-k 3, no top-p (default), seed 7');
  });
});
