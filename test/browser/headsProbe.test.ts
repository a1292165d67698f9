// The heads page's "Induction probe" tab (webview/heads/probe.ts) in Chromium: on a model run's
// page, one click asks the host for the probe with the R and seed typed; saved attentions have no
// model to probe, and the tab says so.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { contentSecurityPolicy, htmlPage, newNonce } from '../../src/panel/html';
import type { StackInfo } from '../../src/protocol';
import { launchChromium, openPanel, ORIGIN, ROOT } from './harness';

const tokens = ['<|endoftext|>', 'a', 'b', 'a'];
const info = (source: StackInfo['source']): StackInfo => ({ title: 'gpt2 (gpt2) · 4 tokens', source, tokens, keyTokens: tokens, layerCount: 2, headCount: 2, queryCount: 4, keyCount: 4, notes: [] });

function headsHtml(): string {
  const nonce = newNonce();
  const shim = `window.posted = []; window.acquireVsCodeApi = () => ({ postMessage: (m) => window.posted.push(m), getState: () => undefined, setState: () => {} });`;
  return htmlPage({
    csp: contentSecurityPolicy({ nonce, resourceSource: ORIGIN }),
    title: 'heads',
    head: `<style>${readFileSync(path.join(ROOT, 'media', 'heads.css'), 'utf8')}</style>`,
    bodyAttributes: 'data-mode="heads"',
    body: `<script nonce="${nonce}">${shim}</script><script type="module" nonce="${nonce}">${readFileSync(path.join(ROOT, 'dist', 'heads.js'), 'utf8')}</script>`,
  });
}

async function pageFor(browser: Browser, source: StackInfo['source']) {
  const panel = await openPanel(browser, { html: headsHtml() });
  await panel.page.waitForFunction(() => (window as unknown as { posted: { type: string }[] }).posted.some((m) => m.type === 'ready'));
  await panel.page.evaluate((m) => window.postMessage(m, '*'), { type: 'stack', info: info(source) });
  await panel.page.click('#tab-heads-probe');
  return panel;
}

describe('heads page: induction probe', function () {
  let browser: Browser;
  before(async () => (browser = await launchChromium()));
  after(async () => browser?.close());

  it('on a model run, asks the host for the probe with the R and seed typed', async () => {
    const panel = await pageFor(browser, 'model');
    try {
      await panel.page.fill('#probe-repeat', '12');
      await panel.page.fill('#probe-seed', '3');
      await panel.page.click('#probe-run');
      const asked = await panel.page.evaluate(() => (window as unknown as { posted: { type: string }[] }).posted.filter((m) => m.type === 'probe'));
      assert.deepEqual(asked, [{ type: 'probe', repeat: 12, seed: 3 }]);
    } finally {
      await panel.close();
    }
  });

  it('on saved attentions, says the probe needs a model and offers no button', async () => {
    const panel = await pageFor(browser, 'saved');
    try {
      assert.match((await panel.page.textContent('#probe-unavailable')) ?? '', /runs a model/);
      assert.equal(await panel.page.$('#probe-run'), null);
    } finally {
      await panel.close();
    }
  });
});
