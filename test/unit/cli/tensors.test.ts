// The CLI on tensor files and on text that loads tensors, bundled and run as a user runs it;
// numbers against PyTorch (test/fixtures/tensors/expected.json, scripts/gen_tensor_fixtures.py).
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import type { JsonReport } from '../../../src/core/format';

const root = join(__dirname, '..', '..', '..');
const fixtures = join(root, 'test', 'fixtures', 'tensors');
const expected = JSON.parse(readFileSync(join(fixtures, 'expected.json'), 'utf8')) as {
  attention: Record<string, { weights: number[][][]; output: number[][] }>;
};

describe('CLI: tensor files', function () {
  this.timeout(60000);
  let packageDir: string;
  let bundle: string;
  const cli = (...args: string[]) => {
    const run = spawnSync(process.execPath, [bundle, ...args], { encoding: 'utf8', cwd: root });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  };
  const json = (...args: string[]) => {
    const run = cli('run', '--json', ...args);
    assert.equal(run.status, 0, run.stderr + run.stdout.slice(0, 2000));
    return JSON.parse(run.stdout) as JsonReport & { notes?: string[] };
  };
  const assertWeights = (report: JsonReport, name: string) => {
    const want = expected.attention[name];
    const heads = report.problems[0].heads as unknown as { weights: number[][] }[];
    assert.equal(heads.length, want.weights.length);
    heads.forEach((head, h) => head.weights.flat().forEach((value, i) => assert.ok(Math.abs(value - want.weights[h].flat()[i]) < 1e-9, `head ${h + 1} weight ${i}: ${value} vs ${want.weights[h].flat()[i]}`)));
  };

  before(() => {
    packageDir = mkdtempSync(join(tmpdir(), 'attention-lens-tensors-'));
    bundle = join(packageDir, 'dist', 'cli.js');
    buildSync({ entryPoints: [join(root, 'src', 'cli', 'main.ts')], outfile: bundle, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'silent', external: ['onnxruntime-node'] });
    symlinkSync(join(root, 'node_modules'), join(packageDir, 'node_modules')); // the native backend, as a platform .vsix carries it
    for (const file of ['attention.wasm', 'fast-thread.js']) copyFileSync(join(root, 'src', 'core', 'engine', 'fast', file), join(packageDir, 'dist', file));
  });
  after(() => rmSync(packageDir, { recursive: true, force: true }));

  it('run MODEL --x ACTS: the layer as PyTorch computes it, and the conventions as notes', () => {
    const report = json(join(fixtures, 'pt', 'mha.pt'), '--x', join(fixtures, 'acts.npy'), '--heads', '2');
    assertWeights(report, 'mha');
    assert.ok(report.notes?.some((note) => /in_proj_weight is split/.test(note)));
  });

  it('--layer picks a layer by index or prefix; X may be a tensor of the same file', () => {
    assertWeights(json(join(fixtures, 'pt', 'llama.pt'), '--layer', '1', '--heads', '3'), 'llama-layer1');
    assertWeights(json(join(fixtures, 'pt', 'llama.pt'), '--layer', 'model.layers.0.self_attn', '--x', 'hidden_states', '--heads', '3'), 'llama-layer0');
    const wrong = cli('run', join(fixtures, 'pt', 'llama.pt'), '--layer', '7');
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, /No layer "7": the layers are 0 \(model\.layers\.0\.self_attn\), 1 \(model\.layers\.1\.self_attn\)/);
  });

  it('run NOTES.md reads the tensors a text loads, relative to the text', () => {
    assertWeights(json(join(root, 'examples', 'tensors', 'notes.md')), 'example');
  });

  it('a text naming a missing file or key gets an error at that line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'attention-lens-refs-'));
    try {
      copyFileSync(join(fixtures, 'model.safetensors'), join(dir, 'model.safetensors'));
      writeFileSync(join(dir, 'notes.py'), 'X = np.load("missing.npy")\nW_Q = load_file("model.safetensors")["nope"]\n');
      const run = cli('run', join(dir, 'notes.py'));
      assert.equal(run.status, 1);
      assert.match(run.stdout, /notes\.py:1:1: error: X: cannot read missing\.npy: no such file next to this one/);
      assert.match(run.stdout, /notes\.py:2:1: error: W_Q: model\.safetensors has no tensor "nope"; it has "model\.layers\.0/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tensors FILE lists dtype, shape, statistics and layers', () => {
    const run = cli('tensors', join(fixtures, 'model.safetensors'));
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /model\.layers\.0\.self_attn\.q_proj\.weight {2}float32 6×6 {2}min -?\d/);
    assert.match(run.stdout, /attention layers: 0 \(model\.layers\.0\.self_attn\), 1 \(model\.layers\.1\.self_attn\)/);
    assert.match(run.stdout, /metadata heads: 3/);
  });

  it('refuses a hostile checkpoint by the global it names, exit 1, nothing run', () => {
    const run = cli('run', join(fixtures, 'pt', 'hostile-os-system.pt'));
    assert.equal(run.status, 1);
    assert.match(run.stderr, /asks for `posix\.system`/);
    assert.doesNotMatch(run.stdout + run.stderr, /attention-lens-was-here/);
  });
});
