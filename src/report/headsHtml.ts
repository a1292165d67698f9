// The standalone HTML report of a heads page (a model run, saved attentions or a multi-head
// problem): the model view — every layer × head as the page drew it, one PNG — with what the
// grid shows (layers, heads, tokens, how each cell was pooled) and how the stack was read. No
// script at all: the CSP allows only this page's own style and the embedded image, so the file
// opens offline in any browser and fetches nothing.
import { quantity } from '../core/words';
import type { StackInfo } from '../protocol';
import { escapeHtml, htmlPage, newNonce } from '../views/html';

export interface HeadsReport {
  info: StackInfo;
  /** The grid canvas as PNG (base64) and its size in CSS pixels (the PNG may hold more pixels:
   * HiDPI screens draw at their device pixel ratio, and the image keeps that sharpness). */
  png: string;
  width: number;
  height: number;
  /** The page's legend: what each thumbnail and cell is. */
  legend: string;
}

const STYLE = `body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1f1f1f; background: #fff; }
.meta { color: #555; }
img { image-rendering: pixelated; max-width: 100%; height: auto; }`;

export function renderHeadsReportHtml({ info, png, width, height, legend }: HeadsReport): string {
  const nonce = newNonce();
  const shape = `${quantity(info.layerCount, 'layer')} × ${quantity(info.headCount, 'head')} · ${info.queryCount} queries × ${info.keyCount} keys`;
  const notes = info.notes.length ? `<ul class="meta" id="heads-notes">${info.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join('')}</ul>` : '';
  const main = `<header><h1>${escapeHtml(info.title)}</h1><p class="meta">${escapeHtml(shape)}</p>${notes}</header>
<section id="heads-model"><h2>Model view</h2><p class="meta" id="grid-legend">${escapeHtml(legend)}</p>
<img id="grid-image" src="data:image/png;base64,${png}" width="${width}" height="${height}" alt="${escapeHtml(`Every layer × head of ${info.title}: ${shape}`)}"></section>`;
  return htmlPage({
    csp: ["default-src 'none'", `style-src 'nonce-${nonce}'`, 'img-src data:'].join('; '),
    title: `Heads: ${info.title}`,
    head: `<meta name="generator" content="Attention Lens">\n<style nonce="${nonce}">\n${STYLE}\n</style>`,
    bodyAttributes: 'data-mode="heads-report"',
    body: '',
    main,
  });
}
