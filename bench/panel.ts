// Time to overview of an n×n attention-weights matrix in the panel, in Debian's Chromium:
// the max pooling to at most 512×512 (src/views/matrixView.ts's viewOf, which the engine worker
// runs next to the result, off the extension host's thread; here in node) of a fast result's weights,
// by the pool_max kernel as the worker does (and, for comparison, in JavaScript), plus, in the
// page, the postMessage of the panel data and plotly drawing the heatmap (dist/panel/; build
// first).
// Targets (issue 5): 4096×4096 under 1.5 s, 512×512 under 0.5 s. Prints a table, or with
// --json one JSON line for bench/run.ts.
import { cpus, loadavg } from 'node:os';
import { maxPoolFast, runAttentionFast } from '../src/core/engine/fast';
import type { PanelState } from '../src/protocol';
import { viewOf } from '../src/views/matrixView';
import { panelDataOf } from '../src/views/model';
import { random } from './inputs';
import { closeChromium, openPanel } from '../test/browser/harness';
import { syntheticResult, syntheticWeights } from '../test/browser/synthetic';

const SIZES = [{ n: 512, targetMs: 500 }, { n: 4096, targetMs: 1500 }];
const RUNS = 3;
/** The first draw in a fresh page (plotly's code not yet optimised) is reported apart. */
const json = process.argv.includes('--json');

/** Page script (text: tsx-compiled functions reference helpers the page lacks): post the data,
 * resolve with the milliseconds until the panel marks the render done. */
const POST_AND_DRAW = `new Promise((resolve) => {
  const before = Number(document.body.dataset.rendered ?? 0);
  const start = performance.now();
  window.postMessage({ type: 'data', data: window.benchData }, '*');
  const poll = () => (Number(document.body.dataset.rendered ?? 0) > before ? resolve(performance.now() - start) : requestAnimationFrame(poll));
  poll();
})`;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value: number) => Math.round(value * 10) / 10;

async function main(): Promise<void> {
  const state: PanelState = { problemIndex: 0, view: 'steps', head: 0, step: 'weights', colorScale: 'Viridis', showNumbers: true, zoom: {} };
  const cases = [];
  try {
    for (const { n, targetMs } of SIZES) {
      const weights = syntheticWeights(n);
      const problem = { index: 0, name: `${n}×${n}`, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, options: { heads: 1, score: 'scaled_dot' as const, dtype: 'float64' as const }, matrices: [] };
      const data = panelDataOf({ uri: 'file:///bench.md', fileName: 'bench.md', problems: [problem], problemIndex: 0, result: syntheticResult(weights) });
      const fast = await runAttentionFast({
        options: { heads: 1, score: 'scaled_dot', dtype: 'float32' },
        Q: random(n, 64, 1, 1),
        K: random(n, 64, 2, 1),
        V: random(n, 64, 3, 1),
      });
      const poolRuns: number[] = [];
      const poolJavaScriptRuns: number[] = [];
      const pageRuns: number[] = [];
      const panel = await openPanel({ state });
      // Hand the data to the page once; each timed run posts it to the panel as the host would.
      await panel.page.evaluate((payload) => {
        (window as unknown as { benchData: unknown }).benchData = payload;
      }, data);
      const coldMs = await panel.page.evaluate<number>(POST_AND_DRAW);
      for (let run = 0; run < RUNS; run++) {
        let started = performance.now();
        viewOf(fast.heads[0].weights, undefined, maxPoolFast);
        poolRuns.push(performance.now() - started);
        started = performance.now();
        viewOf(fast.heads[0].weights);
        poolJavaScriptRuns.push(performance.now() - started);
        pageRuns.push(await panel.page.evaluate<number>(POST_AND_DRAW));
      }
      await panel.close();
      const poolMs = median(poolRuns);
      const pageMs = median(pageRuns);
      cases.push({ n, pooled_to: data.result!.heads[0].weights.rows, pool_ms: round(poolMs), pool_javascript_ms: round(median(poolJavaScriptRuns)), page_render_ms: round(pageMs), cold_page_render_ms: round(coldMs), total_ms: round(poolMs + pageMs), target_ms: targetMs, within_target: poolMs + pageMs < targetMs });
    }
  } finally {
    await closeChromium();
  }
  if (json) {
    console.log(JSON.stringify({ runs: RUNS, statistic: 'median', loadAverage: loadavg().map(round), cases }));
    return;
  }
  console.log(`median of ${RUNS} runs after a cold one; load average ${loadavg().map(round).join(' ')} on ${cpus().length} cores`);
  console.log('n      overview  pool ms (worker)  (in JavaScript)  page render ms  (cold)  total ms  target ms');
  for (const c of cases) {
    console.log(`${String(c.n).padEnd(6)} ${`${c.pooled_to}²`.padEnd(9)} ${String(c.pool_ms).padStart(16)} ${String(c.pool_javascript_ms).padStart(16)} ${String(c.page_render_ms).padStart(15)} ${String(c.cold_page_render_ms).padStart(7)} ${String(c.total_ms).padStart(9)} ${String(c.target_ms).padStart(10)}${c.within_target ? '' : '  (over target)'}`);
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
