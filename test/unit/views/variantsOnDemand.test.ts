// A larger problem's Variants and FlashAttention views, as the worker computes them on demand
// (views/variantsOnDemand.ts): one head's views, pooled to small overviews, and one query tile's
// walk, checked against the reference engine's full run of the same problem (itself checked
// against numpy in test/unit/engine); and the questions the problem cannot answer, refused.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runAttention } from '../../../src/core/engine';
import { matmulTransB, zeros } from '../../../src/core/engine/kernels';
import { alibiSlopes } from '../../../src/core/engine/variants';
import { parseDocument } from '../../../src/core/parse';
import { buildSpec } from '../../../src/core/spec';
import type { AttentionResult, AttentionSpec, Matrix, Problem } from '../../../src/core/types';
import { viewOf } from '../../../src/views/matrixView';
import { scaled } from '../../../src/views/variantsModel';
import { answerVariants, MAX_WALK_STEPS, onDemandViewsOf, tileSidesOf, VARIANT_CELLS_PER_SIDE } from '../../../src/views/variantsOnDemand';
import type { MatrixView, VariantsAnswer } from '../../../src/protocol';

const LARGE = readFileSync(path.join(__dirname, '..', '..', '..', 'examples', 'large', '512-tokens.py'), 'utf8');

/** The 512-token example (d_model 32) under another directive, run by the reference engine. */
function run(directive: string, tokens = 512): { problem: Problem; spec: AttentionSpec; result: AttentionResult } {
  const text = LARGE.replace('# attention: name="512 tokens"', `# attention: ${directive}`);
  // The first `tokens` rows of X: each row of the example is one line.
  const lines = text.split('\n');
  const first = lines.findIndex((line) => line.startsWith('X = '));
  const cut = [...lines.slice(0, first + 1 + tokens), '])', ...lines.slice(lines.indexOf('])', first) + 1)].join('\n');
  const problem = parseDocument(cut).problems[0];
  const { spec, diagnostics } = buildSpec(problem);
  assert.deepEqual(diagnostics.filter((d) => d.severity === 'error'), []);
  return { problem, spec: spec!, result: runAttention(spec!) };
}

const pooled = (m: Matrix) => viewOf(m, undefined, undefined, VARIANT_CELLS_PER_SIDE);

function assertClose(actual: MatrixView | undefined, expected: MatrixView, tolerance: number, what: string): void {
  assert.ok(actual, `${what} is there`);
  const { data, ...shape } = actual;
  const { data: expectedData, ...expectedShape } = expected;
  assert.deepEqual(shape, expectedShape, `${what}: shape and pooling`);
  expectedData.forEach((x, p) => assert.ok(x === data[p] || Math.abs(x - data[p]) <= tolerance, `${what} cell ${p}: ${data[p]} against ${x}`));
}

const variantsOf = (answer: VariantsAnswer) => {
  assert.equal(answer.kind, 'variants');
  return answer as Extract<VariantsAnswer, { kind: 'variants' }>;
};

