// Every head at once, in the real editor (issue 26's speed targets): code-server + Debian's
// Chromium, driven as the end-to-end tests drive it (test/e2e/workbench.mjs), at 128 / 512 / 1024
// tokens on 12 layers × 12 heads, for
//   - saved attentions: a torch.save of torch.stack(outputs.attentions), [12, 1, 12, n, n] float32
//     (scripts/gen_saved_attentions.py --bench --tokens n, into test-output/heads-bench/n/), opened
//     in the tensor file view; the bench presses its "Show heads";
//   - a GPT-2-small-shaped model run (124M random weights, scripts/gen_model_fixtures.py --bench,
//     into test-output/models-bench/bench/gpt2-small): a note's "▶ Run model" CodeLens.
// It prints what the page stamps itself (webview/heads/grid.ts: body[data-stack-at] when the
// stack's description arrived, the grid canvas's data-timing when the pooled grid arrived, was
// painted and reached the screen, and its bytes), so no poll from outside adds to a figure:
//   - gesture → model view on screen (the press on Show heads / Run model → next frame after paint),
//   - stack arrived (a model run's end, seen from the page) → on screen,
//   - grid data arrived → on screen (the target: ≤ 500 ms), and the bytes of that grid,
//   - hover: mouse event → tooltip written, and → the next frame (target ≤ 16 ms), median and
//     worst of HOVERS moves over the grid,
//   - click on a thumbnail → that head's heatmap on screen in the same page (target ≤ 300 ms,
//     stamped inside it); for a model run also → the head's weights card in the step-by-step panel,
//     another webview (polled from outside every 20 ms),
//   - the worker's pooling of the grid (max and mean) and of one opened head, CPU and wall time of
//     the worker's own code in a node process on the same file (bench/headsPooling.ts).
// Last, BertViz's figures as issue 26 quotes them, measured outside this project.
// A benchmark, not a test: it asserts nothing. Usage, on the bundles users get:
//   node esbuild.mjs --production && node bench/heads.mjs [--rounds N] [--case TEXT]
// (npm run bench:heads). --case filters by "saved 512", "model 128", …
/* global document, window, requestAnimationFrame */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { openFile, openQuickInput, openWorkbench, pickQuickItem, pressCodeLens, webviewFrame, webviewFrames } from '../test/e2e/workbench.mjs';

const root = join(import.meta.dirname, '..');
const argument = (flag) => (process.argv.includes(flag) ? process.argv[process.argv.indexOf(flag) + 1] : undefined);
const ROUNDS = Number(argument('--rounds') ?? 1);
const CASE_FILTER = argument('--case') ?? '';
const TOKENS = [128, 512, 1024];
const HOVERS = 32;
const savedFolder = (n) => join(root, 'test-output', 'heads-bench', String(n));
const savedName = (n) => `attn-12x12x${n}.pt`;
const modelsFolder = join(root, 'test-output', 'models-bench');
const gpt2Folder = join(modelsFolder, 'bench', 'gpt2-small');
/** The grid's geometry at its default thumbnail (webview/heads/grid.ts). */
const LABEL = 28;
const SIDE = 48;
const GAP = 6;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 1 : 0) : '–');
/** The same deterministic ids as bench/model-latency.mjs: inside GPT-2's vocabulary. */
const idsOf = (n) => Array.from({ length: n }, (_, i) => 100 + ((i * 7919) % 50000));

function ensureInputs() {
  for (const n of TOKENS) {
    if (existsSync(join(savedFolder(n), savedName(n)))) continue;
    console.log(`writing ${savedName(n)} (scripts/gen_saved_attentions.py --bench --tokens ${n})…`);
    spawnSync('/usr/bin/python3', [join(root, 'scripts', 'gen_saved_attentions.py'), '--bench', '--tokens', String(n)], { stdio: 'inherit' });
  }
  if (!existsSync(join(gpt2Folder, 'config.json')) && !CASE_FILTER.startsWith('saved')) {
    console.log('writing the benchmark models (scripts/gen_model_fixtures.py --bench)…');
    spawnSync('/usr/bin/python3', [join(root, 'scripts', 'gen_model_fixtures.py'), modelsFolder, '--bench'], { stdio: 'inherit' });
  }
}

