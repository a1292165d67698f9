import { strict as assert } from 'node:assert';
import { cellAtOffset, parseDocument } from '../../../src/core/parse/index';
import { matrix, rangeOf, readOne, rows } from './helpers';

describe('reader: notations', () => {
  it('nested lists spanning lines, with trailing commas, and their ranges', () => {
    const text = 'Some note.\nX = [[1, 2, 3],\n     [4, 5, 6],]\nW_Q = [[1, 0], [0, 1], [1, 1]]\n';
    const problem = readOne(text);
    const X = matrix(problem, 'X');
    assert.equal(X.role, 'X');
    assert.deepEqual(rows(X), [[1, 2, 3], [4, 5, 6]]);
    assert.deepEqual(X.nameRange, rangeOf(text, 'X'));
    assert.deepEqual(X.range, rangeOf(text, 'X = [[1, 2, 3],\n     [4, 5, 6],]'));
    assert.deepEqual(Array.from(X.cellOffsets), ['1', '2', '3', '4', '5', '6'].map((d) => text.indexOf(d, text.indexOf('X ='))));
    assert.deepEqual(rows(matrix(problem, 'W_Q')), [[1, 0], [0, 1], [1, 1]]);
    assert.deepEqual(problem.range, rangeOf(text, text.slice(text.indexOf('X ='), text.lastIndexOf(']') + 1)));
  });

  it('np.array, torch.tensor(…, dtype=…) and Matrix(…) wrappers', () => {
    const text = [
      'X = np.array([[1., 2.], [3., 4.]])',
      'W_Q = torch.tensor([[0.5, -1.5], [2e-1, 3E2]], dtype=torch.float64)',
      'W_K = Matrix([[1, 0], [0, 1]])',
      'mask = torch.tensor([[1, 0], [1, 1]], dtype=torch.bool)',
    ].join('\n');
    const problem = readOne(text);
    assert.deepEqual(rows(matrix(problem, 'X')), [[1, 2], [3, 4]]);
    assert.deepEqual(rows(matrix(problem, 'W_Q')), [[0.5, -1.5], [0.2, 300]]);
    assert.deepEqual(rows(matrix(problem, 'W_K')), [[1, 0], [0, 1]]);
    const mask = matrix(problem, 'mask');
    assert.equal(mask.role, 'mask');
    assert.equal(mask.boolean, true, 'dtype=torch.bool makes a 0/1 literal boolean');
    assert.deepEqual(matrix(problem, 'W_Q').range, rangeOf(text, 'W_Q = torch.tensor([[0.5, -1.5], [2e-1, 3E2]]'));
  });

  it('MATLAB rows by `;`, by new lines, and `...` continuations', () => {
    const text = 'X = [1 2 3; 4 5 6];\nW_Q = [1 0\n       0 1\n       1 ...\n       1];\nW_K = [1, 0; 0, 1; 2, 2]\n';
    const problem = readOne(text);
    assert.deepEqual(rows(matrix(problem, 'X')), [[1, 2, 3], [4, 5, 6]]);
    assert.deepEqual(rows(matrix(problem, 'W_Q')), [[1, 0], [0, 1], [1, 1]]);
    assert.deepEqual(rows(matrix(problem, 'W_K')), [[1, 0], [0, 1], [2, 2]]);
  });

  it('a flat list is one row, even wrapped after commas', () => {
    const problem = readOne('padding = [false, false,\n           true]\nX = [1, 2, 3]\n');
    const padding = matrix(problem, 'padding');
    assert.deepEqual([padding.value.rows, padding.value.cols, padding.boolean], [1, 3, true]);
    assert.deepEqual(rows(padding), [[0, 0, 1]]);
    assert.deepEqual(rows(matrix(problem, 'X')), [[1, 2, 3]]);
  });

  it('LaTeX bmatrix / pmatrix / matrix in $…$ and $$…$$, with -\\infty, \\frac and LaTeX names', () => {
    const text = [
      '$$W^{Q} = \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}$$',
      'and $W_{K} = \\begin{pmatrix} -1 & \\frac{1}{2} \\\\ 0 & 1e-3 \\\\ \\end{pmatrix}$,',
      '$W^O = \\begin{matrix} 1 & 0 \\\\ 0 & 1 \\end{matrix}$',
      '\\begin{align} M &= \\begin{bmatrix} 0 & -\\infty \\\\ 0 & - \\infty \\end{bmatrix} \\end{align}',
    ].join('\n');
    const problem = readOne(text);
    const WQ = matrix(problem, 'W^{Q}');
    assert.equal(WQ.role, 'WQ');
    assert.deepEqual(rows(WQ), [[1, 2], [3, 4]]);
    assert.deepEqual(WQ.range, rangeOf(text, 'W^{Q} = \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}'));
    const WK = matrix(problem, 'W_{K}');
    assert.equal(WK.role, 'WK');
    assert.deepEqual(rows(WK), [[-1, 0.5], [0, 0.001]]);
    assert.equal(matrix(problem, 'W^O').role, 'WO');
    assert.deepEqual(rows(matrix(problem, 'M')), [[0, -Infinity], [0, -Infinity]]);
  });

  it('a whole JSON document, tokens as a list of strings, and the "attention" key', () => {
    const text = '{"attention": "heads=2 causal", "tokens": ["I", "am", "here"], "X": [[1, 0], [0, 1], [1, 1]],\n "W_Q": [[1, 0], [0, 1]], "mask": [[true, false, false], [true, true, false], [true, true, true]],\n "padding": ["-Infinity", 0, "NaN"]}';
    const result = parseDocument(text);
    assert.deepEqual(result.diagnostics, []);
    assert.equal(result.problems.length, 1);
    const [problem] = result.problems;
    assert.deepEqual(problem.tokens, ['I', 'am', 'here']);
    assert.equal(problem.options.heads, 2);
    assert.equal(problem.options.causal, 'top-left');
    assert.deepEqual(rows(matrix(problem, 'X')), [[1, 0], [0, 1], [1, 1]]);
    assert.deepEqual(matrix(problem, 'X').nameRange, rangeOf(text, 'X'));
    const mask = matrix(problem, 'mask');
    assert.equal(mask.boolean, true);
    assert.deepEqual(rows(mask), [[1, 0, 0], [1, 1, 0], [1, 1, 1]]);
    assert.deepEqual(rows(matrix(problem, 'padding')), [[-Infinity, 0, NaN]]);
  });

  it('Markdown fences of any notation, key tokens, and MATLAB cell arrays of tokens', () => {
    const text = '# Notes\n\n```python\nX = [[1, 0]]\n```\n\n```matlab\nkey_tokens = {\'a\', \'b\'};\ncontext = [1 0; 0 1];\n```\n\ntokens = ["q"]\n';
    const problem = readOne(text);
    assert.deepEqual(problem.keyTokens, ['a', 'b']);
    assert.deepEqual(problem.tokens, ['q']);
    assert.deepEqual(rows(matrix(problem, 'context')), [[1, 0], [0, 1]]);
    assert.equal(matrix(problem, 'context').role, 'context');
  });

  it('names map to roles ignoring case, _, ^, {} and quotes; aliases', () => {
    const names: [string, string][] = [
      ['E', 'X'], ['x', 'X'], ['Y', 'context'], ['memory', 'context'], ['PE', 'PE'], ['Wq', 'WQ'], ['w_k', 'WK'],
      ['W^V', 'WV'], ['W_{O}', 'WO'], ['Q', 'Q'], ['K', 'K'], ['V', 'V'], ['M', 'mask'], ['attn_mask', 'mask'],
      ['key_padding_mask', 'padding'], ['W_a', 'Wa'], ['W_1', 'W1'], ['W_2', 'W2'], ['v_a', 'va'], ['dO', 'dO'],
      ['grad_output', 'dO'],
    ];
    const text = names.map(([name], i) => `${name} = [[${i}]]`).join('\n');
    const result = parseDocument(text);
    assert.deepEqual(result.diagnostics, []);
    const all = result.problems.flatMap((p) => p.matrices);
    assert.deepEqual(all.map((m) => [m.name, m.role]), names);
  });

  it('per-head names: W_Q1, W_Q^{(2)}, W_Q[0], Wq_h1, W_1^Q', () => {
    const text = 'W_Q1 = [[1]]\nW_K^{(2)} = [[2]]\nW_V[0] = [[3]]\nWq_h2 = [[4]]\nW_3^K = [[5]]\n';
    const [problem] = parseDocument(text).problems;
    assert.deepEqual(
      problem.matrices.map((m) => [m.name, m.role, m.head]),
      [['W_Q1', 'WQ', 0], ['W_K^{(2)}', 'WK', 1], ['W_V[0]', 'WV', 0], ['Wq_h2', 'WQ', 1], ['W_3^K', 'WK', 2]],
    );
  });

  it('every spelling of infinity and booleans inside one matrix', () => {
    const problem = readOne("M = [[0, -inf, -Infinity, -∞], [float('-inf'), -np.inf, -math.inf, Inf], [nan, 1e-3, -1E+2, .5]]\npadding = [[True, False, true, false]]");
    assert.deepEqual(rows(matrix(problem, 'M')), [[0, -Infinity, -Infinity, -Infinity], [-Infinity, -Infinity, -Infinity, Infinity], [NaN, 0.001, -100, 0.5]]);
    assert.equal(matrix(problem, 'padding').boolean, true);
    assert.equal(matrix(problem, 'M').boolean, false);
  });

  it('YAML-ish `NAME:`, `:=`, LaTeX font commands and align `&=`', () => {
    const text = 'X: [[1, 2]]\nW_Q := [[1], [0]]\n$\\mathbf{W}^K = \\begin{bmatrix} 1 \\\\ 2 \\end{bmatrix}$\n\\begin{align} W_V &= \\begin{bmatrix} 3 \\\\ 4 \\end{bmatrix} \\end{align}';
    const problem = readOne(text);
    assert.deepEqual(problem.matrices.map((m) => [m.name, m.role, rows(m)]), [
      ['X', 'X', [[1, 2]]],
      ['W_Q', 'WQ', [[1], [0]]],
      ['\\mathbf{W}^K', 'WK', [[1], [2]]],
      ['W_V', 'WV', [[3], [4]]],
    ]);
  });

  it('transposes: numpy/torch .T, .t(), MATLAB \', LaTeX ^\\top — values and cell offsets move together', () => {
    const text = "X = np.array([[1, 2, 3], [4, 5, 6]], dtype=float).T\nW_Q = torch.tensor([[1, 0]]).t()\nW_K = [1 2 3]'\ntokens = {'a', 'b', 'c'}\n$W_V = \\begin{bmatrix} 1 & 2 \\end{bmatrix}^{\\top}$";
    const problem = readOne(text);
    const X = matrix(problem, 'X');
    assert.deepEqual(rows(X), [[1, 4], [2, 5], [3, 6]]);
    assert.deepEqual(X.range, rangeOf(text, 'X = np.array([[1, 2, 3], [4, 5, 6]], dtype=float).T'));
    assert.equal(cellAtOffset(X.cellOffsets, text.indexOf('4')), 1, 'the 4 is row 0, column 1 of Xᵀ');
    assert.deepEqual(rows(matrix(problem, 'W_Q')), [[1], [0]]);
    assert.deepEqual(rows(matrix(problem, 'W_K')), [[1], [2], [3]]);
    assert.deepEqual(rows(matrix(problem, 'W_V')), [[1], [2]]);
    assert.deepEqual(problem.tokens, ['a', 'b', 'c'], "a MATLAB string's quote is not a transpose");
  });

  it('cellOffsets map a position back to its cell', () => {
    const text = 'X = [[10, 20],\n     [30, 40]]';
    const X = matrix(readOne(text), 'X');
    assert.equal(cellAtOffset(X.cellOffsets, text.indexOf('30') + 1), 2);
    assert.equal(cellAtOffset(X.cellOffsets, text.indexOf('40')), 3);
    assert.equal(cellAtOffset(X.cellOffsets, 0), -1);
  });

  it('ignores lists that are not matrices in code, JSON objects, and prose', () => {
    const result = parseDocument('names = ["a", "b"]\nfor i in range(3): print(i)\nsizes = [n for n in xs]\nThe ratio: 3 = 3\n{"mask": {"type": "causal"}}\n');
    assert.deepEqual(result, { problems: [], diagnostics: [] });
  });
});

