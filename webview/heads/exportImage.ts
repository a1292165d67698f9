// PNG and SVG of the model view's grid and of the head view. PNG is the canvas as drawn. SVG is
// built as markup text: the grid's thumbnails as embedded PNG images with their labels, the head
// view's drawn lines as <line> elements; tokens are escaped text.
import { shownToken } from '../../src/core/words';
import type { HeadsViewToHost, StackInfo } from '../../src/protocol';
import { headColor } from './colors';

export function pngBase64(canvas: HTMLCanvasElement): string {
  return canvas.toDataURL('image/png').slice('data:image/png;base64,'.length);
}

/** A stack's title as the stem of an exported file's name. */
export function fileStem(title: string): string {
  return title.replace(/[^\w.-]+/g, '_').replace(/^\.+/, '');
}

/** The host's export of a map's canvas: PNG as drawn, or SVG holding it under `title`. */
export function canvasExport(canvas: HTMLCanvasElement, format: 'png' | 'svg', fileName: string, title: string): HeadsViewToHost {
  return format === 'png' ? { type: 'export', format, fileName, base64: pngBase64(canvas) } : { type: 'export', format, fileName, text: gridSvg(canvas, title) };
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** The grid canvas as one embedded image (the thumbnails are pixels already), at the size it
 * shows (CSS pixels) with the image at the backing store's resolution (crisp on HiDPI). */
export function gridSvg(canvas: HTMLCanvasElement, title: string): string {
  const width = canvas.clientWidth || canvas.width;
  const height = canvas.clientHeight || canvas.height;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
<title>${escape(title)}</title>
<image width="${width}" height="${height}" href="${canvas.toDataURL('image/png')}"/>
</svg>
`;
}

/** The head view's lines as vectors, one row per token. */
export function linesSvg(info: StackInfo, lines: { head: number; query: number; key: number; weight: number }[], title: string): string {
  const row = 16;
  const column = 150;
  const span = 240;
  const rows = Math.max(info.queryCount, info.keyCount);
  const y = (index: number) => index * row + row / 2;
  const parts = lines.map(({ head, query, key, weight }) =>
    `<line x1="${column}" y1="${y(query)}" x2="${column + span}" y2="${y(key)}" stroke="${headColor(head)}" stroke-opacity="${weight.toFixed(3)}" stroke-width="2"/>`);
  const text = (tokens: string[], x: number, anchor: string) =>
    tokens.map((token, i) => `<text x="${x}" y="${y(i)}" text-anchor="${anchor}" dominant-baseline="middle">${escape(shownToken(token))}</text>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * column + span}" height="${rows * row}" font-family="sans-serif" font-size="12">
<title>${escape(title)}</title>
${parts.join('\n')}
${text(info.tokens, column - 6, 'end').join('\n')}
${text(info.keyTokens, column + span + 6, 'start').join('\n')}
</svg>
`;
}