describe('panel: the Variants and FlashAttention views of a larger problem, on demand', function () {
  this.timeout(60_000);
  const rich = run('heads=2 rope softcap=2 alibi causal window=100');

  it('a larger result carries what the page needs to ask, and nothing computed; a small one none', () => {
    const { onDemand } = onDemandViewsOf(rich.spec, rich.result);
    assert.ok(onDemand);
    assert.equal(onDemand.conventions.length, 4, onDemand.conventions.join(' | '));
    assert.deepEqual([onDemand.queries, onDemand.keys], [512, 512]);
    assert.deepEqual(onDemand.tileSides, tileSidesOf(512));
    assert.ok(onDemand.tileSides.every((side) => Math.ceil(512 / side) <= MAX_WALK_STEPS));
    const small = run('heads=2 rope', 48);
    assert.deepEqual(onDemandViewsOf(small.spec, small.result), {});
  });

  it('the second head: scores before and after RoPE, before and after the softcap, its ALiBi bias and the mask, pooled alike', () => {
    const head = rich.result.heads[1];
    const { variants, steps, head: asked } = variantsOf(answerVariants(rich.spec, { kind: 'variants', head: 1 }));
    assert.equal(asked, 1);
    assert.equal(variants.heads.length, 1);
    const [mine] = variants.heads;
    const unturned = zeros(head.Q.rows, head.K.rows, 'float64');
    matmulTransB(unturned, head.Q, head.K);
    assertClose(mine.unrotatedScores, pooled(unturned), 1e-12, 'before RoPE');
    assertClose(steps.scores, pooled(head.scores), 1e-12, 'after RoPE');
    assert.equal(steps.scores!.rowBlock, 512 / VARIANT_CELLS_PER_SIDE, 'pooled to the cards’ side');
    const scale = 1 / Math.sqrt(head.Q.cols);
    assertClose(mine.uncapped, pooled(scaled(head.scores, scale)), 1e-12, 'before the cap');
    assertClose(steps.scaled, pooled(head.scaled), 1e-12, 'after the cap');
    // masked = capped + ALiBi + mask: where the mask lets through, the bias is masked − scaled.
    const bias = zeros(head.masked.rows, head.masked.cols, 'float64');
    assert.equal(mine.alibi?.slope, alibiSlopes(2)[1], 'head 2’s slope');
    const slope = mine.alibi!.slope;
    head.masked.data.forEach((x, p) => (bias.data[p] = Number.isFinite(x) ? x - head.scaled.data[p] : -slope * Math.abs(Math.floor(p / 512) - (p % 512))));
    assertClose(mine.alibi!.bias, pooled(bias), 1e-9, 'ALiBi');
    const visible = zeros(512, 512, 'float64');
    head.mask!.data.forEach((x, p) => (visible.data[p] = x === -Infinity ? 0 : 1));
    assertClose(variants.mask?.visible, pooled(visible), 0, 'mask');
    const blocked = Array.from(head.mask!.data).filter((x) => x === -Infinity).length;
    assert.equal(variants.mask!.blockedShare, blocked / head.mask!.data.length);
  });

  it('a decode step: each head’s step beside its full run’s weights, equal to their last row', () => {
    const decode = run('heads=2 causal decode rope');
    for (const h of [0, 1]) {
      const { variants, steps } = variantsOf(answerVariants(decode.spec, { kind: 'variants', head: h }));
      assertClose(variants.heads[0].decodeFull, pooled(decode.result.decode!.fullWeights[h]), 1e-12, `head ${h + 1}'s full run`);
      assertClose(steps.weights, pooled(decode.result.heads[h].weights), 1e-12, `head ${h + 1}'s step`);
      assert.equal(variants.decode?.row, 511);
      assert.ok(variants.decode!.maxDifference <= 1e-12, String(variants.decode!.maxDifference));
    }
  });

  for (const score of ['scaled_dot', 'gaussian']) {
    it(`${score}: the walk of one query tile of one head ends in that head’s output rows, in a bounded number of steps`, () => {
      const { spec, result } = run(`heads=2 causal alibi score=${score}`);
      const side = tileSidesOf(512)[0];
      for (const [head, queryTile] of [[1, 0], [1, 37], [0, 63]]) {
        const output = result.heads[head].output;
        const answer = answerVariants(spec, { kind: 'flash', head, tileSide: side, queryTile }, output);
        assert.equal(answer.kind, 'flash');
        const { walk } = answer as Extract<VariantsAnswer, { kind: 'flash' }>;
        assert.equal(walk.steps.length, Math.ceil(512 / side));
        assert.ok(walk.steps.length <= MAX_WALK_STEPS);
        assert.ok(walk.steps.every((step) => step.queryStart === queryTile * side && step.queryEnd === (queryTile + 1) * side));
        walk.steps.at(-1)!.partial.forEach((row, r) => row.forEach((x, c) => {
          const expected = output.data[(queryTile * side + r) * output.cols + c];
          assert.ok(Math.abs(x - expected) <= 1e-12, `head ${head + 1}, query ${queryTile * side + r + 1}: ${x} against ${expected}`);
        }));
        assert.ok(walk.maxDifference <= 1e-12, String(walk.maxDifference));
      }
    });
  }

  it('refuses, in words, a head, tile side or query tile the problem does not have', () => {
    const output = rich.result.heads[0].output;
    const side = tileSidesOf(512)[0];
    assert.throws(() => answerVariants(rich.spec, { kind: 'variants', head: 2 }), /^RangeError: head 3 does not exist: this problem has 2 heads$/);
    assert.throws(() => answerVariants(rich.spec, { kind: 'flash', head: 7, tileSide: side, queryTile: 0 }, output), /head 8 does not exist/);
    assert.throws(() => answerVariants(rich.spec, { kind: 'flash', head: 0, tileSide: 3, queryTile: 0 }, output), new RegExp(`tiles of 3 are not offered: ${tileSidesOf(512).join(', ')}`));
    assert.throws(() => answerVariants(rich.spec, { kind: 'flash', head: 0, tileSide: side, queryTile: 512 / side }, output), new RegExp(`query tile ${512 / side} does not exist: tiles of ${side} rows make ${512 / side}`));
  });
});
