// Reads the numpy/PyTorch fixtures of test/fixtures/engine (written by scripts/gen_fixtures.py)
// into AttentionSpecs and compares engine matrices with them. Shared by every engine path's tests.
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AttentionOptions, AttentionResult, AttentionSpec, DType, Matrix } from '../../../src/core/types';

export type JsonNumber = number | 'Infinity' | '-Infinity' | 'NaN';
export type JsonMatrix = JsonNumber[][];

export interface Fixture {
  name: string;
  description: string;
  dtype: DType;
  tolerance: number;
  spec: Record<string, unknown> & { options: AttentionOptions };
  expected: Record<string, unknown> & {
    heads: Array<Record<string, JsonMatrix | number | Record<string, JsonMatrix>>>;
    fullyMasked: Array<[number, number]>;
    gradients?: Record<string, JsonMatrix>;
  };
}

export const FIXTURE_DIR = join(__dirname, '..', '..', 'fixtures', 'engine');

export function loadFixtures(): Fixture[] {
  return readdirSync(FIXTURE_DIR)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => JSON.parse(readFileSync(join(FIXTURE_DIR, file), 'utf8')) as Fixture);
}

export function loadFixture(name: string): Fixture {
  return JSON.parse(readFileSync(join(FIXTURE_DIR, `${name}.json`), 'utf8')) as Fixture;
}

function decodeNumber(x: JsonNumber): number {
  return typeof x === 'number' ? x : Number(x); // Number('Infinity') etc. are exact
}

/** Nested rows → float64 Matrix. */
export function matrix(rows: ReadonlyArray<ReadonlyArray<JsonNumber>>): Matrix {
  const cols = rows[0]?.length ?? 0;
  const data = new Float64Array(rows.length * cols);
  rows.forEach((row, i) => row.forEach((x, j) => (data[i * cols + j] = decodeNumber(x))));
  return { rows: rows.length, cols, data };
}

const SINGLE_MATRICES = ['X', 'context', 'PE', 'WO', 'Q', 'K', 'V', 'padding', 'Wa', 'W1', 'W2', 'va', 'dO', 'alibiSlopes', 'segments'] as const;
const PER_HEAD_WEIGHTS = ['WQ', 'WK', 'WV'] as const;

export function specOf(fixture: Fixture): AttentionSpec {
  const s = fixture.spec;
  const spec: AttentionSpec = { options: s.options };
  for (const name of SINGLE_MATRICES) if (s[name]) spec[name] = matrix(s[name] as JsonMatrix);
  for (const name of PER_HEAD_WEIGHTS) if (s[name]) spec[name] = (s[name] as JsonMatrix[]).map(matrix);
  if (s.mask) {
    const mask = s.mask as { kind: 'boolean' | 'additive'; value: JsonMatrix };
    spec.mask = { kind: mask.kind, value: matrix(mask.value) };
  }
  if (s.tokens) spec.tokens = s.tokens as string[];
  return spec;
}

/**
 * |actual − expected| ≤ tol · (|expected| + max|expected|) entry by entry: relative for large
 * entries, relative to the matrix's scale for entries that cancel to near 0. `minScale` floors
 * that scale where the matrix itself may cancel as a whole (a 1×1 sum of terms of size ~1).
 * Non-finite entries must match exactly.
 */
export function assertMatrixClose(actual: Matrix | null | undefined, expected: JsonMatrix, tol: number, label: string, minScale = 0): void {
  assert.ok(actual, `${label}: missing`);
  const want = matrix(expected);
  assert.equal(`${actual.rows}×${actual.cols}`, `${want.rows}×${want.cols}`, `${label}: shape`);
  let scale = minScale;
  for (const w of want.data) if (Number.isFinite(w)) scale = Math.max(scale, Math.abs(w));
  for (let p = 0; p < want.data.length; p++) {
    const a = actual.data[p];
    const w = want.data[p];
    const where = `${label}[${Math.floor(p / want.cols)}][${p % want.cols}]`;
    if (!Number.isFinite(w)) {
      assert.ok(Object.is(a, w) || (Number.isNaN(a) && Number.isNaN(w)), `${where}: ${a} but expected ${w}`);
      continue;
    }
    assert.ok(Math.abs(a - w) <= tol * (Math.abs(w) + scale), `${where}: ${a} but expected ${w} (tolerance ${tol})`);
  }
}

const HEAD_MATRICES = ['Q', 'K', 'V', 'scores', 'scaled', 'masked', 'weights', 'output'] as const;
const RESULT_MATRICES = ['input', 'concat', 'output', 'residual'] as const;

/** Every forward intermediate of `result` (whichever engine path made it) against the fixture. */
export function assertForwardMatches(result: AttentionResult, fixture: Fixture): void {
  const { expected, tolerance: tol } = fixture;
  const storage = fixture.dtype === 'float32' ? Float32Array : Float64Array;
  assert.equal(result.dtype, fixture.dtype);
  assert.ok(result.output.data instanceof storage, 'output stored in the requested dtype');
  for (const key of RESULT_MATRICES) {
    if (expected[key]) assertMatrixClose(result[key], expected[key] as JsonMatrix, tol, key);
    else assert.equal(result[key], undefined, `${key} should be absent`);
  }
  assert.equal(result.heads.length, expected.heads.length, 'number of heads');
  result.heads.forEach((head, h) => {
    const want = expected.heads[h];
    for (const key of HEAD_MATRICES) assertMatrixClose(head[key], want[key] as JsonMatrix, tol, `head ${h + 1} ${key}`);
    if (want.mask) assertMatrixClose(head.mask, want.mask as JsonMatrix, tol, `head ${h + 1} mask`);
    else assert.equal(head.mask, null, `head ${h + 1}: no mask`);
    assert.equal(head.kvHead, want.kvHead, `head ${h + 1} kvHead`);
  });
}

/** Σ of a row range [from, to) of a matrix's storage. */
export function sumOf(m: Matrix, from = 0, to = m.data.length): number {
  let sum = 0;
  for (let p = from; p < to; p++) sum += m.data[p];
  return sum;
}

/** A fast backend's warnings and checks as the reference engine gives them (row sums within 64 ulps). */
export function assertChecksAsReference(result: AttentionResult, reference: AttentionResult, dtype: DType): void {
  assert.deepEqual(result.warnings, reference.warnings);
  const { rowSumsMaxError, permutationMaxError, ...verdicts } = result.checks;
  const { rowSumsMaxError: refRowSums, permutationMaxError: refPermutation, ...refVerdicts } = reference.checks;
  assert.deepEqual(verdicts, refVerdicts);
  const eps = dtype === 'float32' ? 2 ** -23 : 2 ** -52;
  assert.ok(Math.abs(rowSumsMaxError - refRowSums) <= 64 * eps, `row sums ${rowSumsMaxError} vs ${refRowSums}`);
  assert.equal(permutationMaxError === undefined, refPermutation === undefined);
}
