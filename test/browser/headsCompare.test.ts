// The heads page's "Compare" tab (webview/heads/compare.ts) in Chromium: on saved attentions it asks
// the host for another file; once the host pairs B with A (the test does, as src/features/heads.ts
// does), the page draws the divergence map, ranks the heads as the core does, and a click on a head
// draws B − A on the diverging scale with A's, B's and the difference's values on hover (numpy's,
// scripts/gen_head_references.py). Runs of different shapes give one message. Encoder–decoder runs
// compare kind by kind: a kind whose lengths differ says why in one line, another kind's page compares.
import assert from 'node:assert/strict';
import { pooledDifference, ranked } from '../../src/core/heads/compare';
import { divergences } from '../../src/core/heads/divergence';
import type { AttentionStack, StackSource } from '../../src/core/heads/stack';
import { weightText } from '../../webview/heads/page';
import { referenceCase, stackOf } from '../unit/heads/references';
import { runModel, type ModelRun } from '../../src/core/model/run';
import { folderFiles } from '../../src/node/modelFiles';
import { seq2seqFixture, seq2seqReference } from '../unit/seq2seq/fixtures';
import { type HeadsPage, openHeads } from './headsPage';

const planted = referenceCase('planted');
const a = stackOf(planted.weights, 'float64', planted.ids);
const b = stackOf(planted.other!, 'float64', planted.ids);
const runs = { a: { title: 'a.npz', detail: '/data/a.npz' }, b: { title: 'b.npz', detail: '/data/b.npz' } };
const CELL = 22;
/** The ends of the scales: viridis's top (the largest divergence), and the difference's red and blue. */
const VIRIDIS_TOP = [253, 231, 37];
const RED = [178, 24, 43];
const BLUE = [33, 102, 172];

async function pixel(panel: HeadsPage, selector: string, x: number, y: number): Promise<number[]> {
  return panel.page.$eval(selector, (canvas, [x, y]) => [...(canvas as HTMLCanvasElement).getContext('2d')!.getImageData(x, y, 1, 1).data.slice(0, 3)], [x, y]);
}

/** The numbers of the hover text "…: A 0.123, B 0.456, B − A +0.333". */
function hoverValues(text: string): number[] {
  const match = /A (\S+), B (\S+), B − A ([+−]?\S+)$/.exec(text);
  assert.ok(match, text);
  return match.slice(1).map((value) => Number(value.replace('−', '-')));
}

