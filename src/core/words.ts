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
