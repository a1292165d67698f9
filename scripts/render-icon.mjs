// Draws media/icon.png (128×128, the marketplace icon): a causal attention-weight heatmap — each
// row a softmax over the keys it may see, in Viridis, the panel's default colour scale — under a
// lens. The SVG is generated here and rendered by Debian's Chromium, so the icon can be redrawn.
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { launchChromium } from './lib/browser.mjs';

const repoRoot = resolve(dirname(new URL(import.meta.url).pathname), '..');
const SIZE = 128;
const N = 6;

// Viridis at 0, .25, .5, .75, 1 (matplotlib's values), interpolated linearly.
const VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
function viridis(t) {
  const x = Math.min(Math.max(t, 0), 1) * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(x), VIRIDIS.length - 2);
  const f = x - i;
  const [r, g, b] = VIRIDIS[i].map((c, k) => Math.round(c + (VIRIDIS[i + 1][k] - c) * f));
  return `rgb(${r},${g},${b})`;
}

/** Causal softmax weights of a toy score pattern: each query favours itself and the first key. */
function weights() {
  return Array.from({ length: N }, (_, i) => {
    const scores = Array.from({ length: N }, (_, j) => (j > i ? -Infinity : j === i ? 1.6 : j === 0 ? 1.0 : 0.2 * j));
    const max = Math.max(...scores);
    const exps = scores.map((s) => Math.exp(s - max));
    const sum = exps.reduce((a, b) => a + b, 0);
    return exps.map((e) => e / sum);
  });
}

function svg() {
  const margin = 14;
  const gap = 3;
  const cell = (SIZE - 2 * margin - (N - 1) * gap) / N;
  const cells = weights().flatMap((row, i) => row.map((w, j) => {
    const x = margin + j * (cell + gap);
    const y = margin + i * (cell + gap);
    // Masked cells (above the diagonal) stay dark: the mask is part of the picture.
    const fill = j > i ? '#2a2540' : viridis(Math.sqrt(w));
    return `<rect x="${x}" y="${y}" width="${cell}" height="${cell}" rx="2.5" fill="${fill}"/>`;
  }));
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}" viewBox="0 0 ${SIZE} ${SIZE}">
  <rect width="${SIZE}" height="${SIZE}" rx="22" fill="#17142a"/>
  ${cells.join('\n  ')}
  <circle cx="80" cy="80" r="27" fill="rgba(255,255,255,0.10)" stroke="#ffffff" stroke-width="6"/>
  <line x1="100" y1="100" x2="118" y2="118" stroke="#ffffff" stroke-width="10" stroke-linecap="round"/>
</svg>`;
}

const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: SIZE, height: SIZE } });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg()}</body></html>`);
  const png = await page.locator('svg').screenshot({ omitBackground: true });
  writeFileSync(join(repoRoot, 'media', 'icon.png'), png);
  console.log(`media/icon.png: ${png.length} bytes`);
} finally {
  await browser.close();
}
