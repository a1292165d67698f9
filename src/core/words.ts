// Words for counts in messages, shared by the core, the host and the pages (no imports: a page's
// bundle takes nothing else with it).

/** "1 head", "12 heads". */
export function quantity(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
