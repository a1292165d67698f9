// `attention-lens model` bundled and run as a user runs it: the exact JSON against the
// fixture's torch reference, the text report, and every bad input as one line and exit 1; with
// --generate N, the JSON's generated_ids / generated_tokens and the whole final sequence's numbers
// against the float64 generation reference.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertOneLine, bundleCli } from '../cli/bundle';
import { generationReferences, modelFixture, modelReference, REFERENCE_TOLERANCE } from './fixtures';

const root = join(__dirname, '..', '..', '..');

describe('CLI: model', function () {
  this.timeout(300000);
  let dir: string;
  let bundle: string;
  const cli = (...args: string[]) => {
    const run = spawnSync(process.execPath, [bundle, 'model', ...args], { encoding: 'utf8', cwd: root, maxBuffer: 64 * 2 ** 20 });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  };
  /** A copy of a fixture folder to break. */
  const copy = (name: 'gpt2' | 'qwen2-sharded-f16' | 'llama-gqa-bf16'): string => {
    const to = join(dir, `${name}-${Math.random().toString(36).slice(2)}`);
    cpSync(modelFixture(name), to, { recursive: true });
    return to;
  };
  /** Rewrites a safetensors header (same data) through `edit`. */
  const editHeader = (file: string, edit: (header: Record<string, { shape: number[] }>) => void): void => {
    const bytes = readFileSync(file);
    const length = Number(bytes.readBigUInt64LE(0));
    const header = JSON.parse(bytes.subarray(8, 8 + length).toString('utf8')) as Record<string, { shape: number[] }>;
    edit(header);
    const text = Buffer.from(JSON.stringify(header).padEnd(length, ' '));
    assert.equal(text.length, length, 'the edited header must keep its length');
    writeFileSync(file, Buffer.concat([bytes.subarray(0, 8), text, bytes.subarray(8 + length)]));
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'attention-lens-model-'));
    bundle = bundleCli(dir);
    modelFixture('gpt2');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--json is exactly the issue\'s object, its numbers as the torch reference', () => {
    const reference = modelReference('gpt2');
    const run = cli(modelFixture('gpt2'), '--text', reference.text as string, '--json');
    assert.equal(run.status, 0, run.stderr);
    const json = JSON.parse(run.stdout) as { architecture: string; tokens: string[]; token_ids: number[]; attentions: number[][][][]; hidden_last: number[]; logits_last: number[] };
    assert.deepEqual(Object.keys(json), ['architecture', 'tokens', 'token_ids', 'attentions', 'hidden_last', 'logits_last']);
    assert.equal(json.architecture, 'gpt2');
    assert.deepEqual(json.token_ids, reference.token_ids);
    assert.equal(json.tokens[1], '␣cat');
    const worst = Math.max(...reference.attentions.flat(3).map((v, i) => Math.abs(v - json.attentions.flat(3)[i])));
    assert.ok(worst <= REFERENCE_TOLERANCE.attention, `attention off by ${worst}`);
    assert.equal(json.logits_last.length, 50257);
    const noHead = cli(modelFixture('qwen3'), '--ids', '1,2,3', '--json');
    assert.equal(noHead.status, 0, noHead.stderr);
    assert.ok('logits_last' in JSON.parse(noHead.stdout)); // qwen3's fixture has lm_head
  });

  it('text: architecture, tokens, the next-token predictions, each head\'s focus', () => {
    const run = cli(modelFixture('gpt2'), '--text', 'The cat sat');
    assert.equal(run.status, 0, run.stderr);
    // The products run on ONNX Runtime unless the WebAssembly kernels are forced.
    const backend = process.env.ATTENTION_LENS_BACKEND === 'wasm' ? 'wasm' : 'onnxruntime';
    assert.match(run.stdout, new RegExp(`^gpt2: 2 layers × 2 heads, 3 tokens \\(${backend}; load \\d+ ms, forward \\d+ ms\\)\n`));
    assert.match(run.stdout, /tokens: "The" "␣cat" "␣sat"\n/);
    assert.match(run.stdout, /next after "␣sat": (".+" \d+\.\d%(, )?){5}\n/);
    assert.match(run.stdout, /L1: H0 ".+" \d\.\d\d · H1 ".+" \d\.\d\d\n/);
  });

  it('a missing tensor is named', () => {
    const folder = copy('gpt2');
    editHeader(join(folder, 'model.safetensors'), (header) => {
      header['transformer.h.1.mlp.c_fc.bias_'] = header['transformer.h.1.mlp.c_fc.bias'];
      delete header['transformer.h.1.mlp.c_fc.bias'];
    });
    assertOneLine(cli(folder, '--ids', '1,2'), /: the checkpoint has no tensor h\.1\.mlp\.c_fc\.bias \(with or without a class prefix such as transformer\.h\.1\.mlp\.c_fc\.bias, /);
  });

  it('a wrong shape names the tensor and both shapes', () => {
    const folder = copy('gpt2');
    editHeader(join(folder, 'model.safetensors'), (header) => {
      header['transformer.h.0.attn.c_attn.weight'].shape = [48, 16];
    });
    assertOneLine(cli(folder, '--ids', '1,2'), /tensor transformer\.h\.0\.attn\.c_attn\.weight is 48×16 but the config asks for 16×48/);
  });

  it('an unknown model_type lists the supported ones', () => {
    const folder = copy('gpt2');
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ model_type: 'falcon' }));
    assertOneLine(cli(folder, '--ids', '1'), /model_type "falcon" is not supported: supported are gpt2, bert, llama, mistral, qwen2, qwen3, gemma2, gemma3/);
  });

  it('issue 40\'s bad input, each one line: remote code, an odd rotary width, an unknown rope type; and a Pythia run as JSON', () => {
    const folder = copy('gpt2');
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ model_type: 'baichuan_custom', auto_map: { AutoModelForCausalLM: 'modeling_baichuan.BaichuanForCausalLM' } }));
    assertOneLine(cli(folder, '--ids', '1'), /architecture only as Python code \(auto_map → modeling_baichuan\.py\): Attention Lens does not run a model folder's code \(it could do anything on your machine\)/);
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ model_type: 'gpt_neox', hidden_size: 64, num_attention_heads: 4, num_hidden_layers: 2, rotary_pct: 0.2 }));
    assertOneLine(cli(folder, '--ids', '1'), /the rotary width 3 \(of head_dim 16\) is odd: RoPE turns pairs of columns/);
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ model_type: 'phi', hidden_size: 64, num_attention_heads: 4, num_hidden_layers: 2, partial_rotary_factor: 0.2 }));
    assertOneLine(cli(folder, '--ids', '1'), /the rotary width 3 \(of head_dim 16\) is odd: RoPE turns pairs of columns/);
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ model_type: 'llama', hidden_size: 64, num_attention_heads: 4, num_hidden_layers: 2, rope_scaling: { rope_type: 'ntk-by-parts', factor: 2 } }));
    assertOneLine(cli(folder, '--ids', '1'), /rope type "ntk-by-parts" is not supported: supported are default, linear, llama3, dynamic, yarn, longrope/);
    const reference = modelReference('pythia-f16');
    const run = cli(modelFixture('pythia-f16'), '--ids', reference.token_ids.join(','), '--json');
    assert.equal(run.status, 0, run.stderr);
    const json = JSON.parse(run.stdout) as { architecture: string; attentions: number[][][][]; logits_last: number[] };
    assert.equal(json.architecture, 'gpt_neox');
    const worst = Math.max(...reference.attentions.flat(3).map((v, i) => Math.abs(v - json.attentions.flat(3)[i])));
    assert.ok(worst <= REFERENCE_TOLERANCE.attention, `attention off by ${worst}`);
  });

  it('a truncated shard says so', () => {
    const folder = copy('qwen2-sharded-f16');
    const shard = join(folder, 'model-00002-of-00002.safetensors');
    truncateSync(shard, statSync(shard).size - 100);
    assertOneLine(cli(folder, '--ids', '1,2'), /model-00002-of-00002\.safetensors is truncated: its header lists \d+ bytes but the file has \d+/);
  });

  it('no tokenizer.json: say so and offer --ids', () => {
    assertOneLine(cli(modelFixture('llama-gqa-bf16'), '--text', 'hello'), /has no tokenizer\.json: give token ids instead \(--ids 1,2,3\)/);
    const folder = copy('gpt2');
    unlinkSync(join(folder, 'tokenizer.json'));
    assert.equal(cli(folder, '--ids', '1,2').status, 0);
  });

  it('a text longer than the positions: cut, with a warning, and run', () => {
    const run = cli(modelFixture('gpt2'), '--text', 'word '.repeat(100).trim(), '--json');
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /warning: the input has 100 tokens but the model has 64 positions: cut to the first 64/);
    assert.equal((JSON.parse(run.stdout) as { tokens: string[] }).tokens.length, 64);
  });

  it('a model too big for the memory allowed is refused up front, with the figure', () => {
    assertOneLine(cli(modelFixture('gpt2'), '--ids', '1,2,3', '--max-memory-mb', '1'), /running this model on 3 tokens needs about \d+\.\d\d GB of memory .* more than the 0\.00 GB allowed/);
  });

  it('ids outside the vocabulary, a folder that is not a model, bad arguments', () => {
    assertOneLine(cli(modelFixture('llama-gqa-bf16'), '--ids', '1,128'), /token id 128 is outside the vocabulary \(0…127\)/);
    assertOneLine(cli(dir, '--ids', '1'), /has no config\.json: not a Hugging Face model folder/);
    const usage = cli(modelFixture('gpt2'));
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /give the input as --text TEXT, --ids 1,2,3 or --image FILE/);
    assert.equal(cli(modelFixture('gpt2'), '--ids', '1,x').status, 2);
  });

  // --generate N (issue 42)
  it('--json: the whole final sequence, and generated_ids / generated_tokens, as the float64 reference', () => {
    const reference = generationReferences()['llama-gqa-bf16'];
    const run = cli(modelFixture('llama-gqa-bf16'), '--ids', reference.prompt.join(','), '--generate', String(reference.generated.length), '--json');
    assert.equal(run.status, 0, run.stderr);
    const json = JSON.parse(run.stdout) as { tokens: string[]; token_ids: number[]; attentions: number[][][][]; generated_ids: number[]; generated_tokens: string[]; logits_last: number[] };
    assert.deepEqual(Object.keys(json), ['architecture', 'tokens', 'token_ids', 'attentions', 'hidden_last', 'logits_last', 'generated_ids', 'generated_tokens']);
    assert.deepEqual(json.generated_ids, reference.generated);
    assert.deepEqual(json.token_ids, [...reference.prompt, ...reference.generated]);
    assert.deepEqual(json.generated_tokens, json.tokens.slice(reference.prompt.length));
    const worst = Math.max(...reference.attentions.flat(3).map((v, i) => Math.abs(v - json.attentions.flat(3)[i])));
    assert.equal(json.attentions.flat(3).length, reference.attentions.flat(3).length);
    assert.ok(worst <= REFERENCE_TOLERANCE.attention, `attention off by ${worst}`);
  });

  it('text: the answer, why it stopped, and each step among its candidates; --sample repeats with its seed', () => {
    const run = cli(modelFixture('gpt2'), '--text', 'The cat', '--generate', '3');
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^gpt2: 2 layers × 2 heads, 5 tokens/);
    assert.match(run.stdout, /\ngenerated 3 tokens after the 2 of the prompt \(stopped by the number asked for; \d+\.\d ms per token\):\n {2}".+"\n {2}greedy: the most probable token at each step\n {2}2: ".+" · of (".+" \d+\.\d%(, )?){5}\n/);
    const sampled = (seed: string) => cli(modelFixture('gpt2'), '--text', 'The cat', '--generate', '6', '--sample', '--temperature', '1.2', '--top-p', '0.9', '--seed', seed, '--json');
    const [a, b] = [sampled('5'), sampled('5')];
    assert.equal(a.status, 0, a.stderr);
    assert.deepEqual(JSON.parse(a.stdout).generated_ids, JSON.parse(b.stdout).generated_ids);
  });

  it('generation_config.json: greedy says the folder asks for sampling; --sample takes its values where not given; a value that cannot sample is one line', () => {
    const folder = copy('gpt2');
    writeFileSync(join(folder, 'generation_config.json'), JSON.stringify({ do_sample: true, temperature: 0.7, top_p: 0.8 }));
    const greedy = cli(folder, '--text', 'The cat', '--generate', '2');
    assert.equal(greedy.status, 0, greedy.stderr);
    assert.match(greedy.stdout, /\n {2}greedy: the most probable token at each step \(generation_config\.json asks for sampling, temperature 0\.7, top_p 0\.8; greedy is the default here: sample to use it\)\n/);
    const sampled = cli(folder, '--text', 'The cat', '--generate', '2', '--sample', '--seed', '4');
    assert.equal(sampled.status, 0, sampled.stderr);
    assert.match(sampled.stdout, /\n {2}sampled: temperature 0\.7 \(generation_config\.json\), top-k 50 \(default\), top-p 0\.8 \(generation_config\.json\), seed 4\n/);
    writeFileSync(join(folder, 'generation_config.json'), JSON.stringify({ do_sample: true, temperature: 0 }));
    assertOneLine(cli(folder, '--ids', '1,2', '--generate', '2', '--sample'), /generation_config\.json's temperature must be above 0 to sample, not 0$/m);
    assert.equal(cli(folder, '--ids', '1,2', '--generate', '2', '--sample', '--temperature', '0.9').status, 0, 'a value given replaces the folder\'s');
  });

  it('--chat: the text as a user message through the chat template; a template that fails is its own message in one line', () => {
    const folder = copy('gpt2');
    const template = (chat_template: string) => writeFileSync(join(folder, 'tokenizer_config.json'), JSON.stringify({ eos_token: '<|endoftext|>', chat_template }));
    template("{{ eos_token }}User: {{ messages[0]['content'] }}\nAssistant:");
    const chat = cli(folder, '--text', 'Hi there', '--chat', '--generate', '2', '--json');
    assert.equal(chat.status, 0, chat.stderr);
    const json = JSON.parse(chat.stdout) as { tokens: string[]; generated_ids: number[] };
    // The template's special token as written: one token, not its characters.
    assert.deepEqual(json.tokens.slice(0, 6), ['<|endoftext|>', 'User', ':', '␣Hi', '␣there', '↵']);
    assert.equal(json.tokens.length, 8 + json.generated_ids.length);
    template("{{ raise_exception('only system and user roles') }}");
    assertOneLine(cli(folder, '--text', 'Hi', '--chat', '--generate', '2'), /the chat template fails: only system and user roles$/m);
    assert.equal(cli(folder, '--ids', '1,2', '--chat').status, 2, '--chat needs --text');
  });

  it('bad input: one line and exit 1', () => {
    const gpt2 = modelFixture('gpt2');
    assertOneLine(cli(gpt2, '--ids', '1,2', '--generate', '0'), /the number of new tokens must be a whole number of at least 1, not 0$/m);
    assertOneLine(cli(gpt2, '--ids', '1,2', '--generate', '-4'), /the number of new tokens must be a whole number of at least 1, not -4$/m);
    assertOneLine(cli(gpt2, '--ids', '1,2', '--generate', 'ten'), /--generate needs a number, not `ten`/);
    assertOneLine(cli(modelFixture('bert'), '--ids', '2,5,3', '--generate', '4'), /this is an encoder \(bert\): it fills masked tokens and does not generate/);
    assertOneLine(cli(gpt2, '--ids', '1,2,3', '--generate', '62'), /the prompt's 3 tokens and 62 new ones need 65 positions, past the model's 64: ask for at most 61 new tokens/);
    assertOneLine(cli(gpt2, '--ids', '1,2', '--generate', '2', '--sample', '--top-k', '-1'), /top-k must be a whole number of at least 0 \(0: no top-k\), not -1$/m);
    assert.equal(cli(gpt2, '--ids', '1,2', '--generate', '2', '--seed', '3').status, 2, '--seed without --sample is a usage error');
  });
});
