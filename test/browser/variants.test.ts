// The Variants and FlashAttention tabs of the built panel in Chromium, fed the examples of
// examples/08…11 as the extension host feeds them (parse → spec → engine → panelDataOf).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runAttention } from '../../src/core/engine';
import { parseDocument } from '../../src/core/parse';
import { buildSpec } from '../../src/core/spec';
import type { AttentionResult, AttentionSpec, Matrix } from '../../src/core/types';
import { adoptResultView, panelDataOf, resultViewOf } from '../../src/views/model';
import { answerVariants, onDemandViewsOf } from '../../src/views/variantsOnDemand';
import type { MatrixView, PanelData, VariantsAnswer, VariantsQuery, WebviewToHost } from '../../src/protocol';
import { num } from '../../webview/format';
import { renderReportHtml } from '../../src/report/standaloneHtml';
import { choose, heatmapZ, panelPages, ROOT, type PanelPage } from './harness';

/** Problem `index` of an example, run by the reference engine, as the panel receives it. */
function example(file: string, index = 0): { data: PanelData; result: AttentionResult } {
  const { problems } = parseDocument(readFileSync(path.join(ROOT, 'examples', file), 'utf8'));
  const results = problems.map((problem) => runAttention(buildSpec(problem).spec!));
  const data = panelDataOf({ uri: `file:///${file}`, fileName: file, problems, problemIndex: index, result: results[index] });
  return { data, result: results[index] };
}

/** A two-head problem of five tokens under the directive's `options`, run as the host runs it. */
function twoHeads(options: string): { data: PanelData; result: AttentionResult } {
  const note = [
    `attention: heads=2 ${options}`,
    'tokens = ["the", "cat", "sat", "on", "it"]',
    'X = [[1, 0, 2, -1], [0, 1, -1, 2], [1, 1, 0, 0], [2, -1, 1, 1], [0, 2, 1, -2]]',
    'W_Q = [[1, 0, 0.5, 0], [0, 1, 0, -1], [1, 0, 1, 0], [0, 1, 0, 1]]',
    'W_K = [[0, 1, 1, 0], [1, 0, 0, 1], [0.5, 0, 1, 0], [0, -1, 0, 1]]',
    'W_V = [[1, 2, 0, 1], [0, 1, 1, 0], [1, 0, 2, 1], [2, 1, 0, 1]]',
  ].join('\n');
  const { problems } = parseDocument(note);
  const result = runAttention(buildSpec(problems[0]).spec!);
  return { data: panelDataOf({ uri: 'file:///two-heads.md', fileName: 'two-heads.md', problems, problemIndex: 0, result }), result };
}

/** Tokens of the large problems: past the 64 whose views travel with a run, and past the 128 cells a
 * side that an on-demand view is pooled to; small enough to keep the browser suite quick. */
const LARGE_TOKENS = 256;

/** The first LARGE_TOKENS rows of the 512-token example's X under `directive`, as the host shows
 * it: with the worker's views adopted. */
function large(directive: string): { data: PanelData; spec: AttentionSpec; result: AttentionResult } {
  const file = 'large/512-tokens.py';
  const lines = readFileSync(path.join(ROOT, 'examples', file), 'utf8').replace('# attention: name="512 tokens"', `# attention: ${directive}`).split('\n');
  const firstRow = lines.findIndex((line) => line.startsWith('X = np.array([')) + 1;
  const text = [...lines.slice(0, firstRow + LARGE_TOKENS), ...lines.slice(firstRow + 512)].join('\n');
  const { problems } = parseDocument(text);
  const spec = buildSpec(problems[0]).spec!;
  assert.equal(spec.X?.rows, LARGE_TOKENS);
  const result = runAttention(spec);
  adoptResultView(result, { ...resultViewOf(result, spec.WO), ...onDemandViewsOf(spec, result) });
  return { data: panelDataOf({ uri: `file:///${file}`, fileName: file, problems, problemIndex: 0, result }), spec, result };
}

