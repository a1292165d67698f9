// The heads page (webview/heads/) in Chromium, served as src/features/heads.ts serves it, with the
// test standing in for the extension host and the worker: each `query` the page posts is answered
// by the worker's own code (src/views/heads.ts: pooling, top-k and head views) over a stack, and
// a `compare` is answered by pairing the second stack given, as src/features/heads.ts pairs B.
import assert from 'node:assert/strict';
import { kindRefusals } from '../../src/core/heads/compare';
import type { AttentionStack } from '../../src/core/heads/stack';
import { contentSecurityPolicy, htmlPage, newNonce } from '../../src/views/html';
import type { ComparedRun, HeadsViewToHost, StackInfo } from '../../src/protocol';
import { answerQuery, infoOf as describeStack } from '../../src/views/heads';
import { openPanel, pageOrigin, type PanelPage, repoFile } from './harness';

export interface HeadsPage extends PanelPage {
  /** What the page posted, in order. */
  sent(): Promise<HeadsViewToHost[]>;
}

function headsHtml(origin: string): string {
  const nonce = newNonce();
  // Messages cross to the test through an exposed function, as a webview's cross to the host.
  const shim = `window.posted = []; window.acquireVsCodeApi = () => ({ postMessage: (m) => { window.posted.push(m); window.toHost(m); }, getState: () => undefined, setState: () => {} });
    window.fromHost = (m) => { const revive = (v) => v && v.typed ? new globalThis[v.typed](Uint8Array.from(atob(v.base64), (c) => c.charCodeAt(0)).buffer) : v && typeof v === 'object' ? (Object.keys(v).forEach((k) => { v[k] = revive(v[k]); }), v) : v; window.postMessage(revive(m), '*'); };`;
  return htmlPage({
    csp: contentSecurityPolicy({ nonce, resourceSource: origin }),
    title: 'heads',
    head: `<style>${repoFile('media/heads.css').toString('utf8')}</style>`,
    bodyAttributes: 'data-mode="heads"',
    body: `<script nonce="${nonce}">${shim}</script><script type="module" nonce="${nonce}">${repoFile('dist/heads.js').toString('utf8')}</script>`,
  });
}

/** Typed arrays as { typed, base64 } (the test ⇄ page bridge carries JSON), revived in the page. */
function portable(value: unknown): unknown {
  if (ArrayBuffer.isView(value)) return { typed: value.constructor.name, base64: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') };
  if (Array.isArray(value)) return value.map(portable);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, portable(item)]));
  return value;
}

/** What the host posts of a stack: the worker's own description, with a note. */
export function infoOf(stack: AttentionStack, title: string): StackInfo {
  return describeStack(stack, title, ['a note']);
}

export interface HeadsPageOptions {
  viewport?: { width: number; height: number };
  paintTimeout?: number;
  /** What a `compare` from the page pairs with the stack (B), and how both runs are named. */
  compared?: { stack: AttentionStack; a: ComparedRun; b: ComparedRun };
  deviceScaleFactor?: number;
  /** A browser context of the page's own (see OpenOptions.ownContext). */
  ownContext?: boolean;
  /** As the host does while a model runs or a file is read: `opening` first, and the stack once
   * `meanwhile` (given the page) has resolved. */
  opening?: { text: string; meanwhile(page: PanelPage['page'], reply: (message: unknown) => Promise<void>): Promise<void> };
  /** Every message the page posts, as it posts it (the test standing in for the host sees it). */
  onPosted?(message: HeadsViewToHost): void;
}

/** Opens the page on `stack` and waits for its model view to paint. */
export async function openHeads(stack: AttentionStack, { viewport = { width: 1100, height: 900 }, paintTimeout = 20_000, compared, deviceScaleFactor = 1, ownContext, opening, onPosted }: HeadsPageOptions = {}): Promise<HeadsPage> {
  let page: PanelPage['page'] | undefined;
  const pending: Promise<unknown>[] = [];
  let paired: AttentionStack | undefined;
  const panel = await openPanel({
    html: headsHtml(await pageOrigin()),
    viewport,
    deviceScaleFactor,
    ownContext,
    beforeGoto: async (p) => {
      page = p;
      await p.exposeFunction('toHost', async (message: HeadsViewToHost) => {
        const send = (m: unknown) => p.evaluate((m) => (window as unknown as { fromHost(m: unknown): void }).fromHost(m), portable(m));
        const reply = (m: unknown) => pending.push(send(m));
        onPosted?.(message);
        if (message.type === 'ready') {
          if (opening) {
            reply({ type: 'opening', text: opening.text });
            await opening.meanwhile(p, send);
          }
          reply({ type: 'stack', info: infoOf(stack, 'test.pt') });
        }
        if (message.type === 'query') {
          try {
            reply(portable({ type: 'answer', requestId: message.requestId, answer: await answerQuery(stack, message.query, paired) }));
          } catch (error) {
            reply({ type: 'error', requestId: message.requestId, message: (error as Error).message });
          }
        }
        if (message.type === 'compare' && compared) {
          paired = compared.stack;
          // As the host does (src/features/heads.ts): an encoder–decoder pairing says which kinds do not compare.
          const refused = kindRefusals(infoOf(stack, 'test.pt'), infoOf(compared.stack, 'b'));
          reply({ type: 'compared', a: compared.a, b: compared.b, ...(refused ? { refused } : {}) });
        }
      });
    },
  });
  await panel.page.waitForSelector('#grid-canvas[data-painted]', { timeout: paintTimeout }).catch(async (error: Error) => {
    const body = await panel.page.evaluate(() => document.body.innerText.slice(0, 300));
    throw new Error(`the grid never painted (${error.message.split('\n')[0]}): errors ${panel.errors.join('; ')}; page: ${body}`);
  });
  void page;
  return { ...panel, sent: () => panel.page.evaluate(() => (window as unknown as { posted: HeadsViewToHost[] }).posted) };
}

/** Closes a page a test opened, failing the test if the page logged errors or broke its CSP. */
export async function closeChecked(panel: HeadsPage | undefined): Promise<void> {
  if (!panel) return;
  assert.deepEqual(panel.errors, [], 'the page logged errors');
  assert.deepEqual(await panel.violations(), [], 'CSP violations');
  await panel.close();
}