/** A workbench given 3 minutes to load, opened again when it did not (on a shared machine at load 30, 30 s passed). */
async function openWorkbenchPatiently(options) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await openWorkbench({ ...options, loadTimeoutMs: 180_000 });
    } catch (error) {
      if (attempt === 3) throw error;
      console.log(`  the workbench did not load (${error.message.split('\n')[0]}); opening it again`);
    }
  }
}

/** Quick Open, asked again while the workbench is still indexing the folder (a loaded machine: 30 s passed). */
async function quickOpenPatiently(page, name) {
  for (let attempt = 1; ; attempt++) {
    await openQuickInput(page, 'Control+P');
    try {
      return await pickQuickItem(page, name);
    } catch (error) {
      if (attempt === 5) throw error;
      await page.keyboard.press('Escape');
    }
  }
}

/** The page's own stamps: stack arrival, grid arrival / painted / on screen, bytes. */
async function gridTiming(frame) {
  return frame.evaluate(() => ({ stackAt: Number(document.body.dataset.stackAt), ...JSON.parse(document.getElementById('grid-canvas').dataset.timing) }));
}

/** HOVERS mouse moves over the grid's thumbnails that the page answers (points outside the webview's
 * visible box are skipped: at 1024 tokens the lower layers can be below it); per move, ms from the
 * event to the tooltip written and to the next frame. */
async function hovers(page, frame) {
  await frame.evaluate(() => {
    const canvas = document.getElementById('grid-canvas');
    const seen = [];
    window.attentionLensBenchHovers = seen;
    // The first listener of all (the window's, capturing): when the page's thread took the event up.
    let dispatchedAt = 0;
    window.addEventListener('mousemove', () => (dispatchedAt = performance.now()), { capture: true });
    // Added after the grid's own listener, so it runs once the tooltip is written.
    canvas.addEventListener('mousemove', (event) => {
      const answeredAt = performance.now();
      const tooltip = document.getElementById('grid-tooltip');
      const text = tooltip.hidden ? '' : tooltip.textContent;
      requestAnimationFrame(() => {
        const frameAt = performance.now();
        // Then the frame's style, layout and paint: the first task after the frame's callbacks.
        setTimeout(() => seen.push({
          waited: dispatchedAt - event.timeStamp, handled: answeredAt - dispatchedAt, answered: answeredAt - event.timeStamp, shown: frameAt - event.timeStamp,
          rendered: performance.now() - frameAt, text,
        }));
      });
    });
  });
  const box = await frame.locator('#grid-canvas').boundingBox();
  const visible = await (await frame.frameElement()).boundingBox();
  const inside = (x, y) => x > visible.x && x < visible.x + visible.width && y > visible.y && y < visible.y + visible.height;
  // Each move waits for the page's answer before the next: Chromium coalesces mouse moves that
  // fall in one frame, and a loaded machine's frames are longer than the 30 ms between moves.
  const answeredSoFar = () => frame.evaluate(() => window.attentionLensBenchHovers.filter((hover) => hover.text !== '').length);
  for (let i = 0; (await answeredSoFar()) < HOVERS && i < 4 * HOVERS; i++) {
    const l = (i * 5) % 12;
    const h = (i * 7) % 12;
    const x = box.x + LABEL + h * (SIDE + GAP) + ((i * 13) % SIDE);
    const y = box.y + LABEL + l * (SIDE + GAP) + ((i * 29) % SIDE);
    if (!inside(x, y)) continue;
    const before = await frame.evaluate(() => window.attentionLensBenchHovers.length);
    await page.mouse.move(x, y);
    await frame.waitForFunction((n) => window.attentionLensBenchHovers.length > n, before, { timeout: 1000 }).catch(() => {});
    await page.waitForTimeout(30);
  }
  await page.waitForTimeout(100);
  const seen = await frame.evaluate(() => window.attentionLensBenchHovers);
  const answered = seen.filter((hover) => hover.text !== '');
  const worstOf = (key) => Math.max(...answered.map((h) => h[key]));
  const medianOf = (key) => median(answered.map((h) => h[key]));
  const slowest = answered.reduce((a, b) => (b.shown > a.shown ? b : a), answered[0] ?? {});
  return {
    count: answered.length, answered: medianOf('answered'), shown: medianOf('shown'), worst: worstOf('shown'),
    // Where a hover's time goes: waiting for the page's thread (frame alignment, other work, the
    // machine's load), the grid's handler (the page's own code), the frame's rendering after it.
    waited: medianOf('waited'), waitedWorst: worstOf('waited'), handled: medianOf('handled'), handledWorst: worstOf('handled'), rendered: medianOf('rendered'), renderedWorst: worstOf('rendered'), slowest,
  };
}