type VariantsRequest = Extract<WebviewToHost, { type: 'requestVariants' }>;

/**
 * Runs `action` and plays the host for the request it makes: the worker's answer to it (or a
 * refusal, when `refusal` is given), posted to the page. Returns the query and the answer.
 */
async function answering(panel: PanelPage, { spec, result }: { spec: AttentionSpec; result: AttentionResult }, action: () => Promise<unknown>, refusal?: string): Promise<{ query: VariantsQuery; answer?: VariantsAnswer }> {
  const requests = async () => (await panel.posted()).filter((m): m is VariantsRequest => m.type === 'requestVariants');
  const before = (await requests()).length;
  const done = action();
  await panel.page.waitForFunction((count) => (window as unknown as { posted: { type: string }[] }).posted.filter((m) => m.type === 'requestVariants').length > count, before);
  const request = (await requests()).at(-1)!;
  const answer = refusal ? undefined : answerVariants(spec, request.query, result.heads[request.query.head]?.output);
  await panel.page.evaluate((message) => window.postMessage(message, '*'), refusal ? { type: 'variants', requestId: request.requestId, error: refusal } : { type: 'variants', requestId: request.requestId, answer });
  await done;
  return { query: request.query, answer };
}

function viewRows(view: MatrixView): (number | null)[][] {
  return rowsOf({ rows: view.rows, cols: view.cols, data: view.data });
}

function rowsOf(m: Matrix): (number | null)[][] {
  return Array.from({ length: m.rows }, (_, r) => Array.from(m.data.subarray(r * m.cols, (r + 1) * m.cols), (v) => (Number.isFinite(v) ? v : null)));
}

async function openTab(panel: PanelPage, view: 'variants' | 'flash'): Promise<void> {
  await panel.rendered(() => panel.page.click(`vscode-button[data-view="${view}"]`));
}

async function tabs(panel: PanelPage): Promise<string[]> {
  return panel.page.$$eval('nav.tabs vscode-button', (buttons) => buttons.map((b) => (b as HTMLElement).dataset.view ?? ''));
}

