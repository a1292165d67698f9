// The heads page in Chromium (webview/heads/): the model view's grid painted on one canvas from
// the worker's pooled maps, its hover text, a click and the keyboard asking for a head and showing
// its heatmap, the layer filter; the head view's lines, threshold and hover; a 1024-token 12 × 12
// grid. The test answers the page's queries with the worker's code (headsPage.ts).
import assert from 'node:assert/strict';
import path from 'node:path';
import { loadSavedAttentions } from '../../src/core/heads/load';
import type { AttentionStack } from '../../src/core/heads/stack';
import { stackOfResult } from '../../src/core/heads/stackOfResult';
import { DEFAULT_LIMITS } from '../../src/core/parse/tensors';
import { runModel } from '../../src/core/model/run';
import { folderFiles } from '../../src/node/modelFiles';
import { quoted, weightText } from '../../webview/heads/page';
import { modelFixture, modelReference } from '../unit/model/fixtures';
import { ROOT } from './harness';
import { type HeadsPage, openHeads } from './headsPage';

const saved = loadSavedAttentions(path.join(ROOT, 'test', 'fixtures', 'heads', 'saved', 'sidecar', 'layers.npz'), DEFAULT_LIMITS).stack;
const SIDE = 48;
const LABEL = 28;
const GAP = 6;

/** Hovers pixel (x, y) inside thumbnail (layer row l, head column h) and reads the tooltip. */
async function hoverThumbnail(panel: HeadsPage, l: number, h: number, x: number, y: number): Promise<string> {
  const box = (await panel.page.locator('#grid-canvas').boundingBox())!;
  await panel.page.mouse.move(0, 0);
  await panel.page.mouse.move(box.x + LABEL + h * (SIDE + GAP) + x, box.y + LABEL + l * (SIDE + GAP) + y);
  await panel.page.waitForFunction(() => !(document.getElementById('grid-tooltip') as HTMLElement).hidden);
  return panel.page.locator('#grid-tooltip').innerText();
}

const queries = async (panel: HeadsPage, kind: string) => (await panel.sent()).flatMap((m) => (m.type === 'query' && m.query.kind === kind ? [m.query] : []));

/** Top-k lines of `stack` above `threshold`, counted as the page should draw them. */
function expectedLines(stack: AttentionStack, layer: number, heads: number[], k: number, threshold: number, query?: number): number {
  let count = 0;
  for (const head of heads) {
    const weights = stack.weights(layer, head);
    for (let q = 0; q < stack.queryCount; q++) {
      if (query !== undefined && q !== query) continue;
      const row = Array.from(weights.subarray(q * stack.keyCount, (q + 1) * stack.keyCount)).map(Math.fround).sort((a, b) => b - a);
      count += row.slice(0, k).filter((w) => w >= threshold && w > 0).length;
    }
  }
  return count;
}

