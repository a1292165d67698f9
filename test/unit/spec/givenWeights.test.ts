import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAttention } from '../../../src/core/engine/index';
import { runAttentionFast } from '../../../src/core/engine/fast';
import { classifyName } from '../../../src/core/parse/names';
import { parseDocument } from '../../../src/core/parse/index';
import { buildSpec } from '../../../src/core/spec';
import type { AttentionResult, Diagnostic } from '../../../src/core/types';
import { rangeOf } from '../parse/helpers';

// Attention weights given beside the problem (role `weights`): the notes and the expected
// differences come from PyTorch and numpy (scripts/gen_given_weights.py).

const DIR = join(__dirname, '..', '..', 'fixtures', 'given-weights');
const expected = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8')) as Record<string, { heads: number; maxAbsDifference: number[]; rowSumsMaxError: number }>;

function problemsOf(text: string) {
  const { problems, diagnostics } = parseDocument(text);
  assert.deepEqual(diagnostics, [], 'the text itself must read cleanly');
  return problems;
}

function errors(text: string): Diagnostic[] {
  const problems = problemsOf(text);
  return buildSpec(problems[0]).diagnostics.filter((d) => d.severity === 'error');
}

const X = 'X = [[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]]';
const W = '[[1, 0], [0, 1], [1, 0], [0, 1]]';
const projections = `${X}\nW_Q = ${W}\nW_K = ${W}\nW_V = ${W}\n`;
const A33 = '[[0.2, 0.3, 0.5], [0.1, 0.8, 0.1], [1, 0, 0]]';

describe('given attention weights (role weights)', () => {
  it('reads the names programs give their weights, with or without a head, and leaves other names alone', () => {
    for (const name of ['attn', 'attn_weights', 'attention_weights', 'attention_probs', 'attn_probs', 'p_attn', 'weights', 'ATTN_WEIGHTS']) {
      assert.deepEqual(classifyName(name), { kind: 'matrix', role: 'weights' }, name);
    }
    assert.deepEqual(classifyName('attn_weights1'), { kind: 'matrix', role: 'weights', head: 0 });
    assert.deepEqual(classifyName('attn^{(2)}'), { kind: 'matrix', role: 'weights', head: 1 });
    assert.deepEqual(classifyName('weights[0]'), { kind: 'matrix', role: 'weights', head: 0 });
    assert.deepEqual(classifyName('p_attn_h3'), { kind: 'matrix', role: 'weights', head: 2 });
    for (const name of ['weight', 'A', 'a', 'attn_weights0', 'W_Q', 'W_1', 'mask', 'attn_mask']) {
      assert.notEqual((classifyName(name) as { role?: string }).role, 'weights', name);
    }
    assert.deepEqual(classifyName('attn_mask'), { kind: 'matrix', role: 'mask' });
  });

  for (const [file, fast] of [['mha.md', false], ['mha.md', true], ['unscaled.md', false]] as const) {
    it(`${file}${fast ? ' (WebAssembly engine)' : ''}: each head's given weights beside the computed ones, max |given − computed| as numpy finds it`, async () => {
      const [problem] = problemsOf(readFileSync(join(DIR, file), 'utf8'));
      const { spec, diagnostics } = buildSpec(problem);
      assert.deepEqual(diagnostics.filter((d) => d.severity !== 'info'), []);
      assert.ok(spec?.weights);
      const result: AttentionResult = fast ? await runAttentionFast(spec, { referenceBelowFlops: 0 }) : runAttention(spec);
      assert.equal(result.givenOnly, undefined);
      assert.equal(result.heads.length, expected[file].heads);
      result.heads.forEach((head, h) => {
        assert.deepEqual(head.givenWeights, spec.weights?.[h]);
        const want = expected[file].maxAbsDifference[h];
        const got = head.givenMaxDifference as number;
        // The engine's weights agree with numpy's to float64 (or float32 for the fast engine's) rounding.
        assert.ok(Math.abs(got - want) <= (fast ? 1e-6 : 1e-12) * Math.max(1, want), `head ${h + 1}: ${got} vs numpy ${want}`);
      });
    });
  }

  it('weights alone are shown as they are, per head, with the row-sum check on them', () => {
    const problems = problemsOf(readFileSync(join(DIR, 'mha.md'), 'utf8'));
    const alone = problems[1];
    const { spec, diagnostics } = buildSpec(alone);
    assert.ok(spec);
    assert.deepEqual(diagnostics.map((d) => d.code), ['weights-only']);
    const result = runAttention(spec);
    assert.equal(result.givenOnly, true);
    assert.equal(result.heads.length, 2);
    result.heads.forEach((head, h) => assert.deepEqual(head.weights, alone.matrices[h].value));
    assert.ok(Math.abs(result.checks.rowSumsMaxError - expected['mha.md'].rowSumsMaxError) < 1e-15);
    assert.equal(result.checks.rowsSumToOne, true);
  });

  it('a head whose weights are not queries × keys: one error at that definition, naming both shapes', () => {
    const text = `# attention: heads=2\n${projections}attn_weights1 = [[0.5, 0.5, 0], [0, 1, 0], [0, 0, 1]]\nattn_weights2 = [[0.5, 0.5], [0, 1], [1, 0]]\n`;
    const found = errors(text);
    assert.equal(found.length, 1, JSON.stringify(found));
    assert.equal(found[0].code, 'shape-mismatch');
    assert.deepEqual(found[0].range, rangeOf(text, 'attn_weights2'));
    assert.equal(found[0].message, 'attn_weights2 is 3×2 but the weights computed here are 3×3 (queries × keys): the given weights are compared with them entry by entry.');
  });

  it('one weight matrix for two heads, and weights for three heads of two: errors at the weights', () => {
    let text = `# attention: heads=2\n${projections}attn = ${A33}\n`;
    let found = errors(text);
    assert.equal(found.length, 1, JSON.stringify(found));
    assert.deepEqual(found[0].range, rangeOf(text, 'attn'));
    assert.match(found[0].message, /^attn is one 3×3 matrix but there are 2 heads: give the weights of each head \(attn1 … attn2\)/);
    text = `# attention: heads=2\n${projections}weights1 = ${A33}\nweights2 = ${A33}\nweights3 = ${A33}\n`;
    found = errors(text);
    assert.equal(found.length, 1, JSON.stringify(found));
    assert.equal(found[0].code, 'head-count');
    assert.deepEqual(found[0].range, rangeOf(text, 'weights1'));
  });

  it('weights for two heads set the head count when nothing else does', () => {
    const text = `${projections}attn1 = ${A33}\nattn2 = ${A33}\n`;
    const { spec } = buildSpec(problemsOf(text)[0]);
    assert.equal(spec?.options.heads, 2);
    assert.equal(runAttention(spec!).heads.length, 2);
  });
});
