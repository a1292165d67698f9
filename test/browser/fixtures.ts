// The panel's fixtures: fixtures/attention.md read by the real reader and spec builder and
// computed by the real engine — what the extension host would send — plus PyTorch's values for
// the same note (fixtures/attention.json, from make_fixture.py) to hold the engine's numbers to.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runAttention } from '../../src/core/engine';
import { parseDocument } from '../../src/core/parse';
import { buildSpec } from '../../src/core/spec';
import type { AttentionResult, Matrix, Problem } from '../../src/core/types';

const FIXTURES = path.join(__dirname, 'fixtures');

export interface Fixture {
  problems: Problem[];
  results: AttentionResult[];
}

export function loadFixture(): Fixture {
  const parsed = parseDocument(readFileSync(path.join(FIXTURES, 'attention.md'), 'utf8'));
  if (parsed.diagnostics.some((d) => d.severity === 'error')) throw new Error(`fixture note: ${JSON.stringify(parsed.diagnostics)}`);
  const results = parsed.problems.map((problem) => {
    const { spec, diagnostics } = buildSpec(problem);
    if (!spec) throw new Error(`fixture problem ${problem.index + 1}: ${JSON.stringify(diagnostics)}`);
    return runAttention(spec);
  });
  return { problems: parsed.problems, results };
}

interface JsonMatrix {
  rows: number;
  cols: number;
  data: (number | '-inf')[];
}

type HeadKey = 'Q' | 'K' | 'V' | 'scores' | 'scaled' | 'mask' | 'masked' | 'weights' | 'output';
type GradientKey = 'dQ' | 'dK' | 'dV' | 'dA' | 'dS';

export interface TorchReference {
  heads: (Record<HeadKey, Matrix | null> & { gradients: Record<GradientKey, Matrix> })[];
  concat: Matrix;
  output: Matrix;
  residual: Matrix | null;
}

function matrixOfJson(json: JsonMatrix): Matrix {
  return { rows: json.rows, cols: json.cols, data: Float64Array.from(json.data, (v) => (v === '-inf' ? -Infinity : v)) };
}

/** PyTorch's values of every problem of the note. */
export function torchReference(): TorchReference[] {
  type JsonHead = Record<HeadKey, JsonMatrix | null> & { gradients: Record<GradientKey, JsonMatrix> };
  const json = JSON.parse(readFileSync(path.join(FIXTURES, 'attention.json'), 'utf8')) as {
    problems: { result: { heads: JsonHead[]; concat: JsonMatrix; output: JsonMatrix; residual: JsonMatrix | null } }[];
  };
  const convert = <K extends string>(record: Record<K, JsonMatrix | null>) =>
    Object.fromEntries(Object.entries(record).map(([key, value]) => [key, value && typeof value === 'object' && 'rows' in value ? matrixOfJson(value as JsonMatrix) : value])) as Record<K, Matrix | null>;
  return json.problems.map(({ result }) => ({
    heads: result.heads.map((head) => ({
      ...convert<HeadKey>(head),
      gradients: convert<GradientKey>(head.gradients) as Record<GradientKey, Matrix>,
    })),
    concat: matrixOfJson(result.concat),
    output: matrixOfJson(result.output),
    residual: result.residual && matrixOfJson(result.residual),
  }));
}
