// The heads page's stack while a model writes (views/liveStack.ts): from the prompt's attention and
// each step's row as the worker sends them, after k steps its every head equals the finished run's
// first rows and keys, its tokens are those with a row, its thumbnails — pooled row by row as the
// rows come — equal poolMap's over the whole maps at every step, in both modes and through block
// changes, and its lines are the worker's top-k. A row that does not follow is refused.
import * as assert from 'node:assert/strict';
import { headLines, poolGrid } from '../../../src/core/heads/pool';
import { generateModel, type PromptAttention } from '../../../src/core/model/generate';
import type { ModelRun } from '../../../src/core/model/run';
import { folderFiles } from '../../../src/node/modelFiles';
import type { AttentionStack } from '../../../src/core/heads/stack';
import type { AttentionRow } from '../../../src/protocol';
import { LiveStack } from '../../../src/views/liveStack';
import { generationReferences, modelFixture } from '../model/fixtures';

/** A step's row as the worker posts it (src/worker/models.ts). */
function rowOf(attention: Float32Array[], position: number): AttentionRow {
  const weights = new Float32Array(attention.reduce((sum, layer) => sum + layer.length, 0));
  attention.reduce((at, layer) => (weights.set(layer, at), at + layer.length), 0);
  return { position: position - 1, layers: attention.length, heads: attention[0].length / position, keys: position, weights };
}

describe('the live stack of a generation', function () {
  this.timeout(60_000);
  let run: ModelRun;
  let prompt: PromptAttention;
  before(async () => {
    const { prompt: ids } = generationReferences()['llama-gqa-bf16'];
    run = await generateModel(folderFiles(modelFixture('llama-gqa-bf16')), { ids }, { maxNewTokens: 4, onPrompt: (attention) => (prompt = attention) });
  });

  it('grows by a row a step, each head equal to the run’s, and answers as the worker pools', async () => {
    const { steps, promptLength } = run.generation!;
    const stack = new LiveStack(prompt as PromptAttention & { weights: Float32Array }, run.tokens.slice(0, promptLength), { kind: 'model', architecture: '', folder: '' });
    assert.equal(stack.queryCount, promptLength - 1);
    const heads = Array.from({ length: run.headCount }, (_, h) => h);
    const layers = Array.from({ length: run.layerCount }, (_, l) => l);
    /** The same weights without the pooling kept row by row: poolGrid pools each whole map (poolMap). */
    const whole = (): AttentionStack => ({ ...stack, source: stack.source, tokens: stack.tokens, keyTokens: stack.tokens, queryCount: stack.queryCount, keyCount: stack.keyCount, lowerTriangular: true, layerCount: stack.layerCount, headCount: stack.headCount, weights: (l, h) => stack.weights(l, h).slice() });
    const samePools = async (label: string) => {
      for (const size of [2, 3, 48]) {
        for (const mode of ['max', 'mean'] as const) {
          const live = await stack.answer({ kind: 'grid', size, mode, layers, heads });
          const expected = await poolGrid(whole(), size, mode, layers, heads);
          assert.ok(live?.kind === 'grid');
          assert.deepEqual({ ...live.grid, data: [] }, { ...expected, data: [] }, `${label} size ${size} ${mode}`);
          live.grid.data.forEach((value, i) => assert.ok(Math.abs(value - expected.data[i]) < 1e-6, `${label} size ${size} ${mode} cell ${i}: ${value} vs ${expected.data[i]}`));
        }
      }
    };
    await samePools('the prompt');
    for (const step of steps) {
      stack.add(rowOf(step.attention, step.position), step.token);
      const n = step.position;
      assert.deepEqual([stack.queryCount, stack.keyCount], [n, n]);
      assert.deepEqual(stack.tokens, run.tokens.slice(0, n));
      for (let layer = 0; layer < run.layerCount; layer++) {
        for (let head = 0; head < run.headCount; head++) {
          const whole = run.weights(layer, head);
          const live = stack.weights(layer, head);
          for (let q = 0; q < n; q++) for (let k = 0; k < n; k++) assert.ok(Math.abs(live[q * n + k] - whole[q * run.keyCount + k]) < 1e-5, `L${layer} H${head} [${q}, ${k}] after step ${step.index}`);
        }
      }
      await samePools(`step ${step.index}`);
    }
    assert.deepEqual(await stack.answer({ kind: 'lines', layer: 1, heads: [0, 2], k: 3 }), { kind: 'lines', lines: headLines(stack, 1, [0, 2], 3) });
    assert.equal(await stack.answer({ kind: 'scores' }), undefined, 'what only the finished run answers');
  });

  it('refuses a row that does not follow the rows it has', () => {
    const { steps, promptLength } = run.generation!;
    const stack = new LiveStack(prompt as PromptAttention & { weights: Float32Array }, run.tokens.slice(0, promptLength), { kind: 'model', architecture: '', folder: '' });
    assert.throws(() => stack.add(rowOf(steps[1].attention, steps[1].position), steps[1].token), /does not follow the \d+ rows had/);
  });
});
