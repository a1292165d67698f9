// Loads the built panel (the HTML of src/views/html.ts with dist/panel/main.js and media/panel.css
// inline; plotly and the toolkit served from dist/panel/) into
// Debian's Chromium, the way VS Code serves a webview: from its own origin, themed, with a
// stand-in for acquireVsCodeApi that records what the page posts and keeps its state.
//
// One Chromium serves the whole run (test/browser/chromium.hooks.ts closes it), every test in a
// fresh page. The pages come from a local HTTP server rather than from intercepted requests:
// interception turns Chromium's HTTP cache off, and with it V8's code cache, so each page
// compiled plotly's 4.8 MB anew. Over HTTP, in a persistent (not incognito) profile, the pages
// after the second one run plotly's cached code.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { newNonce, panelHtml, type WebviewMode } from '../../src/views/html';
import type { HostToWebview, PanelState, WebviewToHost } from '../../src/protocol';
import { themed, type ThemeName } from './themes';

export const ROOT = path.resolve(__dirname, '..', '..');

const texts = new Map<string, Buffer>();
/** A file of the repository, read once per run (the bundles are built before the run). */
export function repoFile(relative: string): Buffer {
  let bytes = texts.get(relative);
  if (!bytes) texts.set(relative, (bytes = readFileSync(path.join(ROOT, relative))));
  return bytes;
}

/** What the page may load: the parts the panel loads after its first paint. */
function servedFile(pathname: string): string | undefined {
  return /^\/dist\/panel\/[\w.-]+\.js$/.test(pathname) ? pathname.slice(1) : undefined;
}

/** A page being served: its HTML, and the hook that holds back its scripts (if any). */
interface ServedPage {
  html: string;
  beforeServe?: (pathname: string) => Promise<void>;
}

/**
 * The webview origin stand-in (webview.cspSource): /pages/<id> is a page's HTML; /dist/panel/*.js
 * the scripts, cacheable (validated by ETag). A page that holds scripts back gets its own
 * /held/<id>/dist/panel/, never cached, so its hook sees every request.
 */
