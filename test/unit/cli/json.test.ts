// `--json` as scripts use it: for every outcome of every command — a report, a usage error, a
// file that cannot be read — exactly one JSON object on stdout, and on stderr at most one line.
// The CLI is bundled by esbuild (with the fast path's files beside it) and run as a user runs it.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleCli } from './bundle';

const root = join(__dirname, '..', '..', '..');
const tensors = join(root, 'test', 'fixtures', 'tensors');
const note = join(root, 'examples', 'notations', 'note.md');

interface JsonOutcome {
  status: number | null;
  object: Record<string, unknown>;
  stderrLines: string[];
}

describe('CLI: --json for every outcome', function () {
  this.timeout(60000);
  let dir: string;
  let bundle: string;

  /** Runs the CLI and checks the contract: stdout is one JSON object on one line, stderr one line at most. */
  const json = (...args: string[]): JsonOutcome => {
    const run = spawnSync(process.execPath, [bundle, ...args], { encoding: 'utf8', cwd: dir });
    const lines = run.stdout.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, `one line on stdout for ${args.join(' ')}: ${run.stdout.slice(0, 500)}`);
    const object = JSON.parse(lines[0]) as Record<string, unknown>;
    assert.equal(typeof object, 'object');
    const stderrLines = run.stderr.split('\n').filter(Boolean);
    assert.ok(stderrLines.length <= 1, `at most one line on stderr for ${args.join(' ')}: ${run.stderr}`);
    return { status: run.status, object, stderrLines };
  };

  const assertError = (outcome: JsonOutcome, kind: string, exitCode: number, message: RegExp) => {
    assert.equal(outcome.status, exitCode);
    assert.deepEqual(Object.keys(outcome.object).sort(), ['error', 'exitCode']);
    assert.equal(outcome.object.exitCode, exitCode);
    const error = outcome.object.error as { kind: string; message: string };
    assert.equal(error.kind, kind);
    assert.match(error.message, message);
    assert.deepEqual(outcome.stderrLines, [`attention-lens: ${error.message}`]);
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'attention-lens-json-'));
    bundle = bundleCli(dir);
    writeFileSync(join(dir, 'junk.bin'), Uint8Array.from({ length: 300 }, (_, i) => (i * 7919) % 256));
    writeFileSync(join(dir, 'ragged.md'), 'X = [[1, 2],\n     [3]]\n');
    writeFileSync(join(dir, 'big.md'), `X = [[${'1, '.repeat(400_000)}1]]\n`);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('run: an unreadable tensor file, a missing file, a file over --max-file-mb', () => {
    assertError(json('run', 'junk.bin', '--json'), 'failure', 1, /^junk\.bin is neither \.npy, \.npz, safetensors nor a PyTorch zip checkpoint\.$/);
    assertError(json('run', 'missing.md', '--json'), 'usage', 2, /^cannot read missing\.md: ENOENT$/);
    assertError(json('run', 'big.md', '--json', '--max-file-mb', '0.5'), 'failure', 1, /^big\.md is 1\.14 MB, larger than --max-file-mb 0\.5/);
  });

  it('run: usage errors exit 2, as JSON when --json is given anywhere', () => {
    assertError(json('--json'), 'usage', 2, /^unknown command `--json`$/);
    assertError(json('frobnicate', '--json'), 'usage', 2, /^unknown command `frobnicate`$/);
    assertError(json('run', '--json'), 'usage', 2, /^no FILE given$/);
    assertError(json('run', note, '--json', '--bogus'), 'usage', 2, /^unknown option `--bogus`$/);
    assertError(json('run', note, '--json', '--problem', '9'), 'usage', 2, /^--problem 9: the file has 1 problem$/);
  });

  it('model and heads: a folder that is no model, a bad option, an attentions file that cannot be read', () => {
    const failure = (outcome: JsonOutcome, prefix: string, kind: string, exitCode: number, message: RegExp) => {
      assert.equal(outcome.status, exitCode);
      assert.deepEqual(outcome.object, { error: { kind, message: (outcome.object.error as { message: string }).message }, exitCode });
      assert.match((outcome.object.error as { message: string }).message, message);
      assert.deepEqual(outcome.stderrLines, [`${prefix}: ${(outcome.object.error as { message: string }).message}`]);
    };
    failure(json('model', dir, '--ids', '1,2', '--json'), 'attention-lens model', 'failure', 1, /has no config\.json: not a Hugging Face model folder$/);
    failure(json('model', dir, '--ids', '1', '--bogus', '--json'), 'attention-lens model', 'usage', 2, /^unknown option `--bogus`$/);
    failure(json('heads', dir, '--text', 'hi', '--json'), 'attention-lens heads', 'failure', 1, /config\.json/);
    assertError(json('heads', 'junk.bin', '--json'), 'failure', 1, /junk\.bin/);
  });

  it('run on a checkpoint: a hostile pickle and a missing X are errors in JSON', () => {
    assertError(json('run', join(tensors, 'pt', 'hostile-os-system.pt'), '--json'), 'failure', 1, /asks for `posix\.system`/);
    assertError(json('run', join(tensors, 'model.safetensors'), '--json', '--layer', '7'), 'failure', 1, /^No layer "7"/);
  });

  it('run: error diagnostics are the report itself, exit 1, nothing on stderr', () => {
    const { status, object, stderrLines } = json('run', 'ragged.md', '--json');
    assert.equal(status, 1);
    assert.deepEqual(stderrLines, []);
    const diagnostics = object.diagnostics as { severity: string; code: string }[];
    assert.ok(diagnostics.some((d) => d.severity === 'error' && d.code === 'ragged-row'), JSON.stringify(diagnostics));
  });

  it('tensors: the listing as JSON, and its errors as JSON', () => {
    const { status, object, stderrLines } = json('tensors', join(tensors, 'model.safetensors'), '--json');
    assert.equal(status, 0);
    assert.deepEqual(stderrLines, []);
    assert.equal(object.format, 'safetensors');
    assert.deepEqual(object.layers, ['model.layers.0.self_attn', 'model.layers.1.self_attn']);
    const query = (object.tensors as { key: string; dtype: string; shape: number[] }[]).find((t) => t.key === 'model.layers.0.self_attn.q_proj.weight');
    assert.deepEqual([query?.dtype, query?.shape], ['float32', [6, 6]]);
    assertError(json('tensors', 'junk.bin', '--json'), 'failure', 1, /^junk\.bin is neither/);
    assertError(json('tensors', 'missing.npy', '--json'), 'usage', 2, /^cannot read missing\.npy: ENOENT$/);
  });

  it('render: a missing asset, its usage error and its diagnostics, each as JSON', () => {
    const report = join(dir, 'report.html');
    assertError(json('render', 'ragged.md', '-o', report, '--json'), 'failure', 1, /^render needs .*webview\.js; build the package first/);
    assertError(json('render', note, '--json'), 'usage', 2, /^render needs -o REPORT\.html$/);
    // The page's assets as a built package has them (their content does not matter here).
    writeFileSync(join(dir, 'dist', 'webview.js'), '');
    mkdirSync(join(dir, 'media'));
    writeFileSync(join(dir, 'media', 'panel.css'), '');
    const { status, object, stderrLines } = json('render', 'ragged.md', '-o', report, '--json');
    assert.equal(status, 1);
    assert.deepEqual(stderrLines, []);
    assert.equal(object.report, report);
    assert.ok((object.diagnostics as { code: string }[]).some((d) => d.code === 'ragged-row'), JSON.stringify(object));
  });
});
