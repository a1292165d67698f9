import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { runAttention } from '../../../src/core/engine/index';
import { parseDocument } from '../../../src/core/parse/index';
import { buildSpec } from '../../../src/core/spec';
import type { Diagnostic, MatrixDef, Problem, Role } from '../../../src/core/types';
import { rangeOf } from '../parse/helpers';

/** Reads one problem from text and builds its spec. */
function build(text: string): ReturnType<typeof buildSpec> {
  const { problems, diagnostics } = parseDocument(text);
  assert.deepEqual(diagnostics, [], 'the text itself must read cleanly');
  assert.equal(problems.length, 1);
  return buildSpec(problems[0]);
}

function only(result: { diagnostics: Diagnostic[] }, code: string): Diagnostic {
  const found = result.diagnostics.filter((d) => d.code === code);
  assert.equal(found.length, 1, `expected one ${code}: ${JSON.stringify(result.diagnostics.map((d) => [d.code, d.message]))}`);
  return found[0];
}

const I2 = '[[1, 0], [0, 1]]';
const X34 = 'X = [[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]]';
const W42 = '[[1, 0], [0, 1], [1, 0], [0, 1]]';
const base = `${X34}\nW_Q = ${W42}\nW_K = ${W42}\nW_V = ${W42}\n`;

