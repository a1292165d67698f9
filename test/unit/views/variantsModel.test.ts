// The FlashAttention views the panel receives (views/variantsModel.ts): a walk for every head,
// whatever the score function, each ending in its own head's output.
import assert from 'node:assert/strict';
import { runAttention } from '../../../src/core/engine';
import { parseDocument } from '../../../src/core/parse';
import { buildSpec } from '../../../src/core/spec';
import { variantViewsOf } from '../../../src/views/variantsModel';

const note = (score: string) => `attention: heads=2 causal score=${score}
X = [[1, 0, 2, -1], [0, 1, -1, 2], [1, 1, 0, 0], [2, -1, 1, 1], [0, 2, 1, -2]]
W_Q = [[1, 0, 0.5, 0], [0, 1, 0, -1], [1, 0, 1, 0], [0, 1, 0, 1]]
W_K = [[0, 1, 1, 0], [1, 0, 0, 1], [0.5, 0, 1, 0], [0, -1, 0, 1]]
W_V = [[1, 2, 0, 1], [0, 1, 1, 0], [1, 0, 2, 1], [2, 1, 0, 1]]
W_a = [[1, 0.5], [0, 1]]
`;

describe('panel: the FlashAttention views of every head', () => {
  for (const score of ['scaled_dot', 'general', 'gaussian']) {
    it(`${score}: one list of walks per head, the last step of each walk giving that head's output`, () => {
      const problem = parseDocument(note(score)).problems[0];
      const { spec, diagnostics } = buildSpec(problem);
      assert.deepEqual(diagnostics.filter((d) => d.severity === 'error'), []);
      const result = runAttention(spec!);
      const { flash } = variantViewsOf(problem, result);
      assert.equal(flash?.length, 2);
      flash!.forEach((walks, h) => {
        assert.ok(walks.length > 0, `head ${h + 1} has walks`);
        const output = result.heads[h].output;
        for (const walk of walks) {
          assert.ok(walk.maxDifference <= 1e-12, `head ${h + 1}, tiles of ${walk.tileRows}: ${walk.maxDifference}`);
          const last = walk.steps.at(-1)!;
          last.partial.forEach((row, r) => row.forEach((x, c) => {
            const expected = output.data[(last.queryStart + r) * output.cols + c];
            assert.ok(Math.abs(x - expected) <= 1e-12, `head ${h + 1} row ${last.queryStart + r}`);
          }));
        }
      });
      assert.notDeepEqual(flash![0][0].steps.at(-1)!.partial, flash![1][0].steps.at(-1)!.partial, 'the heads differ');
    });
  }
});
