// Head scores, rollout, attention flow and the comparison against numpy's implementation of the
// definitions (scripts/gen_head_references.py), on stacks with planted heads.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyseStack, headMeans } from '../../../src/core/heads/analysis';
import { parseHeadsViewMessage } from '../../../src/protocol';
import { difference, ranked } from '../../../src/core/heads/compare';
import { divergences } from '../../../src/core/heads/divergence';
import { attentionFlow, flowRefusal } from '../../../src/core/heads/flow';
import { HEAD_SCORE_NAMES, scoresCsv } from '../../../src/core/heads/scores';
import type { AttentionStack } from '../../../src/core/heads/stack';
import { assertClose, referenceCase, referenceCases, stackOf } from './references';

// The expected values were computed in float64, from the float32-rounded weights for float32
// stacks, which are analysed in float32 (heads/kernels.ts): their tolerance is float32's.
const TOLERANCE = 1e-9;
const ANALYSIS_TOLERANCE = { float64: TOLERANCE, float32: 1e-6 };

describe('head analyses against numpy', () => {
  for (const reference of referenceCases) {
    // All of a layer's heads in one run on the threads, and one or two at a time: runs that
    // alternate between the two sets of slots and add a layer's later groups into its sum.
    it(`${reference.name}: the six scores and the rollout, with 1, 2 and all heads per run`, async () => {
      const stack = stackOf(reference.weights, reference.dtype, reference.ids);
      for (const headsPerGroup of [undefined, 1, 2]) {
        const analysis = await analyseStack(stack, { headsPerGroup });
        const label = `${reference.name} (${headsPerGroup ?? 'all'} per run)`;
        for (const name of HEAD_SCORE_NAMES) {
          assertClose(analysis.scores[name].flat(), reference.expected.scores[name].flat(), ANALYSIS_TOLERANCE[reference.dtype], `${label} ${name}`);
        }
        assert.ok(analysis.rollout);
        assertClose(analysis.rollout, reference.expected.rollout.flat(), ANALYSIS_TOLERANCE[reference.dtype], `${label} rollout`);
      }
    });
  }

  it('analyses a stack in its dtype: the same float32 numbers as float64 take the float64 kernels', async () => {
    const reference = referenceCase('causal-21');
    const single = await analyseStack(stackOf(reference.weights, 'float32', reference.ids));
    const double = await analyseStack(stackOf(reference.weights, 'float64', reference.ids));
    assert.notDeepEqual(single.scores.entropy, double.scores.entropy);
    assert.notDeepEqual(single.rollout, double.rollout);
    assertClose(double.scores.entropy.flat(), reference.expected.scores.entropy.flat(), TOLERANCE, 'entropy in float64');
    assertClose(double.rollout!, reference.expected.rollout.flat(), TOLERANCE, 'rollout in float64');
  });

  for (const dtype of ['float64', 'float32'] as const) {
    it(`a ${dtype} stack lower triangular by construction (a causal model's run) is read only up to each diagonal`, async () => {
      const reference = referenceCase('causal-21');
      const clean = stackOf(reference.weights, dtype, reference.ids);
      // Numbers past the diagonal, were the kernels to read them, would change the entropies and R
      // (the scores summed in JavaScript read only the cells they name, and see them).
      const marked = reference.weights.map((layer) => layer.map((head) => head.map((row, i) => row.map((weight, j) => (j > i ? 0.5 : weight)))));
      const analysis = await analyseStack({ ...stackOf(marked, dtype, reference.ids), lowerTriangular: true });
      const expected = await analyseStack(clean);
      assert.deepEqual(analysis.scores.entropy, expected.scores.entropy);
      assert.deepEqual(analysis.rollout, expected.rollout);
      assertClose(analysis.scores.entropy.flat(), reference.expected.scores.entropy.flat(), ANALYSIS_TOLERANCE[dtype], 'entropy');
      // The same numbers, not said to be lower triangular, are read whole.
      assert.notDeepEqual((await analyseStack(stackOf(marked, dtype, reference.ids))).scores.entropy, expected.scores.entropy);
    });
  }

  it('finds the planted heads: previous-token, sink, induction, duplicate', async () => {
    const reference = referenceCase('planted');
    const { scores } = await analyseStack(stackOf(reference.weights, 'float64', reference.ids));
    const top = (name: (typeof HEAD_SCORE_NAMES)[number]) => ranked(scores[name])[0];
    assert.deepEqual([top('previous_token'), top('first_token'), top('induction'), top('duplicate_token')].map((h) => [h.layer, h.head]), [
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
    ]);
  });

  it('scores without ids leave the token scores null, never 0 or NaN', async () => {
    const reference = referenceCase('no-ids');
    const { scores } = await analyseStack(stackOf(reference.weights, 'float64', null));
    assert.ok(scores.induction.flat().every((value) => value === null));
    assert.ok(scores.duplicate_token.flat().every((value) => value === null));
  });

  for (const name of ['planted', 'flow-bidirectional']) {
    it(`${name}: attention flow equals an Edmonds–Karp max-flow over the layer graph`, () => {
      const reference = referenceCase(name);
      const stack = stackOf(reference.weights, 'float64', reference.ids);
      assertClose(attentionFlow(headMeans(stack), stack.queryCount), reference.expected.flow!.flat(), TOLERANCE, `${name} flow`);
    });
  }

  it('refuses attention flow past its size limit with the limit stated', () => {
    assert.equal(flowRefusal(12, 8), undefined);
    assert.match(flowRefusal(12, 1024) ?? '', /offered up to \d+ tokens for 12 layers.*this input has 1024/);
    assert.throws(() => attentionFlow(Array.from({ length: 12 }, () => new Float64Array(1024 * 1024)), 1024), RangeError);
  });

  for (const dtype of ['float64', 'float32'] as const) {
    it(`compares two ${dtype} runs: Jensen–Shannon divergence per head and B − A`, async () => {
      const reference = referenceCase(dtype === 'float64' ? 'planted' : 'planted-float32');
      const a = stackOf(reference.weights, dtype, reference.ids);
      const b = stackOf(reference.other!, dtype, reference.ids);
      for (const pairsPerGroup of [undefined, 1, 4]) {
        assertClose((await divergences(a, b, pairsPerGroup)).flat(), reference.expected.divergence!.flat(), TOLERANCE, `divergence, ${pairsPerGroup ?? 'all'} pairs per run`);
      }
      assertClose(difference(a, b, 1, 0), reference.expected.difference_1_0!.flat(), TOLERANCE, 'B − A');
      assert.ok((await divergences(a, a)).flat().every((value) => value === 0));
    });
  }

  // divergences has one implementation, the WebAssembly kernel (kernels.ts DivergencePass): these
  // stacks are of a size where a scalar loop would have been plausible, and they are checked at a
  // precision a different summation would not reach everywhere (the rows: kernels.test.ts).
  const pairs = JSON.parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'heads', 'kernels.json'), 'utf8')).divergence as Record<'float64' | 'float32', { a: number[][][]; b: number[][][]; means: number[] }>;
  for (const [name, dtypeA, dtypeB] of [['float64', 'float64', 'float64'], ['float32', 'float32', 'float32'], ['float32 A, float64 B', 'float32', 'float64']] as const) {
    it(`divergences of 3 heads of 37 × 43 (masked rows, zeros on one side, one-hot rows): ${name}, within 1e-15 of numpy`, async () => {
      const { a, b, means } = pairs[dtypeA];
      assertClose((await divergences(stackOf([a], dtypeA, null), stackOf([b], dtypeB, null)))[0], means, 1e-15, `divergence ${name}`);
    });
  }

  it('writes the scores as CSV, a row per head, empty where null; the page may send it for export', async () => {
    const reference = referenceCase('no-ids');
    const csv = scoresCsv((await analyseStack(stackOf(reference.weights, 'float64', null))).scores).trim().split('\n');
    assert.equal(csv[0], 'layer,head,previous_token,duplicate_token,induction,first_token,entropy,local');
    assert.equal(csv.length, 7);
    const [layer, head, previous, duplicate, induction] = csv[4].split(',');
    assert.deepEqual([layer, head, Number(previous), duplicate, induction], ['1', '0', reference.expected.scores.previous_token[1][0], '', '']);
    const message = { type: 'export', format: 'csv', fileName: 'a-head-scores.csv', text: csv.join('\n') };
    assert.deepEqual(parseHeadsViewMessage(message), message);
    assert.equal(parseHeadsViewMessage({ ...message, fileName: '../escape.csv' }), undefined);
  });

  it('refuses a stack whose analysis does not fit WebAssembly\'s 4 GiB, saying up to how many tokens', async () => {
    // A stack of n tokens whose heads are never copied: the refusal comes first. The analysis asks
    // for the first head alone, whose dtype is the analysis's (its numbers are not read).
    const huge = (n: number, dtype: 'float32' | 'float64'): AttentionStack => {
      const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
      let asked = 0;
      const weights = () => (asked++ === 0 ? (dtype === 'float32' ? new Float32Array(0) : new Float64Array(0)) : assert.fail('only the first head is asked for'));
      return { source: { kind: 'saved', file: 'huge' }, tokens, keyTokens: tokens, layerCount: 2, headCount: 2, queryCount: n, keyCount: n, weights };
    };
    // Scores and rollout: two head slots and the rollout's six matrices. 8 × 8192² × 8 B is 4 GiB
    // with nothing else; 8176 tokens leave room for the rest. Float32 matrices take half.
    await assert.rejects(analyseStack(huge(8192, 'float64')), (error: Error) => error instanceof RangeError && /offered up to 8176 tokens \(8 n × n float64 matrices.*this input has 8192/.test(error.message));
    await assert.rejects(analyseStack(huge(11600, 'float32')), (error: Error) => error instanceof RangeError && /offered up to 11568 tokens \(8 n × n float32 matrices.*this input has 11600/.test(error.message));
    // Comparing: a pair of float64 head slots in each of two sets.
    await assert.rejects(divergences(huge(11600, 'float64'), huge(11600, 'float64')), (error: Error) => error instanceof RangeError && /Comparing runs is offered up to 11568 tokens \(4 n × n/.test(error.message));
  });

  it('refuses to compare stacks of different shapes', async () => {
    const planted = referenceCase('planted');
    const small = referenceCase('no-repeat');
    await assert.rejects(divergences(stackOf(planted.weights, 'float64', null), stackOf(small.weights, 'float64', null)), /different shapes: 2 layers × 3 heads × 13×13 against 1 layer × 2 heads × 6×6/);
  });
});