describe('heads page: compare two runs', function () {
  it('asks for another file, draws the divergence map, ranks the heads as the core does, and exports the map', async () => {
    const panel = await openHeads(a, { compared: { stack: b, ...runs } });
    try {
      await panel.page.click('#tab-heads-compare');
      assert.deepEqual(await panel.page.$$eval('#heads-compare button[id^="compare-"]', (nodes) => nodes.map((node) => node.textContent)), ['Compare with another file…']);
      await panel.page.click('#compare-file');
      await panel.page.waitForSelector('#compare-ranking li');
      assert.deepEqual((await panel.sent()).filter((m) => m.type === 'compare'), [{ type: 'compare', with: 'file' }]);
      assert.equal(await panel.page.textContent('#compare-run-a'), 'A: a.npz');
      assert.equal(await panel.page.textContent('#compare-run-b'), 'B: b.npz');
      assert.match((await panel.page.textContent('#compare-runs')) ?? '', /\/data\/a\.npz.*\/data\/b\.npz/);

      const expected = ranked(await divergences(a, b));
      const shown = await panel.page.$$eval('#compare-ranking li', (items) => items.map((item) => [Number(item.getAttribute('data-layer')), Number(item.getAttribute('data-head')), item.textContent]));
      assert.deepEqual(shown.map(([layer, head]) => [layer, head]), expected.map(({ layer, head }) => [layer, head]));
      // Values as numpy computes them (the core's equal them to 1e-9 in the unit tests).
      const top = expected[0];
      assert.equal(shown[0][2], `L${top.layer} H${top.head}: ${planted.expected.divergence![top.layer][top.head].toFixed(4)} nats`);

      // The map: layers down, heads across; the most divergent head at the ramp's top.
      assert.deepEqual(await panel.page.$eval('#compare-map', (c) => [(c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height]), [3 * CELL, 2 * CELL]);
      assert.deepEqual(await pixel(panel, '#compare-map', top.head * CELL + CELL / 2, top.layer * CELL + CELL / 2), VIRIDIS_TOP);

      await panel.page.click('[data-export="compare-csv"]');
      await panel.page.click('[data-export="compare-json"]');
      await panel.page.click('[data-export="compare-png"]');
      await panel.page.click('[data-export="compare-svg"]');
      const exports = (await panel.sent()).flatMap((m) => (m.type === 'export' ? [m] : []));
      assert.deepEqual(exports.map((m) => [m.format, m.fileName]), [['csv', 'test.pt-divergence.csv'], ['json', 'test.pt-divergence.json'], ['png', 'test.pt-divergence.png'], ['svg', 'test.pt-divergence.svg']]);
      assert.equal(exports[0].text!.split('\n')[0], 'layer,head,divergence');
      assert.deepEqual(JSON.parse(exports[1].text!), { divergence: await divergences(a, b) });
      assert.ok(exports[2].base64!.length > 100);
      // The SVG holds the map as drawn (the same PNG) under its title, at the map's size.
      assert.match(exports[3].text!, new RegExp(`^<svg [^>]*width="${3 * CELL}" height="${2 * CELL}"`));
      assert.ok(exports[3].text!.includes('<title>test.pt: divergence of every layer × head</title>'), exports[3].text!.slice(0, 300));
      assert.ok(exports[3].text!.includes(`href="data:image/png;base64,${exports[2].base64}"`));
      assert.deepEqual(panel.errors, []);
    } finally {
      await panel.close();
    }
  });

  it('a click on a head draws B − A on a diverging scale; hover gives A, B and the difference', async () => {
    const panel = await openHeads(a, { compared: { stack: b, ...runs } });
    try {
      await panel.page.click('#tab-heads-compare');
      await panel.page.click('#compare-file');
      await panel.page.click('#compare-ranking li[data-layer="1"][data-head="0"]');
      await panel.page.waitForSelector('#compare-head[data-layer="1"][data-head="0"]');
      const change = planted.expected.difference_1_0!;
      const limit = Math.max(...change.flat().map(Math.abs));
      assert.match((await panel.page.textContent('#compare-scale')) ?? '', new RegExp(`13 queries × 13 keys\\. .*limits ±${limit.toFixed(3)}\\.`));

      const canvas = await panel.page.$('#compare-difference-canvas');
      await canvas!.scrollIntoViewIfNeeded();
      const box = (await canvas!.boundingBox())!;
      const side = box.width / 13;
      const hover = async (query: number, key: number) => {
        await panel.page.mouse.move(box.x + (key + 0.5) * side, box.y + (query + 0.5) * side);
        return (await panel.page.textContent('#compare-hover')) ?? '';
      };
      for (const [query, key] of [[5, 2], [12, 8], [0, 3]]) {
        const text = await hover(query, key);
        assert.match(text, new RegExp(`^query “t${query}” \\(${query}\\) → key “t${key}” \\(${key}\\): `));
        const [shownA, shownB, shownChange] = hoverValues(text);
        // Shown to 3 decimals (6 below 0.001): within half a unit of the last digit of numpy's.
        assert.ok(Math.abs(shownA - planted.weights[1][0][query][key]) <= 5e-4, text);
        assert.ok(Math.abs(shownB - planted.other![1][0][query][key]) <= 5e-4, text);
        assert.ok(Math.abs(shownChange - change[query][key]) <= 5e-4, text);
      }
      // Zero is white (a causal head's future keys are 0 in both), the largest change the scale's end.
      const scale = (await canvas!.evaluate((c) => (c as HTMLCanvasElement).width)) / 13;
      assert.deepEqual(await pixel(panel, '#compare-difference-canvas', Math.floor(12.5 * scale), Math.floor(0.5 * scale)), [247, 247, 247]);
      const largest = change.flat().findIndex((value) => Math.abs(value) === limit);
      const [row, col] = [Math.floor(largest / 13), largest % 13];
      assert.deepEqual(await pixel(panel, '#compare-difference-canvas', Math.floor((col + 0.5) * scale), Math.floor((row + 0.5) * scale)), change[row][col] > 0 ? RED : BLUE);

      // B − A exports with its tokens on the axes (webview/heads/axes.ts): the PNG is the map with
      // its label margins, the SVG holds the drawn map under its title with the labels as text.
      await panel.page.click('[data-export="compare-difference-png"]');
      await panel.page.click('[data-export="compare-difference-svg"]');
      const [png, svg] = (await panel.sent()).flatMap((m) => (m.type === 'export' ? [m] : []));
      assert.deepEqual([png.format, png.fileName, svg.format, svg.fileName], ['png', 'test.pt-L1H0-difference.png', 'svg', 'test.pt-L1H0-difference.svg']);
      const drawn = await canvas!.evaluate((c) => ({ width: (c as HTMLCanvasElement).width, height: (c as HTMLCanvasElement).height, base64: (c as HTMLCanvasElement).toDataURL('image/png').split(',')[1] }));
      const pngBytes = Buffer.from(png.base64!, 'base64');
      assert.ok(pngBytes.readUInt32BE(16) > drawn.width && pngBytes.readUInt32BE(20) > drawn.height, 'the PNG holds the map and its label margins');
      assert.ok(svg.text!.includes('<title>test.pt: B − A, layer 1 · head 0</title>') && svg.text!.includes(`href="data:image/png;base64,${drawn.base64}"`), svg.text!.slice(0, 300));
      assert.equal([...svg.text!.matchAll(/<text /g)].length, 2 * 13, 'each of the 13 queries and 13 keys labelled');
      assert.deepEqual(panel.errors, []);
    } finally {
      await panel.close();
    }
  });

  it('pools a head past 512 tokens a side: a cell is its block\'s largest change, and the hover names that entry', async function () {
    // A 520² page: a loaded machine may take long to paint it (a bound, not a measured time).
    this.timeout(300_000);
    // 1 layer × 1 head of 520 tokens: blocks of 2 × 2, 260 cells a side. Causal rows, B's shifted.
    const n = 520;
    const causal = (shift: number) => {
      const weights = new Float64Array(n * n);
      for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) weights[i * n + j] = (1 + ((i * 7 + j * 13 + shift) % 5)) / (i + 1);
      for (let i = 0; i < n; i++) {
        const sum = weights.subarray(i * n, (i + 1) * n).reduce((x, y) => x + y, 0);
        for (let j = 0; j <= i; j++) weights[i * n + j] /= sum;
      }
      return weights;
    };
    const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
    const big = (weights: Float64Array): AttentionStack => ({ source: { kind: 'saved', file: 'big.npz' }, tokens, keyTokens: tokens, layerCount: 1, headCount: 1, queryCount: n, keyCount: n, weights: () => weights });
    const [bigA, bigB] = [big(causal(0)), big(causal(2))];
    const panel = await openHeads(bigA, { compared: { stack: bigB, ...runs }, paintTimeout: 200_000 });
    try {
      await panel.page.click('#tab-heads-compare');
      await panel.page.click('#compare-file');
      await panel.page.click('#compare-ranking li');
      await panel.page.waitForSelector('#compare-difference-canvas');
      assert.match((await panel.page.textContent('#compare-scale')) ?? '', /each cell the entry of largest \|B − A\| among 2×2/);
      const canvas = await panel.page.$('#compare-difference-canvas');
      await canvas!.scrollIntoViewIfNeeded();
      const box = (await canvas!.boundingBox())!;
      const [row, col] = [120, 45];
      await panel.page.mouse.move(box.x + ((col + 0.5) * box.width) / 260, box.y + ((row + 0.5) * box.height) / 260);
      const text = (await panel.page.textContent('#compare-hover')) ?? '';
      // The worker's pooled map (its values checked against numpy's pooling in the unit tests).
      const map = pooledDifference(bigA, bigB, 0, 0, 512);
      const cell = row * 260 + col;
      const [query, key] = [Math.floor(map.at[cell] / n), map.at[cell] % n];
      assert.ok(query >= 2 * row && query < 2 * row + 2 && key >= 2 * col && key < 2 * col + 2);
      assert.match(text, new RegExp(`^block of queries 240–241 \\(“t240”…“t241”\\), largest change at query “t${query}” \\(${query}\\) → key “t${key}” \\(${key}\\): `));
      // The weights of that entry of A and B, as the page writes numbers.
      const [a, b] = [bigA.weights(0, 0)[map.at[cell]], bigB.weights(0, 0)[map.at[cell]]];
      assert.ok(text.endsWith(`: A ${weightText(a)}, B ${weightText(b)}, B − A ${b > a ? '+' : '−'}${weightText(Math.abs(b - a))}`), text);
      assert.deepEqual(panel.errors, []);
    } finally {
      await panel.close();
    }
  });

  it('runs of different shapes give one message, no exception', async () => {
    const small = stackOf(referenceCase('no-repeat').weights, 'float64', null);
    const panel = await openHeads(a, { compared: { stack: small, ...runs } });
    try {
      await panel.page.click('#tab-heads-compare');
      await panel.page.click('#compare-file');
      await panel.page.waitForSelector('#compare-status .error');
      assert.equal(await panel.page.textContent('#compare-status'), 'cannot compare runs of different shapes: 2 layers × 3 heads × 13×13 against 1 layer × 2 heads × 6×6');
      assert.equal(await panel.page.isVisible('#compare-results'), false);
      assert.deepEqual(panel.errors, []);
    } finally {
      await panel.close();
    }
  });

  it('offers another text or checkpoint on a model run, and nothing on a problem', async () => {
    const of = (source: StackSource): AttentionStack => ({ ...a, source });
    const model = await openHeads(of({ kind: 'model', architecture: 'gpt2', folder: '/models/gpt2' }));
    try {
      await model.page.click('#tab-heads-compare');
      await model.page.click('#compare-checkpoint');
      await model.page.click('#compare-text');
      assert.deepEqual((await model.sent()).filter((m) => m.type === 'compare'), [{ type: 'compare', with: 'checkpoint' }, { type: 'compare', with: 'text' }]);
    } finally {
      await model.close();
    }
    const problem = await openHeads(of({ kind: 'problem', document: 'file:///a.md', problem: 0 }));
    try {
      await problem.page.click('#tab-heads-compare');
      assert.match((await problem.page.textContent('#compare-unavailable')) ?? '', /model run.*saved attentions/);
    } finally {
      await problem.close();
    }
  });

  describe('encoder–decoder runs, kind by kind', function () {
    this.timeout(180_000);
    // The Marian fixture on its source and target (A), and on the source without its last token
    // with the same target (B): the decoder compares, the encoder and cross-attention do not.
    let a: ModelRun;
    let b: ModelRun;
    before(async () => {
      const reference = seq2seqReference('marian-f16');
      const files = folderFiles(seq2seqFixture('marian-f16'));
      a = await runModel(files, { ids: reference.source_ids, target: { ids: reference.target_ids } });
      b = await runModel(files, { ids: reference.source_ids.slice(0, -1), target: { ids: reference.target_ids } });
    });
    const names = { a: { title: 'opus A', detail: 'A’s source' }, b: { title: 'opus B', detail: 'B’s source' } };
    const divergenceQueries = async (panel: HeadsPage) => (await panel.sent()).flatMap((m) => (m.type === 'query' && m.query.kind === 'divergence' ? [m.query] : []));

    it('cross-attention of sources of different lengths says why in one line and asks nothing; the decoder\'s page compares the same pairing', async () => {
      const panel = await openHeads(a, { compared: { stack: b, ...names } });
      try {
        await panel.page.click('#tab-heads-compare');
        await panel.page.click('#compare-text');
        await panel.page.waitForSelector('#compare-status .error');
        const source = a.kinds!.encoder!.queryCount;
        assert.equal(await panel.page.textContent('#compare-status'), `B’s source is ${source - 1} tokens long and A’s ${source}: the cross attention compares sources and targets of equal length. Choose decoder above to compare.`);
        assert.equal(await panel.page.textContent('#compare-run-b'), 'B: opus B');
        assert.deepEqual(await divergenceQueries(panel), [], 'no divergence asked for a kind that does not compare');
        assert.ok(await panel.page.locator('#compare-results').isHidden());

        // The decoder's page opens on the Compare tab with B still paired: its divergence, asked for the decoder.
        await panel.page.click('#heads-kinds [data-kind="decoder"]');
        await panel.page.waitForSelector('#compare-ranking li');
        assert.deepEqual(await divergenceQueries(panel), [{ kind: 'divergence', attention: 'decoder' }]);
        assert.equal(await panel.page.textContent('#compare-run-a'), 'A: opus A');
        const expected = ranked(await divergences(a.kinds!.decoder!, b.kinds!.decoder!));
        const shown = await panel.page.$$eval('#compare-ranking li', (items) => items.map((item) => item.textContent));
        assert.deepEqual(shown, expected.map(({ layer, head, value }) => `L${layer} H${head}: ${value.toFixed(4)} nats`));
        // Layer 0's decoder self-attention reads the target alone (the source enters through its
        // cross-attention, after it): the same in A and B; later layers see the source and differ.
        const layer0 = expected.filter(({ layer }) => layer === 0);
        assert.ok(layer0.every(({ value }) => value < 1e-9), JSON.stringify(layer0));
        assert.ok(expected.some(({ layer, value }) => layer > 0 && value > 1e-6), JSON.stringify(expected));

        // The encoder's page: refused again, in its own words.
        await panel.page.click('#heads-kinds [data-kind="encoder"]');
        await panel.page.waitForSelector('#heads-kinds [data-kind="encoder"][aria-checked="true"]');
        await panel.page.waitForSelector('#compare-status .error');
        assert.match((await panel.page.textContent('#compare-status')) ?? '', /^B’s source is \d+ tokens long and A’s \d+: the encoder attention compares sources of equal length\. Choose decoder above to compare\.$/);
        assert.deepEqual(await divergenceQueries(panel), [{ kind: 'divergence', attention: 'decoder' }]);
        assert.deepEqual(panel.errors, []);
      } finally {
        await panel.close();
      }
    });
  });
});
