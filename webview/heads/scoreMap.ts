// A layers × heads map of one value per head (a head score, a divergence) on canvas: layers down,
// heads across, one CELL-pixel square each, coloured from 0 to the map's largest value.
import { RAMP, rampIndex } from './colors';

export const CELL = 22;

/** Cells outside `kept` faded, null cells grey. */
export function drawScoreMap(canvas: HTMLCanvasElement, grid: readonly (readonly (number | null)[])[], kept: (layer: number, head: number) => boolean = () => true): void {
  const layers = grid.length;
  const heads = grid[0]?.length ?? 0;
  canvas.width = heads * CELL;
  canvas.height = layers * CELL;
  const context = canvas.getContext('2d');
  if (!context) return;
  const top = Math.max(0, ...grid.flat().filter((v): v is number => v !== null));
  grid.forEach((row, layer) =>
    row.forEach((value, head) => {
      const at = value === null ? -1 : rampIndex(value, top);
      context.globalAlpha = kept(layer, head) ? 1 : 0.15;
      context.fillStyle = at < 0 ? '#808080' : `rgb(${RAMP[at]}, ${RAMP[at + 1]}, ${RAMP[at + 2]})`;
      context.fillRect(head * CELL, layer * CELL, CELL - 1, CELL - 1);
    }),
  );
  context.globalAlpha = 1;
}

/** The head under a pointer event on the map, or undefined outside its cells. */
export function headAt(canvas: HTMLCanvasElement, event: MouseEvent, layers: number, heads: number): { layer: number; head: number } | undefined {
  const box = canvas.getBoundingClientRect();
  const head = Math.floor(((event.clientX - box.left) / box.width) * heads);
  const layer = Math.floor(((event.clientY - box.top) / box.height) * layers);
  return layer >= 0 && head >= 0 && layer < layers && head < heads ? { layer, head } : undefined;
}
