// `attention-lens model DIR (--text | --ids) (--target | --target-ids | --generate) [--json]` on
// encoder–decoder folders, bundled and run as a user runs it: the exact JSON against the
// fixture's torch reference, the text report, and bad input as one line, exit 1.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertOneLine, bundleCli } from '../cli/bundle';
import { modelFixture, REFERENCE_TOLERANCE } from '../model/fixtures';
import { languageReference, seq2seqFixture, seq2seqReference } from './fixtures';

const root = join(__dirname, '..', '..', '..');

describe('CLI: model on encoder–decoder folders', function () {
  this.timeout(300000);
  let dir: string;
  let bundle: string;
  const cli = (...args: string[]) => spawnSync(process.execPath, [bundle, 'model', ...args], { encoding: 'utf8', cwd: root, maxBuffer: 64 * 2 ** 20 });

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'seq2seq-cli-'));
    bundle = bundleCli(dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--json prints exactly the issue keys, equal to the reference (BART, source and target as text; T5 with --target-ids)', () => {
    const reference = seq2seqReference('bart-bin');
    const run = cli(seq2seqFixture('bart-bin'), '--text', reference.source_text!, '--target', reference.target_text!, '--json');
    assert.equal(run.status, 0, run.stderr);
    const json = JSON.parse(run.stdout) as Record<string, unknown>;
    assert.deepEqual(Object.keys(json), ['architecture', 'tokens', 'token_ids', 'target_tokens', 'target_ids', 'encoder_attentions', 'decoder_attentions', 'cross_attentions', 'hidden_last', 'logits_last']);
    assert.equal(json.architecture, 'bart');
    assert.deepEqual(json.token_ids, reference.source_ids);
    assert.deepEqual(json.target_ids, reference.target_ids);
    assert.equal((json.tokens as string[]).length, reference.source_ids.length);
    for (const key of ['encoder_attentions', 'decoder_attentions', 'cross_attentions'] as const) {
      const got = json[key] as number[][][][];
      let max = 0;
      reference[key].forEach((layer, l) => layer.forEach((head, h) => head.forEach((row, q) => row.forEach((v, k) => (max = Math.max(max, Math.abs(v - got[l][h][q][k])))))));
      assert.ok(max < REFERENCE_TOLERANCE.attention, `${key}: ${max}`);
    }
    assert.equal((json.logits_last as number[]).length, reference.logits_last.length);
    const t5 = seq2seqReference('t5-v1_1-bf16');
    const ids = JSON.parse(cli(seq2seqFixture('t5-v1_1-bf16'), '--ids', t5.source_ids.join(','), '--target-ids', t5.target_ids.join(','), '--json').stdout) as Record<string, unknown>;
    assert.deepEqual(ids.target_ids, t5.target_ids);
    assert.deepEqual((ids.cross_attentions as number[][][][])[0][0].length, t5.target_ids.length);
    assert.deepEqual((ids.cross_attentions as number[][][][])[0][0][0].length, t5.source_ids.length);
  });

  it('--generate N: the greedy tokens; the text report names source, target, next token and where the last target token looks', () => {
    const reference = seq2seqReference('marian-f16');
    const run = cli(seq2seqFixture('marian-f16'), '--ids', reference.source_ids.join(','), '--generate', String(reference.generate));
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^marian: encoder 2 layers × 4 heads, decoder 2 × 2; 7 source tokens, 7 target tokens .*generated 6 tokens in \d+ ms\)/);
    assert.match(run.stdout, /\ntarget: "#0" "#10"/);
    assert.match(run.stdout, /\nnext after "#10": /);
    assert.match(run.stdout, /where the last target token "#10" looks in the source/);
    assert.match(run.stdout, /\n {2}L1: H0 "#\d+" \d\.\d\d · H1/);
  });

  it('--src-lang and --tgt-lang: an mBART-50 source and target in those languages, as the reference places their codes', () => {
    const reference = languageReference('mbart-50');
    const run = cli(seq2seqFixture('mbart-50'), '--text', reference.source_text!, '--target', reference.target_text!, '--src-lang', reference.languages.source, '--tgt-lang', reference.languages.target, '--json');
    assert.equal(run.status, 0, run.stderr);
    const json = JSON.parse(run.stdout) as { token_ids: number[]; target_ids: number[]; tokens: string[]; target_tokens: string[] };
    assert.deepEqual([json.token_ids, json.target_ids], [reference.source_ids, reference.target_ids]);
    assert.deepEqual([json.tokens[0], json.target_tokens.slice(0, 2)], ['fr_XX', ['</s>', 'ro_RO']]);
    const generated = cli(seq2seqFixture('mbart-cc25'), '--ids', languageReference('mbart-cc25').source_ids.join(','), '--tgt-lang', 'ro_RO', '--generate', '6', '--json');
    assert.equal(generated.status, 0, generated.stderr);
    assert.deepEqual((JSON.parse(generated.stdout) as { target_ids: number[] }).target_ids, languageReference('mbart-cc25').generated);
  });

  it('bad input: one line each, exit 1 (usage: exit 2)', () => {
    const bad = (args: string[], message: RegExp) => assertOneLine(cli(...args), message);
    bad([seq2seqFixture('t5-missing-bias'), '--ids', '3,4', '--target-ids', '0,5'], /no relative attention bias table encoder\.block\.0\.layer\.0\.SelfAttention\.relative_attention_bias\.weight/);
    bad([seq2seqFixture('t5-v1_0'), '--ids', '3,4', '--target-ids', '0,40'], /target token id 40 is outside the vocabulary \(0…39\)/);
    bad([modelFixture('gpt2'), '--ids', '3,4', '--target', 'x'], /is a decoder-only model \(gpt2\): it has no decoder to take a target/);
    bad([seq2seqFixture('bart-bin'), '--ids', Array.from({ length: 30 }, () => '5').join(','), '--generate', '2'], /the source has 30 tokens but bart has 24 positions/);
    bad([seq2seqFixture('marian-f16'), '--text', 'the cat', '--generate', '2'], /has no tokenizer\.json \(only SentencePiece's source\.spm and target\.spm/);
    bad([seq2seqFixture('bart-bin'), '--ids', '3'], /an encoder–decoder model \(bart\): give a target too/);
    bad([seq2seqFixture('bart-bin'), '--ids', '3', '--generate', 'x'], /--generate needs a number, not `x`/);
    bad([seq2seqFixture('bart-bin'), '--ids', '3', '--generate', '0'], /generate needs a positive whole number of tokens, not 0/);
    bad([seq2seqFixture('bart-bin'), '--ids', '3', '--generate', '2', '--sample'], /target is generated greedily here: --sample is for causal models/);
    bad([seq2seqFixture('mbart-50'), '--text', 'the cat', '--src-lang', 'en', '--generate', '2'], /: no source language "en": this tokenizer's are en_XX, de_DE, fr_XX, ro_RO\n/);
    bad([seq2seqFixture('bart-bin'), '--text', 'the cat', '--tgt-lang', 'de_DE', '--generate', '2'], /has no language codes in its tokenizer/);
    bad([modelFixture('gpt2'), '--text', 'the cat', '--src-lang', 'en_XX'], /is not an encoder–decoder model \(gpt2\): source and target languages are a translation model's \(mBART\); leave them out/);
    const usage = cli(seq2seqFixture('bart-bin'), '--ids', '3', '--generate', '2', '--target-ids', '2');
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /give one of --target, --target-ids or --generate/);
  });
});
