// The host's side of the worker thread, against the real worker (src/worker/main.ts) and engine:
// results equal the reference engine's, a newer run of a document cancels the older, a killed
// worker fails its runs and the next run starts a fresh one, the user's Cancel stops a run for
// sure while other documents' runs survive the restart, and the panel's views and zoomed regions
// come pooled.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAttention } from '../../../src/core/engine';
import { parseDocument } from '../../../src/core/parse';
import { buildSpec } from '../../../src/core/spec';
import type { AttentionSpec } from '../../../src/core/types';
import type { WorkerProblemOutcome } from '../../../src/protocol';
import { viewOf } from '../../../src/views/matrixView';
import { adoptResultView, panelDataOf } from '../../../src/views/model';
import { answerVariants, onDemandViewsOf } from '../../../src/views/variantsOnDemand';
import { AttentionWorker, RunCancelledError } from '../../../src/worker/client';

const root = join(__dirname, '..', '..', '..');

function specOf(example: string): AttentionSpec {
  const [problem] = parseDocument(readFileSync(join(root, 'examples', example), 'utf8')).problems;
  const { spec } = buildSpec(problem);
  assert.ok(spec, `${example} has no computable spec`);
  return spec;
}

function outcomeOf(outcomes: WorkerProblemOutcome[]) {
  const [outcome] = outcomes;
  // (Not JSON.stringify(outcome) as the message: it is built even on success, and a 2048-token
  // result takes seconds to stringify.)
  if (!outcome || !('result' in outcome)) assert.fail(outcome ? outcome.error : 'no outcome');
  return outcome;
}

function resultOf(outcomes: WorkerProblemOutcome[]) {
  return outcomeOf(outcomes).result;
}

