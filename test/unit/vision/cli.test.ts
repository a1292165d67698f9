// `attention-lens model DIR --image FILE` bundled and run as a user runs it: the exact JSON
// against the fixture's torch reference, the text report, and the bad inputs as one line, exit 1.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertOneLine, bundleCli } from '../cli/bundle';
import { REFERENCE_TOLERANCE } from '../model/fixtures';
import { visionFixture, visionReferences } from './fixtures';

const root = join(__dirname, '..', '..', '..');

/** The bundled CLI's `model` command with `args`, from the repository's root. */
function modelCli(bundle: string, args: string[]) {
  const { status, stdout, stderr } = spawnSync(process.execPath, [bundle, 'model', ...args], { encoding: 'utf8', cwd: root, maxBuffer: 64 * 2 ** 20 });
  return { status, stdout, stderr };
}

describe('CLI: model --image', function () {
  this.timeout(300000);
  let dir: string;
  let bundle: string;
  const cli = (...args: string[]) => modelCli(bundle, args);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'vision-cli-'));
    bundle = bundleCli(dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--json prints exactly the issue keys, equal to the reference (DeiT with its teacher: [CLS], [DIST], patches)', () => {
    const folder = visionFixture('deit-teacher');
    const [reference] = visionReferences('deit-teacher');
    const run = cli(folder, '--image', join(folder, reference.picture), '--json');
    assert.equal(run.status, 0, run.stderr);
    const json = JSON.parse(run.stdout) as Record<string, unknown>;
    assert.deepEqual(Object.keys(json), ['architecture', 'tokens', 'patch_grid', 'attentions', 'hidden_last', 'logits_last']);
    assert.equal(json.architecture, 'deit');
    assert.deepEqual(json.tokens, reference.tokens);
    assert.deepEqual((json.tokens as string[]).slice(0, 3), ['[CLS]', '[DIST]', '(0,0)']);
    assert.deepEqual(json.patch_grid, reference.patch_grid);
    const attentions = json.attentions as number[][][][];
    let max = 0;
    attentions.forEach((layer, l) => layer.forEach((head, h) => head.forEach((row, q) => row.forEach((v, k) => (max = Math.max(max, Math.abs(v - reference.attentions[l][h][q][k])))))));
    assert.ok(max < REFERENCE_TOLERANCE.attention, String(max));
    assert.equal((json.logits_last as number[]).length, reference.logits_last!.length);
  });

  it('the text report names the patch grid, the top labels and where the class token looks; a model without a classifier has no logits_last', () => {
    const folder = visionFixture('vit-classifier');
    const run = cli(folder, '--image', join(folder, 'rgba.png'));
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^vit: 2 layers × 2 heads, 17 tokens/);
    assert.match(run.stdout, /patch grid: 4 × 4/);
    assert.match(run.stdout, /labels: "class [A-G]" \d+\.\d%/);
    assert.match(run.stdout, /where the class token "\[CLS\]" looks/);
    const siglip = visionFixture('siglip');
    const json = JSON.parse(cli(siglip, '--image', join(siglip, 'rgba.png'), '--json').stdout) as Record<string, unknown>;
    assert.deepEqual(Object.keys(json), ['architecture', 'tokens', 'patch_grid', 'attentions', 'hidden_last']);
    assert.equal((json.tokens as string[])[0], '(0,0)');
  });

  it('refuses in one line: text to a vision model, a picture to a text model, a file that is not a picture, a truncated PNG, a missing file', () => {
    const vit = visionFixture('vit-classifier');
    assertOneLine(cli(vit, '--text', 'a cat'), /is a vision model \(vit\): give it a picture \(--image FILE\), not text or token ids$/m);
    const text = join(dir, 'gpt2-config');
    rmSync(text, { recursive: true, force: true });
    mkdirSync(text, { recursive: true });
    writeFileSync(join(text, 'config.json'), JSON.stringify({ model_type: 'gpt2', n_embd: 8, n_head: 2, n_layer: 1 }));
    assertOneLine(cli(text, '--image', join(vit, 'exact.png')), /is a text model \(gpt2\): give it text \(--text\) or token ids, not a picture$/m);
    assertOneLine(cli(vit, '--image', join(vit, 'config.json')), /config\.json is not a PNG or JPEG picture$/m);
    const truncated = join(dir, 'half.png');
    const png = readFileSync(join(vit, 'exact.png'));
    writeFileSync(truncated, png.subarray(0, png.length - 100));
    assertOneLine(cli(vit, '--image', truncated), /half\.png is a truncated PNG/);
    assertOneLine(cli(vit, '--image', join(dir, 'nowhere.png')), /cannot read the picture .*nowhere\.png \(ENOENT\)/);
  });
});
