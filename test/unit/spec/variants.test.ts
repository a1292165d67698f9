// The variant options of the directive (rope, temperature, softcap, alibi, window, segments,
// prefix, sinks, decode): how they read, and every bad one reported at the option's own range.
import { strict as assert } from 'node:assert';
import { parseDocument } from '../../../src/core/parse/index';
import { buildSpec } from '../../../src/core/spec';
import type { Diagnostic } from '../../../src/core/types';
import { rangeOf } from '../parse/helpers';

const X = 'X = [[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]]';

function read(text: string) {
  const { problems, diagnostics } = parseDocument(text);
  assert.equal(problems.length, 1);
  return { problem: problems[0], readDiagnostics: diagnostics, ...buildSpec(problems[0]) };
}

function only(diagnostics: Diagnostic[], code: string): Diagnostic {
  const found = diagnostics.filter((d) => d.code === code);
  assert.equal(found.length, 1, `expected one ${code}: ${JSON.stringify(diagnostics.map((d) => [d.code, d.message]))}`);
  return found[0];
}

describe('variant options', () => {
  it('read with their values and defaults', () => {
    const { problem, spec, diagnostics, readDiagnostics } = read(
      `# attention: heads=2 rope rope_layout=interleaved temperature=0.5 softcap=30 alibi window=2 sinks=1 decode causal\n${X}`,
    );
    assert.deepEqual(readDiagnostics, []);
    assert.deepEqual(diagnostics.filter((d) => d.severity === 'error'), []);
    const o = problem.options;
    assert.deepEqual(
      [o.rope, o.ropeLayout, o.temperature, o.softcap, o.alibi, o.window, o.sinks, o.decode],
      [10000, 'interleaved', 0.5, 30, true, 2, 1, true],
    );
    assert.ok(spec);
  });

  it('rope=BASE, rope_layout=half, prefix=P and aliases', () => {
    const { problem } = read(`# attention: rotary=500000 rope_layout=rotate_half prefix=2 sliding_window=3\n${X}`);
    assert.deepEqual([problem.options.rope, problem.options.ropeLayout, problem.options.prefix, problem.options.window], [500000, 'half', 2, 3]);
  });

  it('remembers where each option was written', () => {
    const text = `# attention: heads=2 window=3\n${X}`;
    assert.deepEqual(read(text).problem.optionRanges?.window, rangeOf(text, 'window=3'));
  });

  const badValues: Array<[string, string, RegExp]> = [
    ['window=0', '0', /whole number of tokens from 1/],
    ['window=-2', '-2', /whole number of tokens from 1/],
    ['sinks=1.5', '1.5', /whole number of tokens/],
    ['prefix=x', 'x', /whole number of tokens/],
    ['rope=-10000', '-10000', /base above 1/],
    ['rope=0', '0', /base above 1/],
    ['softcap=0', '0', /positive number/],
    ['softcap=-5', '-5', /positive number/],
    ['temperature=0', '0', /positive number/],
    ['rope_layout=diagonal', 'diagonal', /not a valid RoPE pair layout/],
  ];
  for (const [option, value, message] of badValues) {
    it(`${option}: an error at its value, nothing computed from it`, () => {
      const text = `# attention: ${option}\n${X}`;
      const { readDiagnostics, problem } = read(text);
      const d = only(readDiagnostics, 'bad-option-value');
      assert.match(d.message, message);
      const at = text.indexOf(option) + option.indexOf('=') + 1;
      assert.deepEqual(d.range, { start: { line: 0, character: at }, end: { line: 0, character: at + value.length } });
      const key = option.slice(0, option.indexOf('='));
      const field = { window: 'window', sinks: 'sinks', prefix: 'prefix', rope: 'rope', softcap: 'softcap', temperature: 'temperature', rope_layout: 'ropeLayout' }[key];
      assert.equal((problem.options as unknown as Record<string, unknown>)[field as string], undefined);
    });
  }

  it('RoPE on an odd head width: an error at `rope`', () => {
    const text = `# attention: heads=1 rope\n${X}\nW_Q = [[1, 0, 1], [0, 1, 0], [1, 0, 0], [0, 1, 1]]\nW_K = [[1, 0, 1], [0, 1, 0], [1, 0, 0], [0, 1, 1]]\nW_V = [[1, 0], [0, 1], [1, 0], [0, 1]]`;
    const result = read(text);
    assert.equal(result.spec, undefined);
    const d = only(result.diagnostics, 'rope-odd-width');
    assert.match(d.message, /3 columns/);
    assert.deepEqual(d.range, rangeOf(text, 'rope'));
  });

  it('segment ids of the wrong length: an error at the segments row', () => {
    const text = `# attention: causal\n${X}\nsegments = [0, 0, 1, 1]`;
    const result = read(text);
    assert.equal(result.spec, undefined);
    const d = only(result.diagnostics, 'shape-mismatch');
    assert.match(d.message, /segments is 1×4 but there are 3 keys/);
    assert.deepEqual(d.range, rangeOf(text, 'segments'));
  });

  it('segments with more queries than keys: an error at the row (a query\'s document is the id at its position)', () => {
    const text = `${X}\ncontext = [[1, 0, 1, 0], [0, 1, 0, 1]]\nsegments = [0, 1]`;
    const d = only(read(text).diagnostics, 'segments-queries');
    assert.deepEqual(d.range, rangeOf(text, 'segments'));
  });

  it('segments of the right length reach the spec as one row', () => {
    const result = read(`# attention: causal\n${X}\nsegment_ids = [[0], [0], [1]]`);
    assert.deepEqual([...(result.spec?.segments?.data ?? [])], [0, 0, 1]);
  });

  it('alibi_slopes: one per head, else an error at the row; without alibi a warning', () => {
    const wrong = `# attention: heads=2 alibi\n${X}\nalibi_slopes = [0.5, 0.25, 0.125]`;
    const d = only(read(wrong).diagnostics, 'shape-mismatch');
    assert.match(d.message, /one slope per head/);
    assert.deepEqual(d.range, rangeOf(wrong, 'alibi_slopes'));
    const unused = `# attention: heads=2\n${X}\nalibi_slopes = [0.5, 0.25]`;
    assert.equal(only(read(unused).diagnostics, 'unused-matrix').severity, 'warning');
    assert.deepEqual([...(read(`# attention: heads=2 alibi\n${X}\nalibi_slopes = [0.5, 0.25]`).spec?.alibiSlopes?.data ?? [])], [0.5, 0.25]);
  });

  it('sinks without a window, rope_layout without rope: warnings at the option', () => {
    const text = `# attention: causal sinks=1 rope_layout=interleaved\n${X}`;
    const { diagnostics, spec } = read(text);
    const unused = diagnostics.filter((d) => d.code === 'unused-option');
    assert.deepEqual(unused.map((d) => d.range), [rangeOf(text, 'rope_layout=interleaved'), rangeOf(text, 'sinks=1')]);
    assert.ok(spec);
  });

  it('decode with gradients: an error at `decode`', () => {
    const text = `# attention: decode grad\n${X}`;
    const d = only(read(text).diagnostics, 'decode-gradients');
    assert.deepEqual(d.range, rangeOf(text, 'decode'));
  });

  it('the unknown-option message lists the variant keys', () => {
    const text = `# attention: windw=2\n${X}`;
    const d = only(read(text).readDiagnostics, 'unknown-option');
    assert.match(d.message, /window/);
    assert.match(d.suggestion ?? '', /window/);
  });
});
