// A perceptual colour ramp for canvas drawing (viridis, from its published stops) and the head
// view's per-head colours. Canvas needs RGB triples, not a plotly colour scale name.

const VIRIDIS: [number, number, number][] = [
  [68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
  [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37],
];

/** 256 RGB entries of the ramp, flat (r, g, b per entry). */
export const RAMP: Uint8ClampedArray = (() => {
  const table = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const at = (i / 255) * (VIRIDIS.length - 1);
    const low = Math.floor(at);
    const high = Math.min(low + 1, VIRIDIS.length - 1);
    const t = at - low;
    for (let c = 0; c < 3; c++) table[i * 3 + c] = VIRIDIS[low][c] + (VIRIDIS[high][c] - VIRIDIS[low][c]) * t;
  }
  return table;
})();

/** The ramp's entry for value / top (top ≤ 0: the lowest colour). */
export function rampIndex(value: number, top: number): number {
  return top > 0 ? Math.max(0, Math.min(255, Math.round((value / top) * 255))) * 3 : 0;
}

/** A distinct hue per head (golden-angle steps), as CSS colours. */
export function headColor(head: number): string {
  return `hsl(${Math.round((head * 137.508) % 360)}, 70%, 50%)`;
}

/** The diverging scale of a difference: blue at −limit, white at 0, red at +limit (ColorBrewer's RdBu ends). */
const NEGATIVE: [number, number, number] = [33, 102, 172];
const ZERO: [number, number, number] = [247, 247, 247];
const POSITIVE: [number, number, number] = [178, 24, 43];

/** RGB of `value` on the symmetric scale [−limit, +limit] (clamped; limit ≤ 0: white). */
export function divergingColor(value: number, limit: number): [number, number, number] {
  const t = limit > 0 ? Math.max(-1, Math.min(1, value / limit)) : 0;
  const end = t < 0 ? NEGATIVE : POSITIVE;
  const share = Math.abs(t);
  return [0, 1, 2].map((c) => Math.round(ZERO[c] + (end[c] - ZERO[c]) * share)) as [number, number, number];
}
