// Loads the built panel (the HTML of src/panel/html.ts with dist/panel/main.js and media/panel.css
// inline; plotly and the toolkit served from dist/panel/) into
// Debian's Chromium, the way VS Code serves a webview: from its own origin, themed, with a
// stand-in for acquireVsCodeApi that records what the page posts and keeps its state.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { newNonce, panelHtml, type WebviewMode } from '../../src/panel/html';
import type { HostToWebview, PanelState, WebviewToHost } from '../../src/protocol';
import { themed, type ThemeName } from './themes';

export const ROOT = path.resolve(__dirname, '..', '..');
/** Stands in for the webview's origin (webview.cspSource); every request to it is answered locally. */
export const ORIGIN = 'https://webview.test';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** What the page may load: the parts the panel loads after its first paint. */
function served(pathname: string): { file: string; type: string } | undefined {
  return /^\/dist\/panel\/[\w.-]+\.js$/.test(pathname) ? { file: pathname.slice(1), type: 'text/javascript' } : undefined;
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
  /** Device pixels per CSS pixel (2: a HiDPI screen). */
  deviceScaleFactor?: number;
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

export async function openPanel(browser: Browser, options: OpenOptions = {}): Promise<PanelPage> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1100, height: 900 }, deviceScaleFactor: options.deviceScaleFactor ?? 1 });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  const html = options.html ?? themed(panelHtml({
    cspSource: ORIGIN,
    script: readFileSync(path.join(ROOT, 'dist', 'panel', 'main.js'), 'utf8'),
    css: readFileSync(path.join(ROOT, 'media', 'panel.css'), 'utf8'),
    assetsUri: `${ORIGIN}/dist/panel/`,
    nonce: newNonce(),
    mode: options.mode ?? 'panel',
    title: 'Attention',
  }), options.theme ?? 'light');
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== ORIGIN) return route.abort();
    if (url.pathname === '/index.html') return route.fulfill({ body: html, contentType: 'text/html' });
    const file = served(url.pathname);
    if (!file) return route.fulfill({ status: 404, body: '' });
    await options.beforeServe?.(url.pathname);
    return route.fulfill({ body: readFileSync(path.join(ROOT, file.file)), contentType: file.type });
  });
  await page.addInitScript(shim(options.state, options.html !== undefined));
  await options.beforeGoto?.(page);
  await page.goto(`${ORIGIN}/index.html`);
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
    close: () => context.close(),
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
 * Mocha hooks for a file of panel tests: one Chromium for the file; each test opens its page with
 * `open()`, and after the test the page is checked for errors and CSP violations and closed.
 */
export function panelPages(): { open(options?: OpenOptions): Promise<PanelPage> } {
  let browser: Browser | undefined;
  let current: PanelPage | undefined;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });
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
      current = await openPanel(browser!, options);
      return current;
    },
  };
}
