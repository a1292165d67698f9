// The heads page's standalone HTML report in Chromium: the page's "HTML report" posts the model
// view as it drew it (here on a HiDPI screen); the host's check of that message
// (parseHeadsViewMessage) and its writer (src/report/headsHtml.ts) make the file, which opens as
// a file would — no script, no network — and shows the same pixels, at the grid's CSS size.
import assert from 'node:assert/strict';
import path from 'node:path';
import { loadSavedAttentions } from '../../src/core/heads/load';
import { DEFAULT_LIMITS } from '../../src/core/parse/tensors';
import { parseHeadsViewMessage } from '../../src/protocol';
import { renderHeadsReportHtml } from '../../src/report/headsHtml';
import { openPanel, ROOT } from './harness';
import { type HeadsPage, infoOf, openHeads } from './headsPage';

const saved = loadSavedAttentions(path.join(ROOT, 'test', 'fixtures', 'heads', 'saved', 'sidecar', 'layers.npz'), DEFAULT_LIMITS).stack;

/** Every RGBA byte of a canvas, or of an image drawn 1:1 into one, summed with its position. */
function pixelSum(source: HTMLCanvasElement | HTMLImageElement): { width: number; height: number; sum: number } {
  let canvas = source as HTMLCanvasElement;
  if (source instanceof HTMLImageElement) {
    canvas = document.createElement('canvas');
    canvas.width = source.naturalWidth;
    canvas.height = source.naturalHeight;
    canvas.getContext('2d')!.drawImage(source, 0, 0);
  }
  const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
  let sum = 0;
  for (let i = 0; i < data.length; i++) sum = (sum + data[i] * ((i % 9973) + 1)) % 2147483647;
  return { width: canvas.width, height: canvas.height, sum };
}

describe('heads report in Chromium', function () {
  let heads: HeadsPage | undefined;
  after(async () => {
    await heads?.close();
  });

  it('holds the model view as drawn, with its legend, in one file with no script that loads nothing', async () => {
    heads = await openHeads(saved, { deviceScaleFactor: 2 });
    await heads.page.click('#heads-report');
    await heads.page.waitForFunction(() => (window as unknown as { posted: { type: string }[] }).posted.some((m) => m.type === 'report'));
    const posted = (await heads.sent()).find((m) => m.type === 'report');
    const message = parseHeadsViewMessage(posted);
    assert.ok(message?.type === 'report', 'the host accepts the page\'s report message');
    assert.equal(message.fileName, 'test.pt-heads.html');
    // 3 heads and 2 layers of 48 px thumbnails, 6 px apart, after 28 px of labels.
    assert.deepEqual([message.width, message.height], [28 + 3 * 54, 28 + 2 * 54]);
    assert.equal(parseHeadsViewMessage({ ...message, fileName: '../report.html' }), undefined);
    assert.equal(parseHeadsViewMessage({ ...message, width: -1 }), undefined);
    const drawn = await heads.page.$eval('#grid-canvas', pixelSum);
    const legend = await heads.page.locator('#grid-legend').innerText();

    const html = renderHeadsReportHtml({ info: infoOf(saved, 'test.pt'), png: message.base64, width: message.width, height: message.height, legend: message.legend });
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1].replace(/&#39;/g, "'");
    assert.match(csp ?? '', /^default-src 'none'; style-src 'nonce-[0-9a-f]{32}'; img-src data:$/);
    assert.doesNotMatch(html, /<script|<link|src="http/);

    const report = await openPanel({ html, deviceScaleFactor: 2 });
    try {
      await report.page.waitForFunction(() => (document.getElementById('grid-image') as HTMLImageElement).complete);
      assert.equal(await report.page.locator('h1').innerText(), 'test.pt');
      assert.equal(await report.page.locator('#grid-legend').innerText(), legend);
      assert.match(legend, /2 layers × 3 heads, 5 queries × 5 keys; each cell one weight/);
      assert.deepEqual(await report.page.locator('#heads-notes li').allInnerTexts(), ['a note']);
      const box = (await report.page.locator('#grid-image').boundingBox())!;
      assert.deepEqual([box.width, box.height], [message.width, message.height]);
      // The same pixels as the page's canvas, at its device resolution.
      assert.deepEqual(await report.page.$eval('#grid-image', pixelSum), drawn);
      assert.deepEqual([drawn.width, drawn.height], [2 * message.width, 2 * message.height]);
      assert.deepEqual(await report.violations(), []);
      assert.deepEqual(report.errors, []);
    } finally {
      await report.close();
    }
  });
});