describe('spec: shapes checked before computing', () => {
  it('a well-formed problem gives a spec the engine computes, with no diagnostics', () => {
    const { spec, diagnostics } = build(`tokens = ["a", "b", "c"]\n${base}`);
    assert.deepEqual(diagnostics, []);
    assert.ok(spec);
    assert.deepEqual(spec.tokens, ['a', 'b', 'c']);
    const result = runAttention(spec);
    assert.equal(result.output.rows, 3);
  });

  it('X is 3×4 but W_Q has 5 rows — at W_Q, naming both shapes', () => {
    const text = `${X34}\nW_Q = [[1, 0], [0, 1], [1, 0], [0, 1], [1, 1]]\nW_K = ${W42}\nW_V = ${W42}`;
    const result = build(text);
    assert.equal(result.spec, undefined);
    const d = only(result, 'shape-mismatch');
    assert.match(d.message, /^X is 3×4 but W_Q has 5 rows/);
    assert.deepEqual(d.range, rangeOf(text, 'W_Q'));
  });

  it('the context (cross-attention) must match W_K / W_V', () => {
    const text = `${X34}\ncontext = [[1, 0, 0], [0, 1, 0]]\nW_Q = ${W42}\nW_K = ${W42}\nW_V = ${W42}`;
    const d = build(text).diagnostics.filter((x) => x.code === 'shape-mismatch');
    assert.deepEqual(d.map((x) => x.message.split(':')[0]), ['context is 2×3 but W_K has 4 rows', 'context is 2×3 but W_V has 4 rows']);
  });

  it('missing W_V, with a suggestion', () => {
    const text = `${X34}\nW_Q = ${W42}\nW_K = ${W42}`;
    const d = only(build(text), 'missing-matrix');
    assert.match(d.message, /W_V is missing/);
    assert.match(d.suggestion ?? '', /add W_V/);
  });

  it('no input at all', () => {
    const d = only(build(`W_Q = ${W42}`), 'missing-input');
    assert.match(d.message, /write the input X/);
  });

  it('no projections: attention on X itself, said once', () => {
    const result = build(X34);
    assert.ok(result.spec);
    assert.equal(only(result, 'identity-projections').severity, 'info');
  });

  it('heads not dividing d_model, with the head counts that do', () => {
    const text = `# attention: heads=3\n${base}`;
    const result = build(text);
    const d = result.diagnostics.filter((x) => x.code === 'heads-not-dividing');
    assert.ok(d.length >= 1);
    assert.match(d[0].message, /heads=3 cannot split W_Q's 2 columns/);
    assert.equal(d[0].suggestion, 'use heads=1 or 2');
  });

  it('head counts that are not whole numbers (a Problem built by hand) are refused, not thrown', () => {
    const { problems } = parseDocument(base);
    for (const options of [{ heads: 0 }, { heads: 1.5 }, { heads: 2, kvHeads: 0 }]) {
      const result = buildSpec({ ...problems[0], options: { ...problems[0].options, ...options } });
      assert.equal(result.spec, undefined);
      assert.equal(only(result, 'bad-option-value').severity, 'error');
    }
  });

  it('kv_heads not dividing heads', () => {
    const d = only(build(`# attention: heads=2 kv_heads=3\n${base}`), 'kv-heads');
    assert.match(d.message, /kv_heads=3 does not divide heads=2/);
    assert.equal(d.suggestion, 'use kv_heads=1 or 2');
  });

  it('per-head matrices: heads inferred, a missing head, a count that disagrees, mixed with whole', () => {
    const perHead = `${X34}\nW_Q1 = ${W42}\nW_Q2 = ${W42}\nW_K1 = ${W42}\nW_K2 = ${W42}\nW_V1 = ${W42}\nW_V2 = ${W42}`;
    const inferred = build(perHead);
    assert.deepEqual(inferred.diagnostics, []);
    assert.equal(inferred.spec?.options.heads, 2);
    assert.equal(inferred.spec?.WQ?.length, 2);
    assert.equal(runAttention(inferred.spec!).heads.length, 2);
    assert.match(only(build(`# attention: heads=3\n${perHead}`), 'head-count').message, /heads=3 but W_Q is given for 2 heads/);
    const gap = `${X34}\nW_Q1 = ${W42}\nW_Q3 = ${W42}\nW_K = ${W42}\nW_V = ${W42}`;
    assert.match(only(build(gap), 'missing-head').message, /W_Q is given per head but head 2 is missing/);
    const mixed = `${X34}\nW_Q = ${W42}\nW_Q1 = ${W42}\nW_K = ${W42}\nW_V = ${W42}`;
    assert.equal(only(build(mixed), 'mixed-heads').severity, 'error');
  });

  it('grouped-query: kv_heads inferred from per-head W_K', () => {
    const text = `${X34}\nW_Q1 = ${W42}\nW_Q2 = ${W42}\nW_Q3 = ${W42}\nW_Q4 = ${W42}\nW_K1 = ${W42}\nW_K2 = ${W42}\nW_V1 = ${W42}\nW_V2 = ${W42}`;
    const { spec, diagnostics } = build(text);
    assert.deepEqual(diagnostics, []);
    assert.deepEqual([spec?.options.heads, spec?.options.kvHeads], [4, 2]);
    assert.deepEqual(runAttention(spec!).heads.map((h) => h.kvHead), [0, 0, 1, 1]);
  });

  it('mask: wrong shape, 1×Lk broadcast, boolean vs additive, and 0/1 numbers', () => {
    const wrong = `${base}M = [[0, 0], [0, 0]]`;
    assert.match(only(build(wrong), 'shape-mismatch').message, /M is 2×2 but the scores are 3×3 \(3 queries × 3 keys\)/);
    const row = build(`${base}mask = [true, true, false]`);
    assert.deepEqual(row.diagnostics, []);
    assert.equal(row.spec?.mask?.kind, 'boolean');
    assert.deepEqual([row.spec?.mask?.value.rows, row.spec?.mask?.value.cols], [3, 3]);
    assert.equal(build(`${base}M = [[0, -inf, -inf], [0, 0, -inf], [0, 0, 0]]`).spec?.mask?.kind, 'additive');
    const numeric = build(`${base}M = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]`);
    assert.equal(only(numeric, 'numeric-mask').severity, 'warning');
    assert.ok(numeric.spec, 'a warning still runs');
  });

  it('padding: one true/false per key', () => {
    assert.match(only(build(`${base}padding = [false, true]`), 'shape-mismatch').message, /padding is 1×2 but there are 3 keys/);
    assert.equal(only(build(`${base}padding = [0, 2, 0]`), 'bad-padding').severity, 'error');
    assert.deepEqual(build(`${base}padding = [[false], [false], [true]]`).spec?.padding?.data, new Float64Array([0, 0, 1]));
  });

  it('W_O must take the concatenated heads; residual needs the output to match X', () => {
    const text = `# attention: heads=2\n${X34}\nW_Q = ${I2.replace(/\]\]$/, '], [0, 0], [0, 0]]')}\nW_K = ${W42}\nW_V = ${W42}\nW_O = [[1, 0, 0]]`;
    assert.match(only(build(text), 'shape-mismatch').message, /Concat\(heads\) has 2 heads × 1 column = 2 columns but W_O has 1 row\./);
    const residual = build(`# attention: residual\n${base}`);
    const d = only(residual, 'shape-mismatch');
    assert.match(d.message, /residual adds the output \(3×2\) to X \(3×4\)/);
    assert.match(d.suggestion ?? '', /add W_O \(2×4\)/);
    const fixed = build(`# attention: residual\n${base}W_O = [[1, 0, 0, 0], [0, 1, 0, 0]]`);
    assert.deepEqual(fixed.diagnostics, []);
    assert.equal(runAttention(fixed.spec!).residual?.cols, 4);
  });

  it('dO must have the output shape, and asks for gradients', () => {
    assert.match(only(build(`${base}dO = [[1, 1]]`), 'shape-mismatch').message, /dO is 1×2 but the output is 3×2/);
    const { spec } = build(`${base}dO = [[1, 0], [0, 1], [1, 1]]`);
    assert.equal(spec?.options.gradients, true);
    assert.ok(runAttention(spec!).gradients?.dX);
  });

  it('score functions need their matrices, in the right shapes', () => {
    assert.match(only(build(`# attention: score=general\n${base}`), 'missing-score-matrix').message, /score=general needs W_a \(2×2\)/);
    assert.match(only(build(`# attention: score=general\n${base}W_a = [[1, 0, 0]]`), 'shape-mismatch').message, /W_a is 1×3 but score=general needs 2×2/);
    const general = build(`# attention: score=general\n${base}W_a = ${I2}`);
    assert.deepEqual(general.diagnostics, []);
    runAttention(general.spec!);
    assert.match(only(build(`# attention: score=additive\n${base}W_1 = ${I2}`), 'missing-score-matrix').message, /W_2 \(2×d_a\), v_a \(d_a entries\)/);
    const additive = build(`# attention: score=additive\n${base}W_1 = [[1, 0, 1], [0, 1, 1]]\nW_2 = [[1, 1, 0], [0, 1, 0]]\nv_a = [1, -1, 0.5]`);
    assert.deepEqual(additive.diagnostics, []);
    runAttention(additive.spec!);
    assert.match(only(build(`# attention: score=additive\n${base}W_1 = ${I2}\nW_2 = ${I2}\nv_a = [1, 2, 3]`), 'shape-mismatch').message, /v_a is 1×3 but needs 2 entries/);
    assert.equal(only(build(`${base}W_a = ${I2}`), 'unused-matrix').suggestion, 'add score=general to the directive');
  });

  it('dot scores need queries and keys of one width', () => {
    const text = `${X34}\nW_Q = ${W42}\nW_K = [[1], [0], [1], [0]]\nW_V = ${W42}`;
    assert.match(only(build(text), 'shape-mismatch').message, /queries have 2 columns but its keys have 1/);
  });

  it('PE must have X’s shape', () => {
    assert.match(only(build(`${base}PE = [[1, 0]]`), 'shape-mismatch').message, /X is 3×4 but PE is 1×2/);
  });

  it('tokens that do not match the rows, and cross-attention without key tokens', () => {
    assert.equal(only(build(`tokens = ["a", "b"]\n${base}`), 'token-count').severity, 'warning');
    const cross = build(`tokens = ["a", "b", "c"]\n${base}context = [[1, 0, 0, 0], [0, 1, 0, 0]]`);
    assert.equal(only(cross, 'key-tokens').severity, 'info');
    assert.equal(runAttention(cross.spec!).heads[0].weights.cols, 2);
  });

  it('non-finite inputs are a warning, not a crash', () => {
    assert.equal(only(build(`${X34.replace('[[1,', '[[nan,')}\nW_Q = ${W42}\nW_K = ${W42}\nW_V = ${W42}`), 'non-finite-input').severity, 'warning');
  });

  it('every example in examples/ builds a spec the engine computes', () => {
    const root = join(__dirname, '..', '..', '..', 'examples');
    const files = [...readdirSync(root).filter((f) => /\.(md|py)$/.test(f)), ...readdirSync(join(root, 'notations')).map((f) => join('notations', f))];
    assert.ok(files.length >= 10);
    for (const file of files) {
      const { problems, diagnostics } = parseDocument(readFileSync(join(root, file), 'utf8'));
      assert.deepEqual(diagnostics, [], file);
      // A model directive's problem is a model run (test/unit/worker/models.test.ts), not matrices.
      for (const problem of problems.filter((candidate) => !candidate.model)) {
        const { spec, diagnostics: specDiagnostics } = buildSpec(problem);
        assert.ok(spec, `${file}: ${JSON.stringify(specDiagnostics)}`);
        runAttention(spec);
      }
    }
  });
});

// Random problems built consistent (random sizes, heads, options, optional matrices), then maybe
// broken by one perturbation. Consistent ones must be accepted and computed; for any problem,
// a spec buildSpec returns is computable, and a refusal always says why.
describe('spec: every spec it returns is computable (fast-check)', function () {
  this.timeout(120000); // thousands of runs of the engine: generous on a shared, busy machine
  const zero = { line: 0, character: 0 };
  const range = { start: zero, end: zero };
  const def = (role: Role, rows: number, cols: number, head?: number, boolean = false): MatrixDef => ({
    name: role,
    role,
    ...(head === undefined ? {} : { head }),
    value: { rows, cols, data: Float64Array.from({ length: rows * cols }, (_, k) => (boolean ? (k + 1) % 2 : ((k * 37) % 11) / 5 - 1)) },
    boolean,
    nameRange: range,
    range,
    cellOffsets: new Uint32Array(rows * cols),
  });
  const small = fc.integer({ min: 1, max: 3 });
  const shape = fc.record({
    queries: small,
    keys: small,
    dModel: small,
    groups: small,
    groupSize: fc.integer({ min: 1, max: 2 }),
    dk: small,
    dv: small,
    da: small,
    cross: fc.boolean(),
    perHead: fc.boolean(),
    precomputed: fc.boolean(),
    extras: fc.subarray(['WO', 'mask', 'booleanMask', 'padding', 'PE', 'dO'] as const),
    score: fc.constantFrom('scaled_dot' as const, 'dot' as const, 'general' as const, 'additive' as const, 'gaussian' as const),
    dtype: fc.constantFrom('float64' as const, 'float32' as const),
    causal: fc.option(fc.constantFrom('top-left' as const, 'bottom-right' as const), { nil: undefined }),
    residual: fc.boolean(),
    gradients: fc.boolean(),
  });
  const perturbation = fc.option(fc.record({ which: fc.nat(), rows: fc.integer({ min: -1, max: 1 }), cols: fc.integer({ min: -1, max: 1 }), drop: fc.boolean() }), { nil: undefined });

  type Shape = typeof shape extends fc.Arbitrary<infer T> ? T : never;

  function consistent(s: Shape): Problem {
    const heads = s.groups * s.groupSize;
    const keys = s.cross || s.precomputed ? s.keys : s.queries;
    const matrices: MatrixDef[] = [];
    if (s.precomputed) {
      matrices.push(def('Q', s.queries, heads * s.dk), def('K', keys, s.groups * s.dk), def('V', keys, s.groups * s.dv));
    } else {
      matrices.push(def('X', s.queries, s.dModel));
      if (s.cross) matrices.push(def('context', keys, s.dModel));
      if (s.perHead) {
        for (let i = 0; i < heads; i++) matrices.push(def('WQ', s.dModel, s.dk, i));
        for (let i = 0; i < s.groups; i++) matrices.push(def('WK', s.dModel, s.dk, i), def('WV', s.dModel, s.dv, i));
      } else {
        matrices.push(def('WQ', s.dModel, heads * s.dk), def('WK', s.dModel, s.groups * s.dk), def('WV', s.dModel, s.groups * s.dv));
      }
      if (s.extras.includes('PE')) matrices.push(def('PE', s.queries, s.dModel));
    }
    const outputWidth = s.residual && !s.precomputed ? s.dModel : heads * s.dv;
    if (s.extras.includes('WO') || (s.residual && !s.precomputed)) matrices.push(def('WO', heads * s.dv, outputWidth));
    if (s.extras.includes('mask')) matrices.push(def('mask', s.queries, keys));
    else if (s.extras.includes('booleanMask')) matrices.push(def('mask', s.queries, keys, undefined, true));
    if (s.extras.includes('padding')) matrices.push(def('padding', 1, keys, undefined, true));
    if (s.extras.includes('dO')) matrices.push(def('dO', s.queries, s.extras.includes('WO') || (s.residual && !s.precomputed) ? outputWidth : heads * s.dv));
    if (s.score === 'general') matrices.push(def('Wa', s.dk, s.dk));
    if (s.score === 'additive') matrices.push(def('W1', s.dk, s.da), def('W2', s.dk, s.da), def('va', 1, s.da));
    return {
      index: 0,
      range,
      options: {
        heads,
        ...(s.groupSize > 1 ? { kvHeads: s.groups } : {}),
        score: s.score,
        dtype: s.dtype,
        ...(s.causal ? { causal: s.causal } : {}),
        ...(s.residual && !s.precomputed ? { residual: true } : {}),
        ...(s.gradients ? { gradients: true } : {}),
      },
      matrices,
    };
  }

  it('consistent problems are accepted and computed; perturbed ones are computed or refused with an error (2,000 cases)', () => {
    let accepted = 0;
    fc.assert(
      fc.property(shape, perturbation, (s, change) => {
        const problem = consistent(s);
        if (change) {
          const k = change.which % problem.matrices.length;
          const m = problem.matrices[k];
          if (change.drop) problem.matrices.splice(k, 1);
          else problem.matrices[k] = def(m.role as Role, Math.max(1, m.value.rows + change.rows), Math.max(1, m.value.cols + change.cols), m.head, m.boolean);
        }
        const { spec, diagnostics } = buildSpec(problem);
        if (!change) assert.ok(spec, `a consistent problem was refused: ${JSON.stringify(diagnostics.map((d) => d.message))}`);
        if (!spec) {
          assert.ok(diagnostics.some((d) => d.severity === 'error'), 'refused without an error');
          return;
        }
        accepted++;
        runAttention(spec);
      }),
      { numRuns: 2000 },
    );
    assert.ok(accepted > 500, `only ${accepted} of 2000 accepted: the generator is not exercising the engine`);
  });
});
