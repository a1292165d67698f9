// The first paint of a heatmap, before plotly has loaded: the same cells in the same colours and
// place as the plot that replaces it — coloured boxes with their numbers for small matrices, one
// pixel per cell, scaled, for large ones. Drawn with the DOM and a canvas only, in microseconds.
import { cellText } from './format';
import type { ThemeColors } from './theme';
import type { PanelState } from '../src/protocol';

/** plotly's own stops of the named colour scales the panel offers, so that the plot replacing
 * this preview shows the very same colours. */
const SCALES: Record<Exclude<PanelState['colorScale'], 'Theme'>, [number, string][]> = {
  Viridis: [[0, '#440154'], [0.0627, '#48186a'], [0.1255, '#472d7b'], [0.1882, '#424086'], [0.251, '#3b528b'], [0.3137, '#33638d'], [0.3765, '#2c728e'], [0.4392, '#26828e'], [0.502, '#21918c'], [0.5647, '#1fa088'], [0.6275, '#28ae80'], [0.6902, '#3fbc73'], [0.7529, '#5ec962'], [0.8157, '#84d44b'], [0.8784, '#addc30'], [0.9412, '#d8e219'], [1, '#fde725']],
  Cividis: [[0, 'rgb(0,32,76)'], [0.058824, 'rgb(0,42,102)'], [0.117647, 'rgb(0,52,110)'], [0.176471, 'rgb(39,63,108)'], [0.235294, 'rgb(60,74,107)'], [0.294118, 'rgb(76,85,107)'], [0.352941, 'rgb(91,95,109)'], [0.411765, 'rgb(104,106,112)'], [0.470588, 'rgb(117,117,117)'], [0.529412, 'rgb(131,129,120)'], [0.588235, 'rgb(146,140,120)'], [0.647059, 'rgb(161,152,118)'], [0.705882, 'rgb(176,165,114)'], [0.764706, 'rgb(192,177,109)'], [0.823529, 'rgb(209,191,102)'], [0.882353, 'rgb(225,204,92)'], [0.941176, 'rgb(243,219,79)'], [1, 'rgb(255,233,69)']],
  Blues: [[0, 'rgb(5,10,172)'], [0.35, 'rgb(40,60,190)'], [0.5, 'rgb(70,100,245)'], [0.6, 'rgb(90,120,245)'], [0.7, 'rgb(106,137,247)'], [1, 'rgb(220,220,220)']],
  Greys: [[0, 'rgb(0,0,0)'], [1, 'rgb(255,255,255)']],
  RdBu: [[0, 'rgb(5,10,172)'], [0.35, 'rgb(106,137,247)'], [0.5, 'rgb(190,190,190)'], [0.6, 'rgb(220,170,132)'], [0.7, 'rgb(230,145,90)'], [1, 'rgb(178,10,28)']],
};

type Rgb = [number, number, number];

/** Any CSS colour as RGB, read back through a canvas (which normalises what it is given). */
const toRgb = (() => {
  const context = document.createElement('canvas').getContext('2d');
  return (color: string): Rgb => {
    if (!context) return [128, 128, 128];
    context.fillStyle = '#808080';
    context.fillStyle = color;
    const normal = context.fillStyle;
    if (normal.startsWith('#')) return [1, 3, 5].map((i) => parseInt(normal.slice(i, i + 2), 16)) as Rgb;
    const parts = /rgba?\(([^)]*)\)/.exec(normal)?.[1].split(',').map(Number) ?? [128, 128, 128];
    return [parts[0], parts[1], parts[2]];
  };
})();

/** The colour at t ∈ [0, 1] of a scale (linear between stops, as plotly interpolates). */
function colorAt(stops: [number, Rgb][], t: number): Rgb {
  const clamped = Math.min(1, Math.max(0, t));
  for (let i = 1; i < stops.length; i++) {
    const [t1, c1] = stops[i];
    if (clamped <= t1) {
      const [t0, c0] = stops[i - 1];
      const f = t1 === t0 ? 0 : (clamped - t0) / (t1 - t0);
      return [0, 1, 2].map((k) => Math.round(c0[k] + f * (c1[k] - c0[k]))) as Rgb;
    }
  }
  return stops[stops.length - 1][1];
}

