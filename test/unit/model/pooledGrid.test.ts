// The model view's grid of a model run comes from the thumbnails its forward pooled, with no head
// recomputed: equal to pooling the float64 PyTorch reference's attentions (every fixture, both
// engines: the fast path's head groups, the reference engine's softcap and windows), and, on a
// longer input whose blocks hold several weights, to pooling the heads recomputed in full.
import { strict as assert } from 'node:assert';
import { poolGrid } from '../../../src/core/heads/pool';
import type { AttentionStack } from '../../../src/core/heads/stack';
import { runModel } from '../../../src/core/model/run';
import { folderFiles } from '../../../src/node/modelFiles';
import { DEFAULT_THUMBNAIL_SIDE, type PoolMode } from '../../../src/protocol';
import { stackOf } from '../heads/references';
import { MODEL_FIXTURES, modelFixture, modelReference, REFERENCE_TOLERANCE } from './fixtures';

const all = (count: number) => Array.from({ length: count }, (_, i) => i);

/** The stack with its full heads refused: a grid drawn from it used only the kept thumbnails. */
function keptOnly(stack: AttentionStack): AttentionStack {
  return {
    ...stack,
    weights: (layer, head) => {
      throw new Error(`layer ${layer} head ${head} was recomputed`);
    },
    headGroups: (layer) => Promise.reject(new Error(`layer ${layer}'s heads were recomputed`)),
  };
}

function worstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

describe('a model run\'s grid from the thumbnails pooled in its forward', function () {
  this.timeout(300_000);
  before(() => modelFixture('gpt2'));

  for (const name of MODEL_FIXTURES) {
    it(`${name}: equals pooling the reference's attentions, max and mean, with no head recomputed`, async () => {
      const reference = modelReference(name);
      const run = await runModel(folderFiles(modelFixture(name)), { ids: reference.token_ids });
      const expected = stackOf(reference.attentions, 'float64', reference.token_ids);
      for (const mode of ['max', 'mean'] as PoolMode[]) {
        const grid = await poolGrid(keptOnly(run), DEFAULT_THUMBNAIL_SIDE, mode, all(run.layerCount), all(run.headCount));
        const want = await poolGrid(expected, DEFAULT_THUMBNAIL_SIDE, mode, all(run.layerCount), all(run.headCount));
        const worst = worstDifference(grid.data, want.data);
        assert.ok(worst <= REFERENCE_TOLERANCE.attention, `${mode}: off by ${worst}`);
      }
    });
  }

  it('blocks of several weights (64 tokens in 48 cells): equal to pooling each head recomputed in full', async () => {
    const ids = Array.from({ length: 64 }, (_, i) => 100 + ((i * 7919) % 50000));
    const run = await runModel(folderFiles(modelFixture('gpt2')), { ids });
    for (const mode of ['max', 'mean'] as PoolMode[]) {
      const grid = await poolGrid(keptOnly(run), DEFAULT_THUMBNAIL_SIDE, mode, all(run.layerCount), all(run.headCount));
      assert.deepEqual([grid.rowBlock, grid.colBlock, grid.rows], [2, 2, 32]);
      const recomputed = await poolGrid({ ...run, pooled: undefined }, DEFAULT_THUMBNAIL_SIDE, mode, all(run.layerCount), all(run.headCount));
      const worst = worstDifference(grid.data, recomputed.data);
      assert.ok(worst <= 1e-6, `${mode}: off by ${worst}`);
      // Recomputed a layer at a time (headGroups) or head by head: the same numbers.
      assert.deepEqual(recomputed, await poolGrid({ ...run, pooled: undefined, headGroups: undefined }, DEFAULT_THUMBNAIL_SIDE, mode, all(run.layerCount), all(run.headCount)));
    }
    // Another size is pooled from the heads, as before.
    await assert.rejects(poolGrid(keptOnly(run), 16, 'max', [0], [0]), /layer 0 head 0 was recomputed/);
  });
});