/** Where a thumbnail is, in the workbench page's coordinates. */
async function thumbnailPoint(frame, layer, head) {
  const box = await frame.locator('#grid-canvas').boundingBox();
  return { x: box.x + LABEL + head * (SIDE + GAP) + SIDE / 2, y: box.y + LABEL + layer * (SIDE + GAP) + SIDE / 2 };
}

/** Stamps, inside the heads page, when the next click's head answer arrives and its heatmap is inserted and on screen. */
async function stampOpenedHead(frame, layer, head) {
  await frame.evaluate(([selector]) => {
    const canvas = document.getElementById('grid-canvas');
    // When the head's answer reached the page: what the click waited for the host and the
    // worker, apart from the page's own drawing after it.
    let answeredAt;
    window.addEventListener('message', (event) => {
      if (answeredAt === undefined && event.data?.type === 'answer' && event.data.answer?.kind === 'head') answeredAt = performance.now();
    });
    window.attentionLensBenchOpened = new Promise((resolve) => {
      canvas.addEventListener('click', (event) => {
        const clickedAt = event.timeStamp;
        const observer = new window.MutationObserver(() => {
          if (!document.querySelector(selector)) return;
          observer.disconnect();
          const inserted = performance.now() - clickedAt;
          requestAnimationFrame(() => resolve({ answered: answeredAt - clickedAt, inserted, shown: performance.now() - clickedAt }));
        });
        observer.observe(document.body, { childList: true, subtree: true });
      }, { once: true });
    });
  }, [`#heads-head[data-layer="${layer}"][data-head="${head}"] #head-canvas`]);
}

/** A saved file's head opens in the same page: click → its heatmap on screen, stamped inside the page. */
async function clickToHeatmap(page, frame, layer, head) {
  await stampOpenedHead(frame, layer, head);
  const { x, y } = await thumbnailPoint(frame, layer, head);
  await page.mouse.click(x, y);
  return frame.evaluate(() => window.attentionLensBenchOpened);
}

/** A model run's head opens the same way, then step by step in the attention panel, another
 * webview: click → the heatmap in the page (stamped there), and → the panel's weights card (polled every 20 ms). */