describe('reader: problems', () => {
  it('a directive starts a problem; definitions before the first directive form their own', () => {
    const text = 'X = [[1]]\n# attention: heads=1 name="second"\nX = [[2]]\nW_Q = [[1]]\n// attention: score=dot\nW_Q = [[3]]\n';
    const { problems, diagnostics } = parseDocument(text);
    assert.deepEqual(diagnostics, []);
    assert.deepEqual(problems.map((p) => [p.index, p.name, p.matrices.map((m) => m.name)]), [
      [0, undefined, ['X']],
      [1, 'second', ['X', 'W_Q']],
      [2, undefined, ['W_Q']],
    ]);
    assert.deepEqual(problems[1].directiveRange, rangeOf(text, 'attention: heads=1 name="second"'));
    assert.equal(problems[2].options.score, 'dot');
    assert.deepEqual(problems[1].range, rangeOf(text, text.slice(text.indexOf('attention: heads'), text.indexOf('W_Q = [[1]]') + 11)));
  });

  it('a repeated name starts a new problem', () => {
    const { problems } = parseDocument('X = [[1]]\nW_Q = [[1]]\nX = [[2]]\nW_Q1 = [[1]]\nW_Q1 = [[2]]\n');
    assert.deepEqual(problems.map((p) => p.matrices.map((m) => m.name)), [['X', 'W_Q'], ['X', 'W_Q1'], ['W_Q1']]);
  });

  it('directives in every comment style map their keys onto the options', () => {
    const styles = ['# ', '// ', '% ', '<!-- ', '; ', '-- ', '/* ', ''];
    for (const prefix of styles) {
      const suffix = prefix === '<!-- ' ? ' -->' : prefix === '/* ' ? ' */' : '';
      const text = `${prefix}attention: heads=4 kv_heads=2 scale=1/sqrt(2) score=gaussian sigma=0.5 causal=bottom-right dtype=float32 pe=sinusoidal grad residual name="My example"${suffix}\nX = [[1]]`;
      const { problems, diagnostics } = parseDocument(text);
      assert.deepEqual(diagnostics, [], prefix);
      assert.deepEqual(
        problems[0].options,
        { heads: 4, kvHeads: 2, scale: 1 / Math.sqrt(2), score: 'gaussian', sigma: 0.5, causal: 'bottom-right', dtype: 'float32', sinusoidalPE: true, gradients: true, residual: true, name: 'My example' },
        prefix,
      );
      assert.equal(problems[0].name, 'My example');
    }
  });

  it('plain `causal`, `gradients`, `scale=none` and prose that merely starts with "Attention:"', () => {
    const { problems } = parseDocument('Attention: this is how it works.\nattention: causal gradients scale=none\nX = [[1]]');
    assert.equal(problems.length, 1);
    assert.deepEqual(problems[0].options, { heads: 1, score: 'scaled_dot', dtype: 'float64', causal: 'top-left', gradients: true });
  });
});
