// Tokens on the axes of an opened head (issue 45), in Chromium: every token while each has a line
// of its own, every k-th beyond; the hovered row and column named over the axes; tokens as written
// (`<s>`, markup as text) with Ġ and ▁ as the ␣ of a model run's labels; the same labels in the
// PNG and SVG exports. Screenshots go to test-output/screenshots/heads-labels-*.png.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { AttentionStack } from '../../src/core/heads/stack';
import { ROOT } from './harness';
import { closeChecked, type HeadsPage, openHeads } from './headsPage';

const SHOTS = path.join(ROOT, 'test-output', 'screenshots');

/** A one-layer, two-head stack over `tokens`: each query spreads its weight over the keys up to it. */
function stackOf(tokens: string[]): AttentionStack {
  const n = tokens.length;
  const map = new Float32Array(n * n);
  for (let q = 0; q < n; q++) for (let k = 0; k <= q; k++) map[q * n + k] = 1 / (q + 1);
  return { source: { kind: 'saved', file: 'labels.pt' }, tokens, keyTokens: tokens, layerCount: 1, headCount: 2, queryCount: n, keyCount: n, weights: () => map };
}

async function openHead(panel: HeadsPage): Promise<void> {
  const box = (await panel.page.locator('#grid-canvas').boundingBox())!;
  await panel.page.mouse.click(box.x + 28 + 10, box.y + 28 + 10);
  await panel.page.waitForSelector('#heads-head .labelled-map');
}

const ticks = (panel: HeadsPage, axis: 'rows' | 'columns') =>
  panel.page.$$eval(`#heads-head .axis-${axis} .tick:not(.hovered)`, (labels) => labels.map((label) => ({ token: Number(label.getAttribute('data-token')), text: label.textContent ?? '' })));

/** Hovers cell (row, col) of the opened head's canvas and reads the named row and column. */
async function hoverCell(panel: HeadsPage, rows: number, row: number, col: number): Promise<{ row: string; col: string; reading: string }> {
  const box = (await panel.page.locator('#head-canvas').boundingBox())!;
  await panel.page.mouse.move(box.x + ((col + 0.5) / rows) * box.width, box.y + ((row + 0.5) / rows) * box.height);
  return panel.page.evaluate(() => ({
    row: document.getElementById('map-row-hover')!.textContent ?? '',
    col: document.getElementById('map-col-hover')!.textContent ?? '',
    reading: document.getElementById('head-hover')!.textContent ?? '',
  }));
}

