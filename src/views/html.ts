// The HTML of every Attention Lens webview (panel, bottom view) and the frame of the standalone
// report. Pure — no `vscode` import — so the browser tests load exactly what VS Code loads; the
// caller turns files into webview URIs (`asWebviewUri`) and passes `webview.cspSource`.

export type WebviewMode = 'panel' | 'compact';

export interface ContentSecurity {
  nonce: string;
  /** Origins allowed for style sheets, images and fonts besides inline data (webview.cspSource). */
  resourceSource?: string;
}

/**
 * Nothing runs or loads unless listed: scripts only with this page's nonce (eval stays forbidden);
 * 'unsafe-inline' styles only because plotly sets style attributes and injects <style>; data:
 * images because plotly draws heatmaps into a canvas and shows it as a data: <image>, and blob:
 * because plotly's PNG export rasterises its SVG through an object URL.
 */
export function contentSecurityPolicy({ nonce, resourceSource }: ContentSecurity): string {
  const own = resourceSource ? `${resourceSource} ` : '';
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${own}'unsafe-inline'`,
    `img-src ${own}data: blob:`,
    `font-src ${own}data:`,
  ].join('; ');
}

/** 128 bits from the platform's CSPRNG, fresh for every page. */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

export interface PanelHtml {
  cspSource: string;
  /** The first-paint script (dist/panel/main.js) and the style sheet (media/panel.css), inlined:
   * the page paints without waiting for a single resource request. */
  script: string;
  css: string;
  /** Where the parts loaded after the first paint are (asWebviewUri of dist/panel/, ending in /). */
  assetsUri: string;
  nonce: string;
  mode: WebviewMode;
  title: string;
}

export function panelHtml({ cspSource, script, css, assetsUri, nonce, mode, title }: PanelHtml): string {
  return htmlPage({
    csp: contentSecurityPolicy({ nonce, resourceSource: cspSource }),
    title,
    head: `<style>\n${inlineSafe(css, 'style')}\n</style>`,
    bodyAttributes: `data-mode="${mode}" data-assets="${escapeHtml(assetsUri)}"`,
    // A classic script at the end of the body runs as soon as it is parsed (a module waits for
    // the whole document).
    body: `<script nonce="${nonce}">\n${inlineSafe(script, 'script')}\n</script>`,
  });
}

/** Inline text must not close its element early: `</script` and `</style` are broken up; a source
 * map comment would point nowhere. */
export function inlineSafe(text: string, tag: 'script' | 'style'): string {
  return text.replace(/^\/\/# sourceMappingURL=.*$/m, '').replace(new RegExp(`</(${tag})`, 'gi'), '<\\/$1');
}

/** The page frame shared by the webviews and the standalone reports. `main` is what shows before
 * a script (if any) replaces it. */
export function htmlPage(page: { csp: string; title: string; head: string; bodyAttributes: string; body: string; main?: string }): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(page.csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${escapeHtml(page.title)}</title>
${page.head}
</head>
<body ${page.bodyAttributes}>
<main id="app" aria-live="polite">${page.main ?? '<p class="message">Loading attention…</p>'}</main>
${page.body}
</body>
</html>
`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
