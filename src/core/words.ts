// Words for counts and sizes in messages, shared by the core, the host and the pages (no imports:
// a page's bundle takes nothing else with it).

/** "1 head", "12 heads". */
export function quantity(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** Bytes in binary units: 1 MiB = 2²⁰ B (a 512×512 float32 matrix is exactly 1 MiB). */
export function formatBytes(value: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  const power = Math.min(units.length - 1, Math.max(0, Math.floor(Math.log2(Math.max(value, 1)) / 10)));
  return `${power === 0 ? value : (value / 1024 ** power).toPrecision(3)} ${units[power]}`;
}

/**
 * A token as the pages show it: as written (`<s>` stays `<s>`), but with the whitespace a tokenizer
 * marks — byte-level BPE's Ġ, Ċ and ĉ, SentencePiece's ▁ — and newlines and tabs shown as ␣, ↵ and
 * ⇥, as a model run's own labels are (core/model/tokenizer.ts). Spaces inside a label a person
 * wrote stay spaces.
 */
export function shownToken(token: string): string {
  return token.replace(/[Ġ▁]/g, '␣').replace(/[Ċ\n]/g, '↵').replace(/[ĉ\t]/g, '⇥');
}

/** Below this many CSS pixels between the labels of an axis, 11 px labels overlap. */
export const LABEL_PITCH = 13;

/**
 * The step between an axis's labels, in tokens: every token when `pitch` (CSS px per drawn cell of
 * `block` tokens) leaves room for each, else the smallest 1, 2 or 5 × 10ⁿ tokens (a multiple of the
 * block) whose labels are at least `room` px apart.
 */
export function labelStep(pitch: number, block: number, room = LABEL_PITCH): number {
  const cellsNeeded = Math.max(1, Math.ceil(room / Math.max(pitch, 1e-9) - 1e-9));
  if (cellsNeeded === 1) return block;
  const least = cellsNeeded * block;
  for (let decade = 1; decade <= least * 10; decade *= 10) {
    for (const nice of [1, 2, 5]) {
      const step = nice * decade;
      if (step >= least && step % block === 0) return step;
    }
  }
  return least;
}