class PageServer {
  private readonly pages = new Map<string, ServedPage>();
  private readonly etags = new Map<string, string>();
  private nextId = 0;
  private readonly server = createServer((request, response) => void this.answer(request, response));
  origin = '';

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Registers a page; its HTML is built from where it is served (its origin and assets' URI). */
  add(build: (origin: string, assetsUri: string) => string, beforeServe?: ServedPage['beforeServe']): { url: string; remove(): void } {
    const id = String(this.nextId++);
    const assetsUri = beforeServe ? `${this.origin}/held/${id}/dist/panel/` : `${this.origin}/dist/panel/`;
    this.pages.set(id, { html: build(this.origin, assetsUri), beforeServe });
    return { url: `${this.origin}/pages/${id}`, remove: () => this.pages.delete(id) };
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { pathname } = new URL(request.url ?? '/', this.origin);
    // Chromium asks a top-level page's origin for an icon (a webview, in a frame, is never asked).
    if (pathname === '/favicon.ico') return void response.writeHead(204).end();
    const page = /^\/pages\/(\d+)$/.exec(pathname);
    const html = page && this.pages.get(page[1])?.html;
    if (html) return void response.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' }).end(html);
    const held = /^\/held\/(\d+)(\/.*)$/.exec(pathname);
    const file = servedFile(held ? held[2] : pathname);
    if (!file) return void response.writeHead(404).end();
    const script = { 'content-type': 'text/javascript' };
    if (held) {
      await this.pages.get(held[1])?.beforeServe?.(held[2]);
      return void response.writeHead(200, { ...script, 'cache-control': 'no-store' }).end(repoFile(file));
    }
    const etag = this.etagOf(file);
    if (request.headers['if-none-match'] === etag) return void response.writeHead(304, { etag }).end();
    response.writeHead(200, { ...script, 'cache-control': 'max-age=3600', etag }).end(repoFile(file));
  }

  private etagOf(file: string): string {
    let etag = this.etags.get(file);
    if (!etag) this.etags.set(file, (etag = `"${createHash('sha1').update(repoFile(file)).digest('hex')}"`));
    return etag;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface Chromium {
  /** The persistent profile's one context: its HTTP and code caches serve every page. */
  context: BrowserContext;
  server: PageServer;
  profile: string;
}

let running: Promise<Chromium> | undefined;

const VIEWPORT = { width: 1100, height: 900 };

/** The run's Chromium, launched on first use. Nothing leaves the machine: every host but the
 * page server's goes through a proxy that is not there. */
function runningChromium(): Promise<Chromium> {
  running ??= (async () => {
    const server = new PageServer();
    await server.listen();
    const profile = mkdtempSync(path.join(tmpdir(), 'attention-lens-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      viewport: VIEWPORT,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--proxy-server=127.0.0.1:9'],
    });
    return { context, server, profile };
  })();
  return running;
}

/** The origin pages are served from: the webview's cspSource. */
export async function pageOrigin(): Promise<string> {
  return (await runningChromium()).server.origin;
}

/** Closes the run's Chromium and its page server (a root hook after all tests; bench/panel.ts). */
export async function closeChromium(): Promise<void> {
  const closing = running;
  running = undefined;
  if (!closing) return;
  const { context, server, profile } = await closing;
  await context.close();
  await server.close();
  rmSync(profile, { recursive: true, force: true });
}

export interface PanelPage {
  page: Page;
  /** Messages the page posted to the host, in order. */
  posted(): Promise<WebviewToHost[]>;
  /** CSP violations the page reported ("directive: blocked URI"). */
  violations(): Promise<string[]>;
  /** Uncaught exceptions and console errors of the page. */
  errors: string[];
  /** Delivers a host message and waits until the page has drawn every heatmap. */
  send(message: HostToWebview): Promise<void>;
  /** Runs `action` and waits for the render it causes to finish. */
  rendered(action: () => Promise<unknown>): Promise<void>;
  close(): Promise<void>;
}

export interface OpenOptions {
  theme?: ThemeName;
  mode?: WebviewMode;
  state?: PanelState;
  /** A whole page to serve instead of the panel (the standalone report). */
  html?: string;
  viewport?: { width: number; height: number };
  /** Device pixels per CSS pixel (2: a HiDPI screen); other than 1, the page gets a context of its own. */
  deviceScaleFactor?: number;
  /** A browser context of the page's own, for what would reach every page of the shared one (a
   * fake clock: page.clock is the context's). */
  ownContext?: boolean;
  /** Awaited before a file is served: holds back a chunk (plotly, say) to see the page without it. */
  beforeServe?: (pathname: string) => Promise<void>;
  /** Awaited once the page exists, before it loads (to expose functions to it). */
  beforeGoto?: (page: Page) => Promise<void>;
}

/**
 * Page script: a stand-in for VS Code's acquireVsCodeApi (none for standalone pages) and a CSP
 * violation recorder. Plain text, because functions compiled by tsx reference its helpers.
 */
function shim(initialState: PanelState | undefined, standalone: boolean): string {
  return `
    window.posted = [];
    window.violations = [];
    window.savedState = ${JSON.stringify(initialState ?? null)} ?? undefined;
    document.addEventListener('securitypolicyviolation', (event) => {
      window.violations.push(event.violatedDirective + ': ' + (event.blockedURI || event.sample));
    });
    ${standalone ? '' : `window.acquireVsCodeApi = () => ({
      postMessage: (message) => window.posted.push(message),
      getState: () => window.savedState,
      setState: (state) => { window.savedState = state; },
    });`}
  `;
}

export async function openPanel(options: OpenOptions = {}): Promise<PanelPage> {
  const { context: shared, server } = await runningChromium();
  const viewport = options.viewport ?? VIEWPORT;
  const context = !options.ownContext && (options.deviceScaleFactor ?? 1) === 1 ? shared : await shared.browser()!.newContext({ viewport, deviceScaleFactor: options.deviceScaleFactor });
  const page = await context.newPage();
  await page.setViewportSize(viewport);
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  const entry = server.add((origin, assetsUri) => options.html ?? themed(panelHtml({
    cspSource: origin,
    script: repoFile('dist/panel/main.js').toString('utf8'),
    css: repoFile('media/panel.css').toString('utf8'),
    assetsUri,
    nonce: newNonce(),
    mode: options.mode ?? 'panel',
    title: 'Attention',
  }), options.theme ?? 'light'), options.beforeServe);
  await page.addInitScript(shim(options.state, options.html !== undefined));
  await options.beforeGoto?.(page);
  await page.goto(entry.url);
  const generation = () => page.evaluate(() => Number(document.body.dataset.rendered ?? 0));
  const rendered = async (action: () => Promise<unknown>) => {
    const before = await generation();
    await action();
    await page.waitForFunction((previous) => Number(document.body.dataset.rendered ?? 0) > previous, before);
  };
  if (!options.html) {
    await page
      .waitForFunction(() => (window as unknown as { posted: { type: string }[] }).posted.some((m) => m.type === 'ready'), undefined, { timeout: 15_000 })
      .catch((error: Error) => Promise.reject(new Error(`the panel never said ready: ${errors.join('; ') || error.message}`)));
  }
  return {
    page,
    errors,
    posted: () => page.evaluate(() => (window as unknown as { posted: WebviewToHost[] }).posted),
    violations: () => page.evaluate(() => (window as unknown as { violations: string[] }).violations),
    send: (message) => rendered(() => page.evaluate((m) => window.postMessage(m, '*'), message)),
    rendered,
    close: async () => {
      entry.remove();
      await (context === shared ? page.close() : context.close());
    },
  };
}

/** z values of the plotly heatmap in a card (null where plotly leaves a gap). */
/** Picks `label` in the panel's `control` dropdown (Head, Step, …) and waits for the render. */
export async function choose(panel: PanelPage, control: string, label: string): Promise<void> {
  await panel.rendered(async () => {
    await panel.page.click(`vscode-dropdown[data-control="${control}"]`);
    await panel.page.locator(`vscode-dropdown[data-control="${control}"] vscode-option`, { hasText: label }).first().click();
  });
}

export function heatmapZ(page: Page, cardId: string, plot = '.plot'): Promise<(number | null)[][]> {
  return page.evaluate(([id, selector]) => {
    const element = document.querySelector(`#${id} ${selector}`) as unknown as { data: { z: (number | null)[][] }[] };
    return element.data[0].z;
  }, [cardId, plot]);
}

/** Moves the mouse over cell (row, col) of a card's heatmap (or of its zoomed detail, with
 * plot `.detail .plot`) and returns the tooltip's text. */
export async function hoverCell(page: Page, cardId: string, row: number, col: number, plot = '.plot'): Promise<string> {
  const z = await heatmapZ(page, cardId, plot);
  return hoverGridCell(page, page.locator(`#${cardId} ${plot} .nsewdrag`).first(), [z.length, z[0].length], [row, col]);
}

/** The same over a card's preview (`rows`×`cols` cells), before plotly has drawn. */
export function hoverPreviewCell(page: Page, cardId: string, [rows, cols]: [number, number], row: number, col: number): Promise<string> {
  return hoverGridCell(page, page.locator(`#${cardId} .plot .preview`).first(), [rows, cols], [row, col]);
}

async function hoverGridCell(page: Page, grid: Locator, [rows, cols]: [number, number], [row, col]: [number, number]): Promise<string> {
  await grid.scrollIntoViewIfNeeded();
  const area = await grid.boundingBox();
  if (!area) throw new Error('no plot area');
  const x = area.x + ((col + 0.5) / cols) * area.width;
  const y = area.y + ((row + 0.5) / rows) * area.height;
  // Leave the previous cell first: the tooltip of an earlier hover is still showing, and waiting
  // for "visible" alone would read it before the new hover lands.
  await page.mouse.move(0, 0);
  await page.waitForFunction(() => (document.getElementById('tooltip') as HTMLElement).hidden);
  await page.mouse.move(x - 3, y - 3);
  await page.mouse.move(x, y, { steps: 2 });
  await page.waitForFunction(() => !(document.getElementById('tooltip') as HTMLElement).hidden);
  return page.evaluate(() => document.getElementById('tooltip')!.textContent ?? '');
}

export function readJson<T>(relative: string): T {
  return JSON.parse(readFileSync(path.join(ROOT, relative), 'utf8')) as T;
}

/**
 * Mocha hooks for a file of panel tests: each test opens its page with `open()`, and after the
 * test the page is checked for errors and CSP violations and closed.
 */
export function panelPages(): { open(options?: OpenOptions): Promise<PanelPage> } {
  let current: PanelPage | undefined;
  afterEach(async () => {
    const page = current;
    current = undefined;
    if (!page) return;
    const violations = await page.violations();
    await page.close();
    assert.deepEqual(page.errors, [], 'the page logged errors');
    assert.deepEqual(violations, [], 'CSP violations');
  });
  return {
    async open(options) {
      current = await openPanel(options);
      return current;
    },
  };
}