describe('worker client', function () {
  this.timeout(60_000);
  const small = specOf('01-worked-example.md');
  const large = specOf('large/2048-tokens.py');
  let worker: AttentionWorker;
  const log: string[] = [];

  beforeEach(() => {
    log.length = 0;
    worker = new AttentionWorker(join(__dirname, 'tsWorker.cjs'), { maxOldGenerationSizeMb: 512 }, (line) => log.push(line));
  });
  afterEach(() => worker.dispose());

  it('starts on first use and returns what the reference engine computes', async () => {
    assert.equal(worker.running, false);
    const result = resultOf(await worker.run('a', [{ index: 0, spec: small }]).outcomes);
    const reference = runAttention(small);
    assert.equal(worker.starts, 1);
    assert.deepEqual(Array.from(result.output.data), Array.from(reference.output.data));
    assert.deepEqual(Array.from(result.heads[0].weights.data), Array.from(reference.heads[0].weights.data));
  });

  it('a newer run of the same document cancels the older; another document is not affected', async () => {
    const older = worker.run('a', [{ index: 0, spec: large }]);
    const other = worker.run('b', [{ index: 0, spec: small }]);
    const newer = worker.run('a', [{ index: 0, spec: small }]);
    await assert.rejects(older.outcomes, RunCancelledError);
    resultOf(await other.outcomes);
    resultOf(await newer.outcomes);
    assert.equal(worker.starts, 1, 'cancelling never restarts the worker');
  });

  it('a killed worker fails its runs with a clear error; the next run starts a fresh worker', async () => {
    const running = worker.run('a', [{ index: 0, spec: large }]);
    await worker.kill();
    await assert.rejects(running.outcomes, /^Error: The attention worker stopped unexpectedly \(exit code \d+\)\. The next run starts a fresh worker\.$/);
    assert.equal(worker.running, false);
    resultOf(await worker.run('a', [{ index: 0, spec: small }]).outcomes);
    assert.equal(worker.starts, 2);
  });

  it("the user's Cancel restarts a worker that does not let go, and re-sends the other documents' runs", async () => {
    const stopped = worker.run('a', [{ index: 0, spec: large }]);
    const other = worker.run('b', [{ index: 0, spec: small }]);
    stopped.stop(0);
    await assert.rejects(stopped.outcomes, RunCancelledError);
    resultOf(await other.outcomes);
    assert.equal(worker.starts, 2);
    assert.ok(log.includes('worker restarted to stop a cancelled run'), log.join('\n'));
  });

  it("sends the panel's views with the result, pooled in the worker: the host adopts them and pools nothing", async () => {
    const { result, view } = outcomeOf(await worker.run('a', [{ index: 0, spec: large }]).outcomes);
    const weights = result.heads[0].weights;
    assert.deepEqual([weights.rows, view.heads[0].weights.rows, view.heads[0].weights.rowBlock], [2048, 512, 4]);
    assert.deepEqual(view.heads[0].weights, viewOf(weights));
    assert.deepEqual(view.layerOutput, viewOf(result.output));
    adoptResultView(result, view);
    const problem = parseDocument(readFileSync(join(root, 'examples', 'large/2048-tokens.py'), 'utf8')).problems[0];
    const data = panelDataOf({ uri: 'file:///2048.py', fileName: '2048-tokens.py', problems: [problem], problemIndex: 0, result });
    assert.equal(data.result, view, 'the host built its own views instead of adopting the worker\'s');
  });

  it('pools the regions the panel zooms into in the worker, answered while a run computes', async () => {
    const { result } = outcomeOf(await worker.run('a', [{ index: 0, spec: large }]).outcomes);
    const weights = result.heads[0].weights;
    assert.ok(weights.data.buffer instanceof SharedArrayBuffer, 'a fast result, shared with the worker');
    const pooled = { rowStart: 100, rowEnd: 1900, colStart: 0, colEnd: 2048 };
    const exact = { rowStart: 5, rowEnd: 40, colStart: 1500, colEnd: 2000 };
    const order: string[] = [];
    const running = worker.run('b', [{ index: 0, spec: large }]).outcomes.then(() => order.push('run'));
    const views = await Promise.all([pooled, exact].map((region) => worker.regionOf(weights, region).then((view) => (order.push('region'), view))));
    await running;
    assert.deepEqual(order, ['region', 'region', 'run'], 'a zoom waited for the run');
    assert.deepEqual(views[0], viewOf(weights, pooled));
    assert.deepEqual([views[0].rows, views[0].rowBlock, views[0].cols, views[0].colBlock], [450, 4, 512, 4]);
    assert.deepEqual(views[1], viewOf(weights, exact));
    assert.deepEqual([views[1].rows, views[1].rowBlock, views[1].cols, views[1].colBlock], [35, 1, 500, 1]);
    assert.equal(worker.starts, 1);
  });

  it('a zoom pending when the worker dies fails with the clear error', async () => {
    const { result } = outcomeOf(await worker.run('a', [{ index: 0, spec: large }]).outcomes);
    const running = worker.run('b', [{ index: 0, spec: large }]);
    const region = worker.regionOf(result.heads[0].weights, { rowStart: 0, rowEnd: 2048, colStart: 0, colEnd: 2048 });
    await worker.kill();
    await assert.rejects(region, /The attention worker stopped unexpectedly/);
    await assert.rejects(running.outcomes, /The attention worker stopped unexpectedly/);
  });

  it('a larger run carries what its Variants and FlashAttention tabs ask for; the worker answers, or refuses in words, on demand', async () => {
    const text = readFileSync(join(root, 'examples', 'large/512-tokens.py'), 'utf8').replace('# attention: name="512 tokens"', '# attention: heads=2 causal softcap=3');
    const { spec } = buildSpec(parseDocument(text).problems[0]);
    const { result, view } = outcomeOf(await worker.run('a', [{ index: 0, spec: spec! }]).outcomes);
    assert.deepEqual(view.onDemand, onDemandViewsOf(spec!, result).onDemand);
    assert.ok(view.onDemand && !view.variants && !view.flash, 'nothing of the tabs is computed with the run');
    assert.equal(outcomeOf(await worker.run('b', [{ index: 0, spec: small }]).outcomes).view.onDemand, undefined, 'a small run has its views whole');
    const side = view.onDemand.tileSides[1];
    const flash = await worker.variantsOf(spec!, { kind: 'flash', head: 1, tileSide: side, queryTile: 3 }, result.heads[1].output);
    assert.deepEqual(flash, answerVariants(spec!, { kind: 'flash', head: 1, tileSide: side, queryTile: 3 }, result.heads[1].output));
    const variants = await worker.variantsOf(spec!, { kind: 'variants', head: 0 });
    assert.deepEqual(variants, answerVariants(spec!, { kind: 'variants', head: 0 }));
    await assert.rejects(worker.variantsOf(spec!, { kind: 'variants', head: 2 }), /^Error: head 3 does not exist: this problem has 2 heads$/);
    await assert.rejects(worker.variantsOf(spec!, { kind: 'flash', head: 0, tileSide: side, queryTile: 999 }, result.heads[0].output), /query tile 999 does not exist/);
    assert.equal(worker.starts, 1, 'a refusal is an answer, not a failed worker');
  });

  it('a problem the engine rejects is an error outcome, not a failed worker', async () => {
    const broken: AttentionSpec = { ...small, WQ: [{ rows: 3, cols: 2, data: new Float64Array(6) }] };
    const [outcome] = await worker.run('a', [{ index: 0, spec: broken }]).outcomes;
    assert.ok(outcome && 'error' in outcome && outcome.error.length > 0, JSON.stringify(outcome));
    resultOf(await worker.run('a', [{ index: 0, spec: small }]).outcomes);
    assert.equal(worker.starts, 1);
  });
});