export interface PreviewRange {
  scale: 'weights' | 'values' | 'mask';
  zmin: number;
  zmax: number;
}

/** A colour for each value: the plot's scale over [zmin, zmax]; for masks blocked vs allowed. */
function painter(range: PreviewRange, colorScale: PanelState['colorScale'], colors: ThemeColors): (value: number) => Rgb | undefined {
  if (range.scale === 'mask') {
    const [blocked, allowed] = [toRgb(colors.blocked), toRgb(colors.background)];
    return (value) => (value === -Infinity ? blocked : allowed);
  }
  const named = colorScale === 'Theme' ? [[0, colors.background], [1, colors.accent]] as [number, string][] : SCALES[colorScale];
  const stops = named.map(([t, color]) => [t, toRgb(color)] as [number, Rgb]);
  const span = range.zmax - range.zmin || 1;
  return (value) => (Number.isFinite(value) ? colorAt(stops, (value - range.zmin) / span) : undefined);
}

/** Steps of the colour table: adjacent levels differ by under one unit of any channel. */
const LEVELS = 1024;

/** `colorOf` through a table of LEVELS colours over [zmin, zmax] (masks have two colours already). */
function levelsOf(range: PreviewRange, colorOf: (value: number) => Rgb | undefined): (value: number) => Rgb | undefined {
  if (range.scale === 'mask') return colorOf;
  const span = range.zmax - range.zmin || 1;
  const table = Array.from({ length: LEVELS }, (_, level) => colorOf(range.zmin + (level / (LEVELS - 1)) * span));
  return (value) => {
    if (!Number.isFinite(value)) return undefined;
    const t = (value - range.zmin) / span;
    return table[Math.round((t <= 0 ? 0 : t >= 1 ? 1 : t) * (LEVELS - 1))];
  };
}

const css = ([r, g, b]: Rgb) => `rgb(${r},${g},${b})`;
/** Light text on dark cells, dark on light (what plotly does for texttemplate). */
const textOn = ([r, g, b]: Rgb) => (0.299 * r + 0.587 * g + 0.114 * b > 150 ? '#000' : '#fff');

export interface PreviewInput {
  rows: number;
  cols: number;
  data: ArrayLike<number>;
  range: PreviewRange;
  colorScale: PanelState['colorScale'];
  colors: ThemeColors;
  /** Print the numbers in the cells (small matrices). */
  numbers: boolean;
}

/** The preview element; it fills the plot area of the plot div it is placed in (panel.css). */
export function heatmapPreview({ rows, cols, data, range, colorScale, colors, numbers }: PreviewInput): HTMLElement {
  const colorOf = painter(range, colorScale, colors);
  const area = document.createElement('div');
  area.className = 'preview';
  area.setAttribute('aria-hidden', 'true');
  if (numbers) {
    area.classList.add('preview-cells');
    area.style.gridTemplateColumns = `repeat(${cols}, 1fr)`;
    area.style.gridTemplateRows = `repeat(${rows}, 1fr)`;
    for (let i = 0; i < rows * cols; i++) {
      const value = data[i];
      const cell = document.createElement('span');
      const color = colorOf(value);
      if (color) {
        cell.style.background = css(color);
        cell.style.color = textOn(color);
      }
      cell.textContent = range.scale === 'mask' ? (value === -Infinity ? '✕' : '') : cellText(value);
      area.append(cell);
    }
    return area;
  }
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, cols);
  canvas.height = Math.max(1, rows);
  const context = canvas.getContext('2d');
  if (context && rows > 0 && cols > 0) {
    const image = context.createImageData(cols, rows);
    const pixels = image.data;
    // A table of the scale's colours: a 512² matrix took ~50 ms through colorOf cell by cell.
    const colorAtLevel = levelsOf(range, colorOf);
    for (let i = 0; i < rows * cols; i++) {
      const color = colorAtLevel(data[i]);
      if (!color) continue; // transparent: plotly leaves a gap for blocked (−∞) cells
      pixels[i * 4] = color[0];
      pixels[i * 4 + 1] = color[1];
      pixels[i * 4 + 2] = color[2];
      pixels[i * 4 + 3] = 255;
    }
    context.putImageData(image, 0, 0);
  }
  area.append(canvas);
  return area;
}