describe('heads page: tokens on an opened head\'s axes', function () {
  let panel: HeadsPage | undefined;
  before(() => mkdirSync(SHOTS, { recursive: true }));
  afterEach(async () => {
    const shown = panel;
    panel = undefined;
    await closeChecked(shown);
  });

  it('labels every token of a short text as written, Ġ and ▁ as ␣, and names the hovered row and column', async () => {
    const tokens = ['<s>', 'The', 'Ġcat', 'Ġsat', '▁on', '<b>mat</b>', 'a&amp;b', 'Ċ', '</s>'];
    panel = await openHeads(stackOf(tokens));
    await openHead(panel);
    const shown = ['<s>', 'The', '␣cat', '␣sat', '␣on', '<b>mat</b>', 'a&amp;b', '↵', '</s>'];
    assert.deepEqual(await ticks(panel, 'rows'), shown.map((text, token) => ({ token, text })));
    assert.deepEqual(await ticks(panel, 'columns'), shown.map((text, token) => ({ token, text })));
    assert.equal(await panel.page.$$eval('#heads-head .tick b', (bold) => bold.length), 0, 'markup stays text');
    const hovered = await hoverCell(panel, tokens.length, 5, 2);
    assert.deepEqual([hovered.row, hovered.col], ['<b>mat</b> (5)', '␣cat (2)']);
    assert.match(hovered.reading, /^query “<b>mat<\/b>” \(5\) → key “␣cat” \(2\): 0\.167$/);
    await panel.page.locator('#heads-head').screenshot({ path: path.join(SHOTS, 'heads-labels-9.png') });
  });

  it('thins the labels of 300 tokens to every k-th, evenly, and still names any hovered row and column', async () => {
    const tokens = Array.from({ length: 300 }, (_, i) => (i === 0 ? '<s>' : `Ġw${i}`));
    panel = await openHeads(stackOf(tokens));
    await openHead(panel);
    const rows = await ticks(panel, 'rows');
    const step = rows[1].token - rows[0].token;
    assert.ok(step > 1 && rows.length < 300, `thinned: every ${step}th, ${rows.length} labels`);
    assert.deepEqual(rows.map((tick) => tick.token), Array.from({ length: rows.length }, (_, i) => i * step), 'every k-th from the first');
    assert.equal(rows.length, Math.ceil(300 / step));
    assert.deepEqual(rows[1].text, `␣w${step}`);
    // Labels at least a line apart on the screen: none overlaps the next.
    const tops = await panel.page.$$eval('#heads-head .axis-rows .tick:not(.hovered)', (labels) => labels.map((label) => label.getBoundingClientRect().top));
    for (let i = 1; i < tops.length; i++) assert.ok(tops[i] - tops[i - 1] >= 12.9, `labels ${i - 1} and ${i} are ${tops[i] - tops[i - 1]} px apart`);
    assert.equal((await ticks(panel, 'columns')).length, rows.length);
    // A row and column between labels is named when hovered.
    const hovered = await hoverCell(panel, 300, step + 1, 2 * step + 1);
    assert.deepEqual([hovered.row, hovered.col], [`␣w${step + 1} (${step + 1})`, `␣w${2 * step + 1} (${2 * step + 1})`]);
    await panel.page.locator('#heads-head').screenshot({ path: path.join(SHOTS, 'heads-labels-300.png') });
  });

  it('puts the same labels in the PNG and SVG exports', async () => {
    const tokens = ['<s>', 'Ġcat', 'Ġ&', 'Ġ"mat"'];
    panel = await openHeads(stackOf(tokens));
    await openHead(panel);
    await panel.page.click('[data-export="head-svg"]');
    await panel.page.click('[data-export="head-png"]');
    await panel.page.waitForFunction(() => (window as unknown as { posted: { type: string }[] }).posted.filter((m) => m.type === 'export').length === 2);
    const [svg, png] = (await panel.sent()).filter((m) => m.type === 'export');
    assert.ok(svg.type === 'export' && svg.format === 'svg' && svg.text);
    assert.match(svg.fileName, /L0H0\.svg$/);
    const texts = [...svg.text.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((match) => match[1]);
    assert.deepEqual(texts, ['&#60;s&#62;', '␣cat', '␣&#38;', '␣&#34;mat&#34;', '&#60;s&#62;', '␣cat', '␣&#38;', '␣&#34;mat&#34;']);
    assert.ok(png.type === 'export' && png.format === 'png' && png.base64);
    // The PNG is the map with its label margins: wider and taller than the cells alone.
    const cells = await panel.page.$eval('#head-canvas', (canvas) => ({ width: (canvas as HTMLCanvasElement).width, height: (canvas as HTMLCanvasElement).height }));
    const bytes = Buffer.from(png.base64, 'base64');
    const [width, height] = [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
    assert.ok(width > cells.width && height > cells.height, `${width}×${height} against the cells' ${cells.width}×${cells.height}`);
    // Label pixels: the margins are not all background.
    const inked = await panel.page.evaluate(async (base64) => {
      const image = new Image();
      image.src = `data:image/png;base64,${base64}`;
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.width;
      canvas.height = image.height;
      const context = canvas.getContext('2d')!;
      context.drawImage(image, 0, 0);
      const left = context.getImageData(0, 0, 16, image.height).data;
      const corner = context.getImageData(0, 0, 1, 1).data;
      let differing = 0;
      for (let i = 0; i < left.length; i += 4) if (Math.abs(left[i] - corner[0]) + Math.abs(left[i + 1] - corner[1]) + Math.abs(left[i + 2] - corner[2]) > 60) differing++;
      return differing;
    }, png.base64);
    assert.ok(inked > 0, 'the left margin holds label pixels');
    await panel.page.evaluate((base64) => {
      const image = document.createElement('img');
      image.id = 'exported-png';
      image.src = `data:image/png;base64,${base64}`;
      document.body.append(image);
    }, png.base64);
    await panel.page.locator('#exported-png').screenshot({ path: path.join(SHOTS, 'heads-labels-export.png') });
  });
});
