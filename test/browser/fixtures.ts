// The PyTorch reference results of fixtures/attention.json (see make_fixture.py) as the core's
// types, so the tests feed the panel exactly what the extension host would.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AttentionResult, HeadResult, Matrix, Problem } from '../../src/core/types';

interface JsonMatrix {
  rows: number;
  cols: number;
  data: (number | '-inf')[];
}

interface JsonProblem {
  problem: { name: string; heads: number; causal: 'top-left' | null; tokens: string[] | null; WO: JsonMatrix | null };
  result: Omit<AttentionResult, 'input' | 'heads' | 'concat' | 'output' | 'residual'> & {
    input: JsonMatrix;
    heads: (Record<'Q' | 'K' | 'V' | 'scores' | 'scaled' | 'masked' | 'weights' | 'output', JsonMatrix> & {
      mask: JsonMatrix | null;
      kvHead: number;
      gradients: Record<'dQ' | 'dK' | 'dV' | 'dA' | 'dS', JsonMatrix>;
    })[];
    concat: JsonMatrix;
    output: JsonMatrix;
    residual: JsonMatrix | null;
  };
}

export function matrixOfJson(json: JsonMatrix): Matrix {
  return { rows: json.rows, cols: json.cols, data: Float64Array.from(json.data, (v) => (v === '-inf' ? -Infinity : v)) };
}

const ZERO = { line: 0, character: 0 };
const NOWHERE = { start: ZERO, end: ZERO };

export interface Fixture {
  problems: Problem[];
  results: AttentionResult[];
}

export function loadFixture(): Fixture {
  const text = readFileSync(path.join(__dirname, 'fixtures', 'attention.json'), 'utf8');
  const json = JSON.parse(text) as { problems: JsonProblem[] };
  const problems = json.problems.map(({ problem }, index): Problem => ({
    index,
    name: problem.name,
    range: NOWHERE,
    options: { heads: problem.heads, score: 'scaled_dot', dtype: 'float64', ...(problem.causal ? { causal: problem.causal } : {}) },
    matrices: problem.WO
      ? [{ name: 'W_O', role: 'WO', value: matrixOfJson(problem.WO), boolean: false, nameRange: NOWHERE, range: NOWHERE, cellOffsets: new Uint32Array(problem.WO.data.length) }]
      : [],
    ...(problem.tokens ? { tokens: problem.tokens } : {}),
  }));
  const results = json.problems.map(({ result: { residual, ...result } }): AttentionResult => ({
    ...result,
    input: matrixOfJson(result.input),
    heads: result.heads.map((head): HeadResult => ({
      Q: matrixOfJson(head.Q),
      K: matrixOfJson(head.K),
      V: matrixOfJson(head.V),
      scores: matrixOfJson(head.scores),
      scaled: matrixOfJson(head.scaled),
      mask: head.mask ? matrixOfJson(head.mask) : null,
      masked: matrixOfJson(head.masked),
      weights: matrixOfJson(head.weights),
      output: matrixOfJson(head.output),
      kvHead: head.kvHead,
      gradients: {
        dQ: matrixOfJson(head.gradients.dQ),
        dK: matrixOfJson(head.gradients.dK),
        dV: matrixOfJson(head.gradients.dV),
        dA: matrixOfJson(head.gradients.dA),
        dS: matrixOfJson(head.gradients.dS),
      },
    })),
    concat: matrixOfJson(result.concat),
    output: matrixOfJson(result.output),
    ...(residual ? { residual: matrixOfJson(residual) } : {}),
  }));
  return { problems, results };
}