describe('heads page', function () {
  let panel: HeadsPage | undefined;
  afterEach(async () => {
    if (!panel) return;
    assert.deepEqual(panel.errors, [], 'the page logged errors');
    assert.deepEqual(await panel.violations(), [], 'CSP violations');
    await panel.close();
    panel = undefined;
  });

  it('paints every layer × head and tells a cell\'s layer, head, tokens and weight on hover', async () => {
    panel = await openHeads(saved);
    assert.equal(await panel.page.getAttribute('#grid-canvas', 'data-painted'), '6');
    assert.deepEqual(await queries(panel, 'grid'), [{ kind: 'grid', size: 48, mode: 'max', layers: [0, 1], heads: [0, 1, 2] }]);
    assert.match(await panel.page.locator('#grid-legend').innerText(), /each cell one weight; each thumbnail coloured from 0 to its own largest cell/);
    // 5 tokens over 48 px: query 3 is rows 28.8–38.4, key 1 columns 9.6–19.2.
    const text = await hoverThumbnail(panel, 1, 2, 14, 33);
    assert.equal(text, `Layer 1 · head 2 · “on” (3) → “cat” (1): ${saved.weights(1, 2)[3 * 5 + 1].toFixed(3)}`);
  });

  it('says what is being opened while the host waits for the stack (a model running, a file read), then paints it', async () => {
    let said = '';
    panel = await openHeads(saved, {
      opening: {
        text: 'gpt2-small (running…)',
        meanwhile: async (page) => {
          said = await page.locator('#heads-status').innerText();
          assert.equal(await page.locator('#grid-canvas').count(), 0, 'no grid before the stack');
        },
      },
    });
    assert.equal(said, 'gpt2-small (running…)');
    assert.equal(await panel.page.locator('#heads-status').innerText(), '', 'the status line cleared by the page itself');
  });

  it('paints at the screen\'s resolution on HiDPI (device pixel ratio 2) and still hits the right head', async () => {
    panel = await openHeads(saved, { deviceScaleFactor: 2 });
    const size = await panel.page.$eval('#grid-canvas', (canvas) => {
      const box = canvas.getBoundingClientRect();
      return { backing: [(canvas as HTMLCanvasElement).width, (canvas as HTMLCanvasElement).height], css: [box.width, box.height] };
    });
    // 3 heads and 2 layers of 48 px thumbnails, 6 px apart, after 28 px of labels.
    assert.deepEqual(size.css, [LABEL + 3 * (SIDE + GAP), LABEL + 2 * (SIDE + GAP)]);
    assert.deepEqual(size.backing, size.css.map((side) => 2 * side));
    // The same point as at ratio 1: layer 1, head 2, query 3 → key 1.
    const text = await hoverThumbnail(panel, 1, 2, 14, 33);
    assert.equal(text, `Layer 1 · head 2 · “on” (3) → “cat” (1): ${saved.weights(1, 2)[3 * 5 + 1].toFixed(3)}`);
    // The last head of the last layer, near its bottom-right corner: query 4 → key 4.
    assert.match(await hoverThumbnail(panel, 1, 2, SIDE - 2, SIDE - 2), /^Layer 1 · head 2 · “it” \(4\) → “it” \(4\): /);
    await hoverThumbnail(panel, 0, 1, 5, 5);
    await panel.page.mouse.down();
    await panel.page.mouse.up();
    await panel.page.waitForSelector('#heads-head[data-layer="0"][data-head="1"] #head-canvas');
    // The opened head too: twice the pixels of its CSS size, and a hover names the cell under it.
    const head = await panel.page.$eval('#head-canvas', (canvas) => {
      const box = canvas.getBoundingClientRect();
      return { backing: [(canvas as HTMLCanvasElement).width, (canvas as HTMLCanvasElement).height], css: [box.width, box.height] };
    });
    assert.deepEqual(head.backing, head.css.map((side) => 2 * side));
    const box = (await panel.page.locator('#head-canvas').boundingBox())!;
    await panel.page.mouse.move(box.x + (box.width * 1.5) / 5, box.y + (box.height * 3.5) / 5);
    assert.equal(await panel.page.locator('#head-hover').innerText(), `query “on” (3) → key “cat” (1): ${saved.weights(0, 1)[3 * 5 + 1].toFixed(3)}`);
  });

  it('asks for the head scores only when their tab is first shown, so an opened head never waits behind them', async () => {
    panel = await openHeads(saved);
    await hoverThumbnail(panel, 0, 1, 5, 5);
    await panel.page.mouse.down();
    await panel.page.mouse.up();
    await panel.page.waitForSelector('#heads-head[data-layer="0"][data-head="1"] #head-canvas');
    assert.deepEqual(await queries(panel, 'scores'), []);
    await panel.page.click('#tab-heads-scores');
    await panel.page.waitForSelector('#scores-table tr[data-layer]');
    await panel.page.click('#tab-heads-model');
    await panel.page.click('#tab-heads-scores');
    assert.deepEqual(await queries(panel, 'scores'), [{ kind: 'scores' }]);
  });

  it('opens a head on click: asks for it in full and shows its heatmap with hover', async () => {
    panel = await openHeads(saved);
    await hoverThumbnail(panel, 0, 1, 5, 5);
    await panel.page.mouse.down();
    await panel.page.mouse.up();
    await panel.page.waitForSelector('#heads-head[data-layer="0"][data-head="1"] #head-canvas');
    assert.deepEqual(await queries(panel, 'head'), [{ kind: 'head', layer: 0, head: 1 }]);
    const box = (await panel.page.locator('#head-canvas').boundingBox())!;
    await panel.page.mouse.move(box.x + box.width * 0.1, box.y + box.height * 0.9); // query 4, key 0
    assert.equal(await panel.page.locator('#head-hover').innerText(), `query “it” (4) → key “The” (0): ${saved.weights(0, 1)[20].toFixed(3)}`);
  });

  it('moves the focus with the arrows and opens the focused head with Enter', async () => {
    panel = await openHeads(saved);
    await panel.page.focus('#grid-canvas');
    for (const key of ['ArrowRight', 'ArrowRight', 'ArrowRight', 'ArrowDown', 'ArrowLeft']) await panel.page.keyboard.press(key);
    assert.equal(await panel.page.getAttribute('#grid-canvas', 'aria-label'), 'Layer 1, head 1: Enter opens');
    await panel.page.keyboard.press('Enter');
    await panel.page.waitForSelector('#heads-head[data-layer="1"][data-head="1"]');
  });

  it('filters layers and heads, and pools by mean on request', async () => {
    panel = await openHeads(saved);
    await panel.page.fill('#grid-layers', '1');
    await panel.page.fill('#grid-heads', '0, 2');
    await panel.page.selectOption('#grid-mode', 'mean');
    await panel.page.waitForFunction(() => document.getElementById('grid-canvas')!.dataset.painted === '2');
    assert.deepEqual((await queries(panel, 'grid')).pop(), { kind: 'grid', size: 48, mode: 'mean', layers: [1], heads: [0, 2] });
    assert.match(await hoverThumbnail(panel, 0, 1, 1, 1), /^Layer 1 · head 2 · /);
    await panel.page.fill('#grid-layers', '7');
    await panel.page.locator('#grid-layers').dispatchEvent('change');
    assert.match(await panel.page.locator('#heads-status').innerText(), /Layers are 0–1, heads 0–2/);
  });

  it('draws the head view\'s top-k lines, hides those under the threshold, isolates a hovered token', async () => {
    panel = await openHeads(saved);
    await panel.page.click('#tab-heads-lines');
    await panel.page.check('#lines-heads input[data-head="2"]');
    await panel.page.waitForFunction(() => (window as unknown as { posted: { query?: { kind: string; heads?: number[] } }[] }).posted.some((m) => m.query?.kind === 'lines' && m.query.heads?.length === 2));
    const lines = () => panel!.page.getAttribute('#lines-canvas', 'data-lines').then(Number);
    await panel.page.waitForFunction((n) => document.getElementById('lines-canvas')!.dataset.lines === String(n), expectedLines(saved, 0, [0, 2], 5, 0.05));
    await panel.page.locator('#lines-threshold').fill('0.3');
    assert.equal(await lines(), expectedLines(saved, 0, [0, 2], 5, 0.3));
    // Hover query 4 ("it") in the left column.
    const box = (await panel.page.locator('#lines-canvas').boundingBox())!;
    await panel.page.mouse.move(box.x + 100, box.y + 4 * 16 + 8);
    assert.equal(await lines(), expectedLines(saved, 0, [0, 2], 5, 0.3, 4));
    assert.match(await panel.page.locator('#lines-hover').innerText(), /^Query “it” \(4\) → head 0: /);
    await panel.page.mouse.move(0, 0);
    assert.equal(await lines(), expectedLines(saved, 0, [0, 2], 5, 0.3));
  });

  it('sends a problem\'s head to the host to open (the step-by-step panel)', async () => {
    const heads = [0, 1].map(() => ({ weights: { rows: 2, cols: 2, data: Float64Array.from([1, 0, 0.5, 0.5]) } }));
    panel = await openHeads(stackOfResult({ heads }, { source: { kind: 'problem', document: 'file:///a.md', problem: 0 }, tokens: ['a', 'b'] }));
    await panel.page.focus('#grid-canvas');
    await panel.page.keyboard.press('ArrowRight');
    await panel.page.keyboard.press('Enter');
    await panel.page.waitForFunction(() => (window as unknown as { posted: { type: string }[] }).posted.some((m) => m.type === 'openHead'));
    assert.deepEqual((await panel.sent()).filter((m) => m.type === 'openHead'), [{ type: 'openHead', layer: 0, head: 1 }]);
  });

  it('opens a model run\'s head here at once from its weights, and only then sends it to the host to open step by step', async function () {
    this.timeout(180_000);
    const run = await runModel(folderFiles(modelFixture('gpt2')), { text: modelReference('gpt2').text! });
    panel = await openHeads(run);
    await hoverThumbnail(panel, 1, 0, 5, 5);
    await panel.page.mouse.down();
    await panel.page.mouse.up();
    await panel.page.waitForSelector('#heads-head[data-layer="1"][data-head="0"] #head-canvas');
    await panel.page.waitForFunction(() => (window as unknown as { posted: { type: string }[] }).posted.some((m) => m.type === 'openHead'));
    const sent = await panel.sent();
    const asked = sent.findIndex((m) => m.type === 'query' && m.query.kind === 'head');
    assert.deepEqual(sent[asked], { type: 'query', requestId: (sent[asked] as { requestId: number }).requestId, query: { kind: 'head', layer: 1, head: 0 } });
    assert.deepEqual(sent.filter((m) => m.type === 'openHead'), [{ type: 'openHead', layer: 1, head: 0 }]);
    assert.ok(sent.findIndex((m) => m.type === 'openHead') > asked, 'the step-by-step panel is asked for after the head\'s own heatmap');
    // The last query's row, key 0: the run's own weight there (the weights a drill-down equals).
    const n = run.queryCount;
    const box = (await panel.page.locator('#head-canvas').boundingBox())!;
    await panel.page.mouse.move(box.x + box.width / (2 * n), box.y + box.height * (1 - 1 / (2 * n)));
    assert.equal(await panel.page.locator('#head-hover').innerText(), `query ${quoted(run.tokens[n - 1])} (${n - 1}) → key ${quoted(run.tokens[0])} (0): ${weightText(run.weights(1, 0)[(n - 1) * n])}`);
  });

  it('paints a 1024-token, 12 × 12 grid from pooled maps and answers a hover', async function () {
    // Pooling 151 M weights in the test's node, on a machine shared with other runs.
    this.timeout(240_000);
    const n = 1024;
    // Each row puts half its weight on the diagonal, half on token 0: known pooled maxima.
    const row = (q: number) => {
      const weights = new Float32Array(n);
      weights[0] += 0.5;
      weights[q] += 0.5;
      return weights;
    };
    const map = new Float32Array(n * n);
    for (let q = 0; q < n; q++) map.set(row(q), q * n);
    const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
    const big: AttentionStack = { source: { kind: 'saved', file: 'big.pt' }, tokens, keyTokens: tokens, layerCount: 12, headCount: 12, queryCount: n, keyCount: n, weights: () => map };
    panel = await openHeads(big, { viewport: { width: 1100, height: 1600 }, paintTimeout: 200_000 });
    assert.equal(await panel.page.getAttribute('#grid-canvas', 'data-painted'), '144');
    assert.match(await panel.page.locator('#grid-legend').innerText(), /each cell the max of 22×22 weights/);
    // A cell is about one pixel here: read which blocks the hover landed on, then check the max
    // the page states for them (0.5 on the diagonal and in key block 0, else 0).
    const text = await hoverThumbnail(panel, 11, 11, SIDE - 10, SIDE - 4);
    const match = /^Layer 11 · head 11 · (\d+)–(\d+) \(“t\d+”…“t\d+”\) → (\d+)–(\d+) \(“t\d+”…“t\d+”\): max (\d\.\d{3})$/.exec(text);
    assert.ok(match, text);
    const [queryStart, queryEnd, keyStart, keyEnd] = match.slice(1, 5).map(Number);
    assert.deepEqual([queryEnd - queryStart, keyEnd - keyStart], [queryStart >= 1012 ? 1023 - queryStart : 21, keyStart >= 1012 ? 1023 - keyStart : 21]);
    assert.ok(queryStart > keyStart, 'below the diagonal');
    assert.equal(match[5], keyStart === 0 || queryStart === keyStart ? '0.500' : '0.000');
  });

  it('stays interactive at 4096 tokens on one layer: the grid, a hover, a head opened, its top-k lines', async function () {
    this.timeout(240_000);
    const n = 4096;
    // Every head the same map (67 MB, not 12 × 67): each row half on token 0, half on its diagonal.
    const map = new Float32Array(n * n);
    for (let q = 0; q < n; q++) {
      map[q * n] += 0.5;
      map[q * n + q] += 0.5;
    }
    const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
    const long: AttentionStack = { source: { kind: 'saved', file: 'long.pt' }, tokens, keyTokens: tokens, layerCount: 1, headCount: 12, queryCount: n, keyCount: n, weights: () => map };
    panel = await openHeads(long, { paintTimeout: 200_000 });
    assert.equal(await panel.page.getAttribute('#grid-canvas', 'data-painted'), '12');
    assert.match(await panel.page.locator('#grid-legend').innerText(), /^1 layer × 12 heads, 4096 queries × 4096 keys; each cell the max of 86×86 weights/);
    const text = await hoverThumbnail(panel, 0, 3, 20, 30);
    const match = /^Layer 0 · head 3 · (\d+)–(\d+) \(“t\d+”…“t\d+”\) → (\d+)–(\d+) \(“t\d+”…“t\d+”\): max (\d\.\d{3})$/.exec(text);
    assert.ok(match, text);
    const [queryStart, queryEnd, keyStart] = match.slice(1, 4).map(Number);
    assert.equal(queryEnd - queryStart, 85);
    assert.equal(match[5], queryStart === 0 && keyStart === 0 ? '1.000' : keyStart === 0 || queryStart === keyStart ? '0.500' : '0.000');
    // A head opened: its heatmap at most 512 cells a side, and its exact weights on hover.
    await panel.page.mouse.down();
    await panel.page.mouse.up();
    await panel.page.waitForSelector('#heads-head[data-layer="0"][data-head="3"] #head-canvas', { timeout: 60_000 });
    const box = (await panel.page.locator('#head-canvas').boundingBox())!;
    await panel.page.mouse.move(box.x + box.width * 0.75, box.y + box.height * 0.75);
    assert.match(await panel.page.locator('#head-hover').innerText(), /^quer(y|ies) .* → key/);
    // The head view: top-k lines of head 0, two per row above the threshold (one in row 0).
    await panel.page.click('#tab-heads-lines');
    await panel.page.waitForFunction((lines) => document.getElementById('lines-canvas')?.dataset.lines === String(lines), 1 + 2 * (n - 1), { timeout: 120_000 });
  });
});
