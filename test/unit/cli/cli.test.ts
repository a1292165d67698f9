import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { writeNumberFile } from '../../../bench/inputs';
import { runFootprint } from '../../../src/core/engine/cost';
import { runAttention } from '../../../src/core/engine/index';
import { type JsonReport, matrixRows } from '../../../src/core/format';
import { parseDocument } from '../../../src/core/parse/index';
import { buildSpec } from '../../../src/core/spec';
import type { Matrix } from '../../../src/core/types';

// The CLI as a user runs it: bundled by esbuild as for dist/ (here into a temporary copy of the
// package layout — dist/cli.js with the fast path's attention.wasm and fast-thread.js beside it,
// dist/webview.js, media/panel.css — so the test does not depend on a prior build), run as a
// separate node process on files.
const root = join(__dirname, '..', '..', '..');
const notations = join(root, 'examples', 'notations');
const packageDir = mkdtempSync(join(tmpdir(), 'attention-lens-package-'));
const bundle = join(packageDir, 'dist', 'cli.js');

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [bundle, ...args], { encoding: 'utf8', cwd: root, maxBuffer: 2 ** 26 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

function json(...args: string[]): { status: number | null; report: JsonReport } {
  const run = cli('run', '--json', ...args);
  return { status: run.status, report: JSON.parse(run.stdout) as JsonReport };
}

/** Uniform in [−1, 1) from a seed, as 6-digit decimals: what the file says is what the engine reads. */
function seeded(rows: number, cols: number, seed: number): Matrix {
  let s = seed >>> 0;
  const data = new Float64Array(rows * cols);
  for (let p = 0; p < data.length; p++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    data[p] = Number(((s / 2 ** 32) * 2 - 1).toFixed(6));
  }
  return { rows, cols, data };
}

/** The last output row of causal attention over all of X, straight from the definition (float64). */
function lastRow(X: Matrix, [WQ, WK, WV]: Matrix[]): number[] {
  const d = WQ.cols;
  const project = (W: Matrix, r: number): number[] =>
    Array.from({ length: d }, (_, c) => {
      let sum = 0;
      for (let k = 0; k < X.cols; k++) sum += X.data[r * X.cols + k] * W.data[k * W.cols + c];
      return sum;
    });
  const q = project(WQ, X.rows - 1);
  const scores: number[] = [];
  const values: number[][] = [];
  for (let j = 0; j < X.rows; j++) {
    const k = project(WK, j);
    scores.push(q.reduce((sum, qc, c) => sum + qc * k[c], 0) / Math.sqrt(d));
    values.push(project(WV, j));
  }
  const max = Math.max(...scores);
  const weights = scores.map((s) => Math.exp(s - max));
  const total = weights.reduce((a, b) => a + b, 0);
  return Array.from({ length: d }, (_, c) => weights.reduce((sum, w, j) => sum + (w / total) * values[j][c], 0));
}

describe('CLI: attention-lens run', function () {
  this.timeout(60000);
  let dir: string;
  before(() => {
    buildSync({ entryPoints: [join(root, 'src', 'cli', 'main.ts')], outfile: bundle, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'silent', external: ['onnxruntime-node'] });
    // The native backend's package beside dist/, as a platform .vsix carries it.
    symlinkSync(join(root, 'node_modules'), join(packageDir, 'node_modules'));
    const webview = join(packageDir, 'dist', 'webview.js');
    buildSync({ entryPoints: [join(root, 'webview', 'report.ts')], outfile: webview, bundle: true, platform: 'browser', format: 'esm', target: 'es2022', logLevel: 'silent' });
    for (const file of ['attention.wasm', 'attention-relaxed.wasm', 'fast-thread.js']) copyFileSync(join(root, 'src', 'core', 'engine', 'fast', file), join(packageDir, 'dist', file));
    mkdirSync(join(packageDir, 'media'));
    copyFileSync(join(root, 'media', 'panel.css'), join(packageDir, 'media', 'panel.css'));
    dir = mkdtempSync(join(tmpdir(), 'attention-lens-cli-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(packageDir, { recursive: true, force: true });
  });

  const write = (name: string, text: string): string => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it('a file larger than --max-file-mb: one line on stderr, exit 1, nothing read', () => {
    const file = join(dir, 'big.py');
    const bytes = writeNumberFile(file, 'X', 2000, 64);
    assert.ok(bytes > 2 ** 20 && bytes < 2 * 2 ** 20, String(bytes));
    const run = cli('run', file, '--max-file-mb', '1');
    assert.deepEqual(
      { status: run.status, stdout: run.stdout, stderr: run.stderr },
      { status: 1, stdout: '', stderr: `attention-lens: ${file} is ${Number((bytes / 2 ** 20).toPrecision(3))} MB, larger than --max-file-mb 1: raise that limit to read it.\n` },
    );
  });

  it('a run above --max-matrix-elements: refused before it starts, in one error line, exit 1; --output-only runs it', () => {
    const file = join(dir, 'tokens.py');
    writeNumberFile(file, 'X', 2048, 16);
    const run = cli('run', file, '--max-matrix-elements', '1000000');
    assert.equal(run.status, 1);
    assert.equal(run.stderr, '');
    const errors = run.stdout.split('\n').filter((line) => line.includes(': error: '));
    const { spec } = buildSpec(parseDocument(readFileSync(file, 'utf8')).problems[0]);
    assert.ok(spec);
    const numbers = runFootprint(spec).numbers.toLocaleString('en-US');
    assert.deepEqual(errors, [
      `  ${file}:1:1: error: Problem 1 was not run: it would keep ${numbers} numbers (192 MiB as float64; 1 head of 2048×2048 attention), ` +
        'more than --max-matrix-elements 1,000,000. Use --output-only (the output alone, in O(n·d) memory), raise --max-matrix-elements, or use fewer tokens.',
    ]);
    const outputOnly = json(file, '--output-only', '--max-matrix-elements', '1000000');
    assert.equal(outputOnly.status, 0);
    assert.equal(outputOnly.report.problems[0].output?.length, 2048);
  });

  it('stops quietly, exit 0, when the reader of its output closes the pipe early (| head)', () => {
    const large = join(root, 'examples', 'large', '2048-tokens.py');
    const pipeline = `"${process.execPath}" "${bundle}" run --json "${large}" | head -c 100 > /dev/null; echo "exit $\{PIPESTATUS[0]}"`;
    const run = spawnSync('bash', ['-c', pipeline], { encoding: 'utf8', cwd: root });
    assert.equal(run.stderr, '');
    assert.equal(run.stdout.trim(), 'exit 0');
  });

  it('reads one problem in five notations (Markdown, Python, LaTeX, MATLAB, JSON) with identical results, equal to the engine on the canonical numbers', () => {
    const files = readdirSync(notations).sort();
    assert.deepEqual(files, ['example.json', 'example.m', 'example.py', 'example.tex', 'note.md']);
    const problems = files.map((file) => {
      const { status, report } = json(join(notations, file));
      assert.equal(status, 0, file);
      assert.deepEqual(report.diagnostics, [], file);
      assert.equal(report.problems.length, 1, file);
      const { line: _line, ...problem } = report.problems[0];
      return problem;
    });
    for (let k = 1; k < problems.length; k++) assert.deepEqual(problems[k], problems[0], `${files[k]} differs from ${files[0]}`);

    // The canonical numbers: the JSON example read by JSON.parse, not by our reader.
    const canonical = JSON.parse(readFileSync(join(notations, 'example.json'), 'utf8')) as Record<string, (number | string)[][]>;
    const toMatrix = (rows: (number | string)[][]): Matrix => ({ rows: rows.length, cols: rows[0].length, data: Float64Array.from(rows.flat().map(Number)) });
    const expected = runAttention({
      options: { heads: 1, score: 'scaled_dot', dtype: 'float64' },
      X: toMatrix(canonical.X),
      WQ: [toMatrix(canonical.W_Q)],
      WK: [toMatrix(canonical.W_K)],
      WV: [toMatrix(canonical.W_V)],
      mask: { kind: 'additive', value: toMatrix(canonical.M) },
    });
    const [head] = problems[0].heads;
    assert.deepEqual(head.weights, matrixRows(expected.heads[0].weights));
    assert.deepEqual(head.mask, matrixRows(expected.heads[0].mask as Matrix));
    assert.deepEqual(problems[0].output, matrixRows(expected.output));
    assert.deepEqual(problems[0].tokens, ['the', 'cat', 'sat']);
    assert.equal(problems[0].name, 'One problem, five notations');
  });

  it('prints the JSON shape of issue 2: matrices as rows, non-finite as strings, mask null without one', () => {
    const { status, report } = json(join(root, 'examples', '04-multi-head.md'));
    assert.equal(status, 0);
    const [problem] = report.problems;
    assert.deepEqual(Object.keys(problem).sort(), ['checks', 'concat', 'gradients', 'heads', 'index', 'keyTokens', 'line', 'name', 'options', 'output', 'outputOnly', 'residual', 'tokens', 'warnings']);
    assert.equal(problem.outputOnly, false);
    assert.deepEqual(Object.keys(problem.heads[0]).sort(), ['K', 'Q', 'V', 'kvHead', 'mask', 'output', 'scaled', 'scores', 'weights']);
    assert.equal(problem.heads.length, 2);
    assert.equal(problem.heads[0].mask, null);
    assert.equal(problem.residual?.length, 4);
    assert.equal(problem.line, 10);
    const causal = json(join(root, 'examples', '02-causal-mask.md')).report.problems[0];
    assert.deepEqual(causal.heads[0].mask?.[0], [0, '-Infinity', '-Infinity', '-Infinity']);
  });

  it('runs the variant examples (RoPE + GQA, sliding window with a sink, softcap, ALiBi/documents/prefix/decode) cleanly, reporting their options', () => {
    const examples = ['08-rope-gqa.md', '09-sliding-window.md', '10-softcap.md', '11-alibi-documents-decode.md'].map((f) => join(root, 'examples', f));
    for (const file of examples) {
      const { status, report } = json(file);
      assert.equal(status, 0, file);
      assert.deepEqual(report.diagnostics, [], file);
      for (const problem of report.problems) assert.deepEqual(problem.warnings, [], `${file}: ${problem.name}`);
    }
    const rope = json(examples[0]).report.problems[0];
    assert.deepEqual([rope.options.rope, rope.options.kvHeads, rope.heads.length, rope.heads.map((h) => h.kvHead)], [10000, 2, 4, [0, 0, 1, 1]]);
    // The window: query i sees keys i − 2 … i and the sink 0, nothing else.
    const window = json(examples[1]).report.problems[0].heads[0].weights;
    window.forEach((row, i) => row.forEach((w, j) => assert.equal(w !== 0, j === 0 || (j <= i && j > i - 3), `weight ${i},${j}`)));
    // 8×8, causal window 3 with a sink: query i sees key 0 and keys i−2…i, 26 of 64 pairs, so 38
    // are blocked, at 2·d_k + 5 + 2·d_v = 13 FLOPs each; of the 16 2×2 tiles, the 6 above the
    // diagonal and the one of queries 7–8 × keys 3–4 are blocked whole.
    assert.match(cli('run', examples[1]).stdout, /mask: blocks 59\.4% of the Lq×Lk products \(494 FLOPs a kernel could skip\); 43\.8% of 2×2 tiles entirely/);
    const text = cli('run', examples[2]).stdout;
    assert.match(text, /3\. scaled S × 0\.7071 \(1\/√2\) \/ 0\.8000 \(temperature\), then 2\.0000·tanh\(s\/2\.0000\) \(softcap\)/);
    // The decode step is the last row of the same file's problem run without `decode`.
    const decodeFile = write('decode.md', readFileSync(examples[3], 'utf8'));
    const step = json(decodeFile, '--problem', '4').report.problems[0];
    const full = json(write('full.md', readFileSync(examples[3], 'utf8').replace('causal rope decode', 'causal rope')), '--problem', '4').report.problems[0];
    assert.deepEqual(step.output, full.output?.slice(-1));
    assert.match(cli('run', decodeFile, '--problem', '4').stdout, /decode: query 5 alone against every key/);
  });

  it('exit 1 with 1-based diagnostics when the file has an error; the other problems still run', () => {
    const file = write('bad.md', 'X = [[1, 2],\n     [3]]\n\n<!-- attention: heads=1 -->\nX = [[1, 0]]\n');
    const { status, report } = json(file);
    assert.equal(status, 1);
    assert.deepEqual(report.diagnostics.map((d) => [d.line, d.column, d.endLine, d.endColumn, d.severity, d.code]), [
      [1, 1, 2, 10, 'info', 'waiting-for-matrix'],
      [2, 7, 2, 8, 'error', 'ragged-row'],
      [5, 1, 5, 2, 'info', 'identity-projections'],
    ]);
    assert.deepEqual(report.problems.map((p) => p.output), [null, [[1, 0]]], 'the clean problem ran');
  });

  it('exit 1 for a spec error, and the problem is listed without results', () => {
    const file = write('shape.py', 'X = [[1, 0, 1]]\nW_Q = [[1], [0]]\nW_K = [[1], [0], [1]]\nW_V = [[1], [0], [1]]\n');
    const { status, report } = json(file);
    assert.equal(status, 1);
    assert.match(report.diagnostics[0].message, /^X is 1×3 but W_Q has 2 rows/);
    assert.deepEqual([report.diagnostics[0].line, report.diagnostics[0].column], [2, 1]);
    assert.deepEqual([report.problems[0].output, report.problems[0].heads], [null, []]);
  });

  it('exit 1 for a file without any problem', () => {
    const { status, report } = json(write('empty.txt', 'nothing here\n'));
    assert.equal(status, 1);
    assert.equal(report.diagnostics[0].code, 'no-problems');
  });

  it('reports the options the run used (heads inferred from per-head matrices)', () => {
    const file = write('heads.md', 'X = [[1, 0], [0, 1]]\nW_Q1 = [[1], [0]]\nW_Q2 = [[0], [1]]\nW_K1 = [[1], [0]]\nW_K2 = [[0], [1]]\nW_V1 = [[1], [0]]\nW_V2 = [[0], [1]]\n');
    const { status, report } = json(file);
    assert.equal(status, 0);
    assert.equal(report.problems[0].options.heads, 2);
    assert.equal(report.problems[0].heads.length, 2);
    assert.match(cli('run', file).stdout, /— heads=2 score=scaled_dot/);
  });

  it('--problem N runs only that problem', () => {
    const file = write('two.md', '# attention: name="one"\nX = [[1]]\n# attention: name="two"\nX = [[2]]\n');
    const { report } = json(file, '--problem', '2');
    assert.deepEqual(report.problems.map((p) => [p.index, p.name, p.output]), [[2, 'two', [[2]]]]);
  });

  it('usage errors exit 2 with the usage text', () => {
    for (const args of [[], ['frobnicate'], ['run'], ['run', 'x.md', '--bogus'], ['run', join(dir, 'missing.md')], ['run', join(notations, 'note.md'), '--problem', '0'], ['run', join(notations, 'note.md'), '--problem', '3']]) {
      const run = cli(...args);
      assert.equal(run.status, 2, args.join(' '));
      assert.match(run.stderr, /Usage:/, args.join(' '));
    }
  });

  it('--help and --version', () => {
    const help = cli('--help');
    assert.equal(help.status, 0);
    assert.match(help.stdout, /attention-lens run FILE \[--json\] \[--problem N\] \[--output-only\]/);
    const version = cli('--version');
    assert.equal(version.stdout.trim(), JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
  });

  it('the text report walks through each step with token labels', () => {
    const run = cli('run', join(root, 'examples', '02-causal-mask.md'));
    assert.equal(run.status, 0);
    for (const step of ['Problem 1 "Causal mask"', '1. Q (4×2)', '2. scores S = Q·Kᵀ', '3. scaled S × 0.7071 (1/√2)', '4. + mask', '5. weights A = softmax', '6. output A·V', '✓ rows of A sum to 1']) {
      assert.ok(run.stdout.includes(step), `missing ${step}`);
    }
    assert.match(run.stdout, /The +\[ 0\.0000 +-∞ +-∞ +-∞ \]/);
  });

  it('--output-only runs 16384 causal tokens in O(n·d) memory: the output equals the reference engine on a prefix and the formula on the last row', () => {
    const n = 16384;
    const d = 8;
    const X = seeded(n, d, 11);
    const W = [seeded(d, d, 12), seeded(d, d, 13), seeded(d, d, 14)];
    const literal = (m: Matrix): string => `[${Array.from({ length: m.rows }, (_, r) => `[${Array.from(m.data.subarray(r * m.cols, (r + 1) * m.cols)).join(', ')}]`).join(',\n')}]`;
    const file = write('long.py', `# attention: causal\nX = ${literal(X)}\nW_Q = ${literal(W[0])}\nW_K = ${literal(W[1])}\nW_V = ${literal(W[2])}\n`);
    const { status, report } = json(file, '--output-only');
    assert.equal(status, 0, JSON.stringify(report.diagnostics));
    const [problem] = report.problems;
    assert.deepEqual([problem.outputOnly, problem.heads.length, problem.checks, problem.output?.length], [true, 0, null, n]);
    const output = problem.output as number[][];
    // Causal: the first 64 outputs see only the first 64 tokens.
    const prefix = 64;
    const head: Matrix = { rows: prefix, cols: d, data: X.data.slice(0, prefix * d) };
    const expected = runAttention({ options: { heads: 1, score: 'scaled_dot', dtype: 'float64', causal: 'top-left' }, X: head, WQ: [W[0]], WK: [W[1]], WV: [W[2]] }).output;
    for (let i = 0; i < prefix; i++) for (let c = 0; c < d; c++) assert.ok(Math.abs(output[i][c] - expected.data[i * d + c]) < 1e-12, `output[${i}][${c}]`);
    const last = lastRow(X, W);
    last.forEach((value, c) => assert.ok(Math.abs(output[n - 1][c] - value) < 1e-12, `output[${n - 1}][${c}]: ${output[n - 1][c]} vs ${value}`));
    // Without --output-only the same file would keep every n×n intermediate (12 GiB): refused before it starts, with the way out.
    const full = cli('run', file);
    assert.equal(full.status, 1);
    assert.match(full.stdout, /error: Problem 1 was not run: it would keep [\d,]+ numbers \(12\.0 GiB as float64; 1 head of 16384×16384 attention\), more than --max-matrix-elements 67,108,864\. Use --output-only/);
    // Allowed that much, the engine itself says where its limit is.
    const allowed = cli('run', file, '--max-matrix-elements', '1e10');
    assert.equal(allowed.status, 1);
    assert.match(allowed.stdout, /needs 10\.0 GiB, more than WebAssembly can address \(4 GiB\): compute the output alone \(`attention-lens run --output-only`\)/);
  });

  it('--output-only: the text report shows the output only; scores it does not cover are an error diagnostic', () => {
    const run = cli('run', join(root, 'examples', '04-multi-head.md'), '--output-only');
    assert.equal(run.status, 0, run.stderr);
    for (const line of ['Output only: online softmax', 'Concat(heads) (4×4)', 'Output = Concat · W_O (4×4)', "Residual E' = E + ΔE"]) assert.ok(run.stdout.includes(line), `missing ${line}`);
    assert.ok(!run.stdout.includes('weights A'), 'an output-only report shows no weights');
    const general = cli('run', write('general.md', '<!-- attention: score=general -->\nX = [[1, 0], [0, 1]]\nW_a = [[1, 0], [0, 1]]\n'), '--output-only');
    assert.equal(general.status, 1);
    assert.match(general.stdout, /Could not compute: the output-only path does not cover score=general/);
  });

  it('render writes one self-contained HTML report (CSP with a nonce, the panel script inlined, nothing fetched)', () => {
    const output = join(dir, 'report.html');
    const run = cli('render', join(notations, 'note.md'), '-o', output);
    assert.equal(run.status, 0, run.stderr);
    const html = readFileSync(output, 'utf8');
    assert.match(html, /^<!DOCTYPE html>/);
    assert.match(html, /Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;nonce-[0-9a-f]+&#39;/);
    assert.match(html, /<title>One problem, five notations<\/title>/);
    assert.ok(html.length > readFileSync(join(packageDir, 'dist', 'webview.js'), 'utf8').length, 'the script is inlined');
    assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=["']?https?:/);
  });

  it('render: errors exit 1 (the clean problems are still written), a missing -o exits 2', () => {
    const output = join(dir, 'partial.html');
    const run = cli('render', write('partial.md', 'X = [[1, 2], [3]]\n\n<!-- attention: name="fine" -->\nX = [[1, 0]]\n'), '-o', output);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /partial\.md:1:15: error: Row 2 of X has 1 entry but row 1 has 2/);
    assert.ok(existsSync(output));
    assert.equal(cli('render', join(notations, 'note.md')).status, 2);
  });

  it('reads a notebook by cells: the run equals PyTorch on the notebook, and problems point at their cell', () => {
    const reference = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'notebooks', 'example.expected.json'), 'utf8')) as { output: number[][] };
    const { status, report } = json(join(root, 'examples', '12-notebook.ipynb'));
    assert.equal(status, 0, JSON.stringify(report.diagnostics));
    const [problem] = report.problems;
    assert.deepEqual([problem.name, problem.cell, problem.line], ['notebook', 2, 3]);
    (problem.output as number[][]).forEach((row, i) => row.forEach((x, j) => assert.ok(Math.abs(x - reference.output[i][j]) < 1e-12, `output[${i}][${j}]`)));
    const text = cli('run', join(root, 'examples', '12-notebook.ipynb'));
    assert.match(text.stdout, /Problem 1 "notebook" \(cell 2, line 3\)/);
  });

  it('a notebook error is reported at cell N, line M (text and JSON); a broken notebook at its JSON line', () => {
    const notebook = {
      nbformat: 4,
      cells: [
        { cell_type: 'markdown', source: ['# Shapes\n'] },
        { cell_type: 'code', source: ['X = [[1, 2, 3],\n', '     [4, 5, 6]]'], outputs: [] },
        { cell_type: 'code', source: ['# projections\n', 'W_Q = [[1, 0],\n', '       [0]]'], outputs: [] },
      ],
    };
    const file = write('shapes.ipynb', JSON.stringify(notebook));
    const run = cli('run', file);
    assert.equal(run.status, 1);
    assert.match(run.stdout, /shapes\.ipynb: cell 3, line 3, column 9: error: Row 2 of W_Q has 1 entry but row 1 has 2/);
    const { report } = json(file);
    assert.deepEqual(
      report.diagnostics.filter((d) => d.code === 'ragged-row').map((d) => [d.cell, d.line, d.column]),
      [[3, 3, 9]],
    );
    const broken = cli('run', write('broken.ipynb', '{"cells": [\n  {"cell_type": "code",, }]}'));
    assert.equal(broken.status, 1);
    assert.match(broken.stdout, /broken\.ipynb:2:\d+: error: Not a readable notebook/);
  });

  it('render works on a notebook', () => {
    const output = join(dir, 'notebook.html');
    const run = cli('render', join(root, 'examples', '12-notebook.ipynb'), '-o', output);
    assert.equal(run.status, 0, run.stderr);
    assert.match(readFileSync(output, 'utf8'), /<title>notebook<\/title>/);
  });
});