describe('panel: variants and the FlashAttention walk, in Chromium', function () {
  const pages = panelPages();

  it('RoPE: names the pair convention and shows each head’s scores before and after turning', async () => {
    const { data, result } = example('08-rope-gqa.md');
    const panel = await pages.open();
    await panel.send({ type: 'data', data });
    assert.match(await panel.page.$eval('#card-h1-scores .formula', (p) => p.textContent ?? ''), /^S = RoPE\(Q\) · RoPE\(K\)ᵀ/);
    assert.ok((await tabs(panel)).includes('variants'));
    await openTab(panel, 'variants');
    const conventions = await panel.page.$eval('#variant-conventions', (list) => list.textContent ?? '');
    assert.match(conventions, /RoPE, base 10000.*rotate half \(Llama style\)/);
    const head = result.heads[0];
    assert.deepEqual(await heatmapZ(panel.page, 'card-v1-after-rope'), rowsOf(head.scores));
    const before = await heatmapZ(panel.page, 'card-v1-before-rope');
    // Q·Kᵀ of the unturned Q and K, computed here from the head's own Q and K.
    const d = head.Q.cols;
    before.forEach((row, i) => row.forEach((value, j) => {
      let dot = 0;
      for (let c = 0; c < d; c++) dot += head.Q.data[i * d + c] * head.K.data[j * d + c];
      assert.ok(Math.abs((value as number) - dot) <= 1e-12, `before RoPE ${i},${j}`);
    }));
    assert.notDeepEqual(before, rowsOf(head.scores), 'RoPE changed the scores');
  });

  it('softcap: scores before the cap beside the capped ones, none beyond C', async () => {
    const { data, result } = example('10-softcap.md');
    const panel = await pages.open();
    await panel.send({ type: 'data', data });
    assert.match(await panel.page.$eval('#card-h1-scaled .formula', (p) => p.textContent ?? ''), /, then \/ T = 0\.8, then C·tanh\(s \/ C\) with C = 2 \(softcap\)$/);
    await openTab(panel, 'variants');
    const after = (await heatmapZ(panel.page, 'card-v1-after-cap')).flat() as number[];
    const before = (await heatmapZ(panel.page, 'card-v1-before-cap')).flat() as number[];
    assert.deepEqual(after, Array.from(result.heads[0].scaled.data));
    before.forEach((s, p) => assert.ok(Math.abs(2 * Math.tanh(s / 2) - after[p]) <= 1e-12, `cell ${p}`));
    assert.ok(Math.max(...before.map(Math.abs)) > 2 && Math.max(...after.map(Math.abs)) < 2);
  });

  it('a sliding window with a sink: the mask’s structure and the share of the product it skips', async () => {
    const { data, result } = example('09-sliding-window.md');
    const panel = await pages.open();
    await panel.send({ type: 'data', data });
    await openTab(panel, 'variants');
    const mask = result.heads[0].mask!;
    assert.deepEqual(await heatmapZ(panel.page, 'card-v-mask'), rowsOf({ ...mask, data: mask.data.map((x) => (x === -Infinity ? 0 : 1)) }));
    const blocked = Array.from(mask.data).filter((x) => x === -Infinity).length;
    const savings = await panel.page.$eval('#mask-savings', (table) => table.textContent ?? '');
    assert.ok(savings.includes(`${Math.round((100 * blocked) / mask.data.length)}%`), savings);
    assert.match(savings, /FLOPs saved/);
  });

  it('ALiBi: each head’s bias −m·|i − j| with its slope', async () => {
    const { data } = example('11-alibi-documents-decode.md', 0);
    const panel = await pages.open();
    await panel.send({ type: 'data', data });
    assert.match(await panel.page.$eval('#card-h1-masked .formula', (p) => p.textContent ?? ''), /ALiBi's −m·\|i − j\|/);
    await openTab(panel, 'variants');
    const bias = await heatmapZ(panel.page, 'card-v1-alibi');
    bias.forEach((row, i) => row.forEach((value, j) => assert.equal(value, -1 * Math.abs(i - j))));
    assert.match(await panel.page.$eval('#card-v1-alibi h3', (h) => h.textContent ?? ''), /m = 1\b/);
  });

  it('decode: the one row beside the full matrix, framed where it sits, and equal to it', async () => {
    const { data, result } = example('11-alibi-documents-decode.md', 3);
    const panel = await pages.open();
    await panel.send({ type: 'data', data });
    await openTab(panel, 'variants');
    const full = await heatmapZ(panel.page, 'card-v-decode-full');
    const step = await heatmapZ(panel.page, 'card-v-decode-step');
    assert.equal(step.length, 1);
    assert.deepEqual(step[0], full[full.length - 1]);
    assert.deepEqual(full, rowsOf(result.decode!.fullWeights[0]));
    const ticks = (id: string, axis: 'xaxis' | 'yaxis') => panel.page.$eval(`#${id} .plot`, (plot, a) => (plot as unknown as { layout: Record<string, { ticktext: string[] }> }).layout[a].ticktext, axis);
    assert.deepEqual(await ticks('card-v-decode-step', 'yaxis'), ['its']);
    assert.deepEqual(await ticks('card-v-decode-full', 'yaxis'), ['the', 'cat', 'sat', 'on', 'its']);
    assert.deepEqual(await ticks('card-v-decode-step', 'xaxis'), ['the', 'cat', 'sat', 'on', 'its']);
    const frame = await panel.page.$eval('#card-v-decode-full .plot', (plot) => (plot as unknown as { layout: { shapes: { y0: number; y1: number }[] } }).layout.shapes[0]);
    assert.deepEqual([frame.y0, frame.y1], [full.length - 1.5, full.length - 0.5]);
  });

  it('the FlashAttention walk: tile by tile, m and l per row, ending in the output of head 1', async () => {
    const { data, result } = example('09-sliding-window.md');
    const panel = await pages.open();
    await panel.send({ type: 'data', data });
    await openTab(panel, 'flash');
    const walk = data.result!.flash![0][0];
    assert.equal(walk.tileRows, 2);
    // Step 1: the first tile is the current one (2), nothing done yet.
    const grid = await heatmapZ(panel.page, 'flash-walk');
    assert.deepEqual(grid.slice(0, 2).map((row) => row.slice(0, 3)), [[2, 2, 0], [2, 2, 0]]);
    assert.match(await panel.page.$eval('#flash-step', (p) => p.textContent ?? ''), /^Step 1 of 16: queries 1–2 take keys 1–2\. Blue: this tile/);
    // To the last step: its output so far is the engine's output for the last two queries.
    await panel.page.$eval('#flash-slider', (slider, last) => {
      (slider as HTMLInputElement).value = String(last);
      slider.dispatchEvent(new Event('input'));
    }, walk.steps.length - 1);
    await panel.page.waitForFunction(() => /^Step 16 of 16/.test(document.getElementById('flash-step')?.textContent ?? ''));
    const cells = await panel.page.$$eval('#flash-table tbody tr td:last-child', (tds) => tds.map((td) => td.textContent ?? ''));
    const output = result.heads[0].output;
    assert.deepEqual(cells, [6, 7].map((i) => `[${Array.from(output.data.slice(i * output.cols, (i + 1) * output.cols), (x) => num(x)).join(', ')}]`));
    assert.match(await panel.page.$eval('#flash-summary', (p) => p.textContent ?? ''), /ends in the engine’s output \(largest difference (0|[0-9.]+e-1[0-9])\)/);
  });

  it('the walk of the chosen head, with any score function: head 2 of a gaussian-score problem ends in head 2’s output', async () => {
    const { data, result } = twoHeads('causal score=gaussian');
    const panel = await pages.open();
    await panel.send({ type: 'data', data });
    assert.ok((await tabs(panel)).includes('flash'), 'a gaussian-score problem has the FlashAttention tab');
    await openTab(panel, 'flash');
    await choose(panel, 'Head', 'Head 2');
    assert.match(await panel.page.$eval('#flash-walk h3', (h) => h.textContent ?? ''), /\(head 2\)$/);
    const last = await panel.page.$eval('#flash-slider', (slider) => Number((slider as HTMLInputElement).max));
    await panel.page.$eval('#flash-slider', (slider, value) => {
      (slider as HTMLInputElement).value = String(value);
      slider.dispatchEvent(new Event('input'));
    }, last);
    await panel.page.waitForFunction((steps) => new RegExp(`^Step ${steps} of ${steps}`).test(document.getElementById('flash-step')?.textContent ?? ''), last + 1);
    const cells = await panel.page.$$eval('#flash-table tbody tr td:last-child', (tds) => tds.map((td) => td.textContent ?? ''));
    const output = result.heads[1].output;
    const rows = cells.length;
    assert.deepEqual(cells, Array.from({ length: rows }, (_, r) => output.rows - rows + r).map((i) => `[${Array.from(output.data.slice(i * output.cols, (i + 1) * output.cols), (x) => num(x)).join(', ')}]`));
    assert.notDeepEqual(Array.from(output.data), Array.from(result.heads[0].output.data), 'head 2 is not head 1');
  });

  it('decode with two heads: each head’s step beside its own full run', async () => {
    const { data, result } = twoHeads('causal decode');
    const panel = await pages.open();
    await panel.send({ type: 'data', data });
    await openTab(panel, 'variants');
    await choose(panel, 'Head', 'Head 2');
    assert.match(await panel.page.$eval('#card-v-decode-full h3', (h) => h.textContent ?? ''), /\(head 2\)$/);
    const full = await heatmapZ(panel.page, 'card-v-decode-full');
    assert.deepEqual(full, rowsOf(result.decode!.fullWeights[1]));
    assert.notDeepEqual(full, rowsOf(result.decode!.fullWeights[0]), 'head 2’s weights are not head 1’s');
    assert.deepEqual(await heatmapZ(panel.page, 'card-v-decode-step'), rowsOf(result.heads[1].weights));
  });

  it('in a standalone report too: a tile whose keys are all in another document leaves m at −∞', async () => {
    const file = '11-alibi-documents-decode.md';
    const { problems } = parseDocument(readFileSync(path.join(ROOT, 'examples', file), 'utf8'));
    const documents = problems[1];
    const html = renderReportHtml([{ problem: documents, result: runAttention(buildSpec(documents).spec!) }], {
      script: readFileSync(path.join(ROOT, 'dist', 'webview.js'), 'utf8'),
      css: readFileSync(path.join(ROOT, 'media', 'panel.css'), 'utf8'),
    });
    const panel = await pages.open({ html });
    await panel.page.waitForFunction(() => Number(document.body.dataset.rendered ?? 0) > 0);
    await openTab(panel, 'flash');
    // Tiles of 2×2 over 6 tokens: step 7 is queries 5–6 (documents B and C) against keys 1–2 (A).
    await panel.page.$eval('#flash-slider', (slider) => {
      (slider as HTMLInputElement).value = '6';
      slider.dispatchEvent(new Event('input'));
    });
    await panel.page.waitForFunction(() => /^Step 7 of 9: queries 5–6 take keys 1–2/.test(document.getElementById('flash-step')?.textContent ?? ''));
    const maxima = await panel.page.$$eval('#flash-table tbody tr td:first-of-type', (tds) => tds.map((td) => td.textContent));
    assert.deepEqual(maxima, ['−∞', '−∞']);
  });

  it(`${LARGE_TOKENS} tokens: the Variants tab asks for the head shown, draws pooled overviews saying so, and follows the head picker`, async () => {
    const problem = large('heads=2 rope softcap=3 alibi causal window=64');
    assert.equal(problem.data.result?.variants, undefined, 'nothing of the tab came with the run');
    const panel = await pages.open();
    await panel.send({ type: 'data', data: problem.data });
    assert.ok((await tabs(panel)).includes('variants') && (await tabs(panel)).includes('flash'), (await tabs(panel)).join());
    assert.deepEqual((await panel.posted()).filter((m) => m.type === 'requestVariants'), [], 'nothing asked before the tab is opened');
    const first = await answering(panel, problem, () => openTab(panel, 'variants'));
    assert.deepEqual(first.query, { kind: 'variants', head: 0 });
    const answer = first.answer as Extract<VariantsAnswer, { kind: 'variants' }>;
    assert.match(await panel.page.$eval('#variant-conventions', (list) => list.textContent ?? ''), /RoPE, base 10000.*softcap 3.*ALiBi.*sliding window 64/);
    const before = answer.variants.heads[0].unrotatedScores!;
    assert.deepEqual([before.rows, before.rowBlock], [128, LARGE_TOKENS / 128]);
    assert.deepEqual(await heatmapZ(panel.page, 'card-v1-before-rope'), viewRows(before));
    assert.deepEqual(await heatmapZ(panel.page, 'card-v1-after-rope'), viewRows(answer.steps.scores!));
    assert.deepEqual(await heatmapZ(panel.page, 'card-v1-before-cap'), viewRows(answer.variants.heads[0].uncapped!));
    assert.match(await panel.page.$eval('#card-v1-before-rope', (card) => card.textContent ?? ''), new RegExp(`Overview of ${LARGE_TOKENS}×${LARGE_TOKENS}: each cell is the maximum of a 2×2 block \\(max pooling\\)`));
    assert.match(await panel.page.$eval('#mask-savings', (table) => table.textContent ?? ''), /FLOPs saved/);
    const second = await answering(panel, problem, () => choose(panel, 'Head', 'Head 2'));
    assert.deepEqual(second.query, { kind: 'variants', head: 1 });
    const head2 = second.answer as Extract<VariantsAnswer, { kind: 'variants' }>;
    assert.match(await panel.page.$eval('#card-v2-alibi h3', (h) => h.textContent ?? ''), /\(head 2\)$/);
    assert.deepEqual(await heatmapZ(panel.page, 'card-v2-alibi'), viewRows(head2.variants.heads[0].alibi!.bias));
    assert.notDeepEqual(viewRows(head2.variants.heads[0].alibi!.bias), viewRows(answer.variants.heads[0].alibi!.bias), 'head 2’s slope is not head 1’s');
    // The host refuses what the problem does not have: the page says why instead of a view.
    const refused = await answering(panel, problem, () => panel.send({ type: 'data', data: problem.data }), 'head 2 does not exist: this problem has 1 head');
    assert.deepEqual(refused.query, { kind: 'variants', head: 1 }, 'a new result is asked again');
    assert.equal(await panel.page.$eval('#on-demand-variants', (block) => block.textContent), 'No view: head 2 does not exist: this problem has 1 head');
    assert.deepEqual(panel.errors, []);
  });

  it(`${LARGE_TOKENS} tokens: the FlashAttention walk of the query tile picked, for the head picked, in a bounded number of steps`, async () => {
    const problem = large('heads=2 causal alibi score=gaussian');
    const panel = await pages.open();
    await panel.send({ type: 'data', data: problem.data });
    const { tileSides } = problem.data.result!.onDemand!;
    const first = await answering(panel, problem, () => openTab(panel, 'flash'));
    assert.deepEqual(first.query, { kind: 'flash', head: 0, tileSide: tileSides[0], queryTile: 0 });
    const side = tileSides[0];
    const steps = LARGE_TOKENS / side;
    assert.match(await panel.page.$eval('#flash-step', (p) => p.textContent ?? ''), new RegExp(`^Step 1 of ${steps}: queries 1–${side} take keys 1–${side}\\.`));
    const grid = await heatmapZ(panel.page, 'flash-walk');
    assert.deepEqual([grid.length, grid[0].length], [steps, steps], 'a grid cell per tile');
    // Another query tile, then head 2: each a new walk from the worker.
    const tile = 37;
    const picked = await answering(panel, problem, async () => {
      await panel.page.click('vscode-dropdown[data-control="Query tile"]');
      await panel.page.locator('vscode-dropdown[data-control="Query tile"] vscode-option', { hasText: `${tile + 1}: queries ${tile * side + 1}–` }).first().click();
    });
    assert.deepEqual(picked.query, { kind: 'flash', head: 0, tileSide: side, queryTile: tile });
    await panel.page.waitForFunction((text) => document.getElementById('flash-step')?.textContent?.startsWith(text), `Step 1 of ${steps}: queries ${tile * side + 1}–${(tile + 1) * side} take keys 1–${side}`);
    const second = await answering(panel, problem, () => choose(panel, 'Head', 'Head 2'));
    assert.deepEqual(second.query, { kind: 'flash', head: 1, tileSide: side, queryTile: tile });
    await panel.page.$eval('#flash-slider', (slider, last) => {
      (slider as HTMLInputElement).value = String(last);
      slider.dispatchEvent(new Event('input'));
    }, steps - 1);
    await panel.page.waitForFunction((text) => document.getElementById('flash-step')?.textContent?.startsWith(text), `Step ${steps} of ${steps}`);
    const cells = await panel.page.$$eval('#flash-table tbody tr td:last-child', (tds) => tds.map((td) => td.textContent ?? ''));
    const output = problem.result.heads[1].output;
    assert.deepEqual(cells, Array.from({ length: side }, (_, r) => tile * side + r).map((i) => `[${Array.from(output.data.slice(i * output.cols, (i + 1) * output.cols), (x) => num(x)).join(', ')}]`));
    assert.deepEqual(panel.errors, []);
  });

  it('plain attention has no Variants tab, but the FlashAttention walk', async () => {
    const { data } = example('02-causal-mask.md');
    const panel = await pages.open();
    await panel.send({ type: 'data', data });
    const shown = await tabs(panel);
    assert.ok(!shown.includes('variants') && shown.includes('flash'), shown.join());
  });
});