async function clickToModelHeatmap(page, frame, layer, head) {
  const selector = 'section.card.heatmap[data-key="weights"]';
  const before = new Set();
  for (const candidate of await webviewFrames(page)) if (await candidate.$(selector).catch(() => null)) before.add(candidate);
  await stampOpenedHead(frame, layer, head);
  const { x, y } = await thumbnailPoint(frame, layer, head);
  const clicked = Date.now();
  await page.mouse.click(x, y);
  const opened = await frame.evaluate(() => window.attentionLensBenchOpened);
  const deadline = clicked + 300_000;
  while (Date.now() < deadline) {
    for (const candidate of await webviewFrames(page)) {
      if (!before.has(candidate) && (await candidate.$(selector).catch(() => null))) {
        const panel = Date.now() - clicked;
        // The panel page's own stamps (webview/main.ts): its document made, its script running, its
        // first paint, the host's post of the head's result, that result in the page and painted
        // (the weights card with its numbers on screen: the figure issue 45 asks ≤ 300 ms of).
        await candidate.waitForFunction(() => JSON.parse(document.body.dataset.startup || '{}').resultPaintedAt !== undefined, undefined, { timeout: 60_000 }).catch(() => {});
        const startup = JSON.parse((await candidate.evaluate(() => document.body.dataset.startup)) || '{}');
        const at = (key) => startup[key] - clicked;
        const again = await clickAgain(page, frame, candidate);
        return { ...opened, panel, panelDocument: at('documentAt'), panelScript: at('scriptAt'), panelPainted: at('paintedAt'), panelSent: at('resultSentAt'), panelResult: at('resultAt'), panelNumbers: at('resultPaintedAt'), panelBytes: startup.resultBytes, again };
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { ...opened, panel: NaN };
}

/** A second click (layer 2 head 3) with the panel's page already made: click → the first frame
 * that paints the panel's next render (the new head's numbers: the host posts only once the head's
 * result is stored). */
async function clickAgain(page, heads, panel) {
  await page.waitForTimeout(1000);
  await panel.evaluate(() => {
    window.attentionLensBenchAgain = new Promise((resolve) => {
      const seen = document.body.dataset.painted;
      const observer = new window.MutationObserver(() => {
        if (document.body.dataset.painted === seen) return;
        observer.disconnect();
        requestAnimationFrame(() => resolve(performance.timeOrigin + performance.now()));
      });
      observer.observe(document.body, { attributes: true, attributeFilter: ['data-painted'] });
    });
  });
  // The first click scrolled its heatmap, below the grid, into view.
  await heads.evaluate(() => window.scrollTo(0, 0));
  const { x, y } = await thumbnailPoint(heads, 2, 3);
  const clicked = Date.now();
  await page.mouse.click(x, y);
  const paintedAt = await Promise.race([panel.evaluate(() => window.attentionLensBenchAgain), new Promise((resolve) => setTimeout(() => resolve(NaN), 30_000))]);
  return paintedAt - clicked;
}

/** Once the gesture at `pressed` was made: the model view's times, hovers, and a click on layer 5 head 7 (`clickHead`). */
async function measureHeadsPage(workbench, pressed, timeoutMs, clickHead) {
  const { page } = workbench;
  const heads = await webviewFrame(page, '#grid-canvas[data-timing]', timeoutMs);
  const timing = await gridTiming(heads);
  const hover = await hovers(page, heads);
  const opened = await clickHead(page, heads, 5, 7);
  return { toScreen: timing.shownAt - pressed, stackToScreen: timing.shownAt - timing.stackAt, dataToScreen: timing.shownAt - timing.receivedAt, bytes: timing.bytes, hover, click: opened.shown, clickAnswered: opened.answered, clickInserted: opened.inserted, clickPanel: opened.panel, panelDocument: opened.panelDocument, panelScript: opened.panelScript, panelPainted: opened.panelPainted, panelSent: opened.panelSent, panelResult: opened.panelResult, panelNumbers: opened.panelNumbers, panelBytes: opened.panelBytes, panelAgain: opened.again, errors: workbench.pageErrors };
}

async function savedRound(n) {
  const folder = savedFolder(n);
  const workbench = await openWorkbenchPatiently({
    files: {
      [`heads-bench/${savedName(n)}`]: readFileSync(join(folder, savedName(n))),
      'heads-bench/tokens.json': readFileSync(join(folder, 'tokens.json')),
      // The tensor view reads the file before it offers Show heads: 12 × 12 × 1024² is 151 M numbers.
      '.vscode/settings.json': JSON.stringify({ 'attentionLens.maxMatrixElements': 2 ** 28 }),
    },
  });
  try {
    const { page } = workbench;
    await quickOpenPatiently(page, savedName(n));
    const tensorView = await webviewFrame(page, '#show-heads', 300_000);
    const button = await tensorView.locator('#show-heads').boundingBox();
    const pressed = Date.now();
    await page.mouse.click(button.x + button.width / 2, button.y + button.height / 2);
    return await measureHeadsPage(workbench, pressed, 600_000, clickToHeatmap);
  } finally {
    await workbench.close();
  }
}

async function modelRound(n) {
  const note = `# ${n} tokens\n<!-- attention: model="${gpt2Folder}" ids="${idsOf(n).join(' ')}" -->\n`;
  const workbench = await openWorkbenchPatiently({ files: { 'heads-latency.md': note } });
  try {
    const { page } = workbench;
    await openFile(page, 'heads-latency.md');
    const pressed = await pressCodeLens(page, '▶ Run model');
    return await measureHeadsPage(workbench, pressed, 900_000, clickToModelHeatmap);
  } finally {
    await workbench.close();
  }
}

/** The worker's code on the same file, in a node process: CPU and wall ms. */
function workerPooling(n) {
  const out = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'headsPooling.ts'), join(savedFolder(n), savedName(n)), '--rounds', '3'], { cwd: root, encoding: 'utf8', maxBuffer: 2 ** 24 });
  if (out.status !== 0) throw new Error(`headsPooling.ts failed: ${out.stderr.slice(-2000)}`);
  return JSON.parse(out.stdout.trim().split('\n').at(-1));
}

