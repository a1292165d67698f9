// The worker's side of the model view, timed in this process on a saved attentions file:
// `npx tsx bench/headsPooling.ts FILE [--rounds N]` reads it as the worker does
// (loadSavedAttentions), then answers the page's queries with the worker's own code (answerQuery):
// the grid of every layer × head pooled to 48-px thumbnails (max and mean), and one head opened
// in full. Prints one JSON line of CPU and wall milliseconds (medians over the rounds), for
// bench/heads.mjs to print beside what the page measured.
import { loadSavedAttentions } from '../src/core/heads/load';
import type { HeadsQuery } from '../src/protocol';
import { answerQuery } from '../src/views/heads';

const file = process.argv[2];
const at = process.argv.indexOf('--rounds');
const rounds = at === -1 ? 3 : Number(process.argv[at + 1]);

/** CPU (user + system) and wall time of `work`, ms. */
function timed(work: () => unknown): { cpuMs: number; wallMs: number } {
  const cpu = process.cpuUsage();
  const started = performance.now();
  work();
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - started };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

let stack!: ReturnType<typeof loadSavedAttentions>['stack'];
const load = timed(() => {
  stack = loadSavedAttentions(file, { maxElements: 2 ** 28 }).stack;
});
const all = (count: number) => Array.from({ length: count }, (_, i) => i);
const queries: Record<string, HeadsQuery> = {
  gridMax: { kind: 'grid', size: 48, mode: 'max', layers: all(stack.layerCount), heads: all(stack.headCount) },
  gridMean: { kind: 'grid', size: 48, mode: 'mean', layers: all(stack.layerCount), heads: all(stack.headCount) },
  head: { kind: 'head', layer: stack.layerCount - 1, head: stack.headCount - 1 },
};
const times: Record<string, { cpuMs: number; wallMs: number }[]> = { gridMax: [], gridMean: [], head: [] };
// Interleaved: each round asks every query once.
for (let round = 0; round < rounds; round++) for (const [name, query] of Object.entries(queries)) times[name].push(timed(() => answerQuery(stack, query)));
const summary = Object.fromEntries(Object.entries(times).map(([name, list]) => [name, { cpuMs: median(list.map((t) => t.cpuMs)), wallMs: median(list.map((t) => t.wallMs)) }]));
process.stdout.write(`${JSON.stringify({ load, ...summary })}\n`);