function printRound(label, rounds) {
  const pick = (get) => median(rounds.map(get));
  const hover = `${ms(pick((r) => r.hover.answered))} / ${ms(pick((r) => r.hover.shown))} (worst ${ms(pick((r) => r.hover.worst))}, ${pick((r) => r.hover.count)} moves)`;
  console.log(
    `${label.padEnd(16)} | ${ms(pick((r) => r.toScreen)).padStart(7)} | ${ms(pick((r) => r.stackToScreen)).padStart(7)} | ${ms(pick((r) => r.dataToScreen)).padStart(6)} | ${hover.padEnd(32)} | ${ms(pick((r) => r.click)).padStart(6)} | ${(pick((r) => r.bytes) / 1e6).toFixed(2)} MB`,
  );
  const h = rounds[Math.floor(rounds.length / 2)].hover;
  console.log(`${''.padEnd(16)}   hover, median / worst ms: waiting for the page's thread ${ms(h.waited)} / ${ms(h.waitedWorst)}, the grid's handler ${ms(h.handled)} / ${ms(h.handledWorst)}, the frame's rendering after ${ms(h.rendered)} / ${ms(h.renderedWorst)}; the slowest hover: waited ${ms(h.slowest.waited)}, handled ${ms(h.slowest.handled)}, on screen ${ms(h.slowest.shown)}`);
  if (rounds.every((r) => r.clickAnswered !== undefined)) {
    console.log(`${''.padEnd(16)}   the click: answer in the page after ${ms(pick((r) => r.clickAnswered))}, heatmap inserted after ${ms(pick((r) => r.clickInserted))}`);
  }
  if (rounds.every((r) => r.clickPanel !== undefined)) {
    console.log(`${''.padEnd(16)}   then the step-by-step panel: its page made after ${ms(pick((r) => r.panelDocument))}, its script running ${ms(pick((r) => r.panelScript))}, first painted ${ms(pick((r) => r.panelPainted))};`);
    console.log(`${''.padEnd(16)}   the head's result posted by the host ${ms(pick((r) => r.panelSent))}, in the page ${ms(pick((r) => r.panelResult))}, its numbers on screen ${ms(pick((r) => r.panelNumbers))} (target ≤ 300 ms); weights card seen from outside ${ms(pick((r) => r.clickPanel))} (polled)`);
    console.log(`${''.padEnd(16)}   (a negative time: before the click; the page is made when the model view is first on screen); that post's numbers: ${(pick((r) => r.panelBytes) / 1e6).toFixed(2)} MB`);
    console.log(`${''.padEnd(16)}   a second click, the panel's page already made: its numbers on screen after ${ms(pick((r) => r.panelAgain))}`);
  }
  const errors = rounds.flatMap((r) => r.errors);
  if (errors.length) console.log(`  page errors: ${errors.join('; ')}`);
}

ensureInputs();
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
console.log(`${cpus()[0].model}, ${cpus().length} cores, load average ${load()} (at the start)`);
console.log('12 layers × 12 heads; ms, median of rounds; the page stamps its own times (see the header of bench/heads.mjs)');
console.log('case             | gesture | stack → | data → | hover: answered / on screen        | click → | grid posted');
console.log('                 | → shown |   shown |  shown |                                    | heatmap |');
for (const [kind, round] of [['saved', savedRound], ['model', modelRound]]) {
  for (const n of TOKENS) {
    const label = `${kind} ${n}`;
    if (!label.includes(CASE_FILTER)) continue;
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await round(n));
    printRound(label, rounds);
  }
}
console.log(`load average ${load()} (at the end of the editor cases)`);
console.log('\nThe worker\'s code on the saved files, in one node process (bench/headsPooling.ts): CPU / wall ms, median of 3');
console.log('tokens | read file       | grid, max       | grid, mean      | one head opened');
for (const n of TOKENS) {
  if (!`saved ${n}`.includes(CASE_FILTER)) continue;
  const t = workerPooling(n);
  const pair = (x) => `${ms(x.cpuMs)} / ${ms(x.wallMs)}`.padEnd(15);
  console.log(`${String(n).padStart(6)} | ${pair(t.load)} | ${pair(t.gridMax)} | ${pair(t.gridMean)} | ${pair(t.head)}`);
}
console.log(`load average ${load()}`);
console.log(`
The outside anchor, measured outside this project (issue 26; BertViz is not installed here):
BertViz 1.4.1 model_view in headless Chromium, 12 layers × 12 heads (SVG, one element per line and cell):
   128 tokens: 33.5 s to paint (2.4 M SVG elements, 5.6 GB in the page's process); hover 94 ms; click → a head's detail 3.1 s
   512 tokens: a blank page (its inline script is over V8's maximum string length)
  1024 tokens: the page crashes`);
process.exit(0);
