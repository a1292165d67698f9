// The model's tokenizer as runModel uses it: ids as js-tiktoken's r50k_base encodes GPT-2 text,
// special tokens added as the post-processor says, and labels made readable.
import { strict as assert } from 'node:assert';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getEncoding } from 'js-tiktoken';
import { ModelTokenizer, visible } from '../../../src/core/model/tokenizer';
import { prepareModel, runModel } from '../../../src/core/model/run';
import { folderFiles } from '../../../src/node/modelFiles';
import { modelFixture } from './fixtures';

describe('model tokenizer', function () {
  this.timeout(120000);
  const open = async (name: 'gpt2' | 'bert' | 'qwen3') => ModelTokenizer.open(folderFiles(modelFixture(name)));

  it('GPT-2: the ids js-tiktoken r50k_base gives, labels with ␣ and ↵, <|endoftext|> as written', async () => {
    const tokenizer = (await open('gpt2')) as ModelTokenizer;
    const r50k = getEncoding('r50k_base');
    for (const text of ['The cat sat on the mat.', 'Two lines\nand a\ttab', 'naïve café 🙂', '<|endoftext|>Once upon a time']) {
      assert.deepEqual(tokenizer.encode(text).ids, r50k.encode(text, 'all'), text);
    }
    const { tokens } = tokenizer.encode('<|endoftext|>Hi there\nyou');
    assert.deepEqual(tokens, ['<|endoftext|>', 'Hi', '␣there', '↵', 'you']);
    assert.equal(tokenizer.label(50256), '<|endoftext|>');
    assert.equal(visible(' a\tb\n'), '␣a⇥b↵');
  });

  it('a folder opened again reuses the tokenizer built from the same files; edited files build a new one', async () => {
    const first = await open('gpt2');
    assert.equal(await open('gpt2'), first, 'the same files: the tokenizer already built');
    // A copy whose tokenizer.json names <|endoftext|> otherwise.
    const copy = mkdtempSync(join(tmpdir(), 'attention-lens-tokenizer-'));
    try {
      cpSync(modelFixture('gpt2'), copy, { recursive: true });
      const file = join(copy, 'tokenizer.json');
      writeFileSync(file, readFileSync(file, 'utf8').replaceAll('<|endoftext|>', '<|end|>'));
      const edited = (await ModelTokenizer.open(folderFiles(copy))) as ModelTokenizer;
      assert.notEqual(edited, first);
      assert.equal(edited.label(50256), '<|end|>');
      assert.equal((first as ModelTokenizer).label(50256), '<|endoftext|>');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('prepareModel builds the tokenizer a run then takes as it is (and undefined without tokenizer.json)', async () => {
    const prepared = await prepareModel(folderFiles(modelFixture('gpt2')));
    assert.ok(prepared instanceof ModelTokenizer);
    assert.equal(await open('gpt2'), prepared);
    assert.equal(await prepareModel(folderFiles(modelFixture('qwen3'))), undefined);
  });

  it('BERT: [CLS] … [SEP] added, WordPiece pieces as written', async () => {
    const tokenizer = (await open('bert')) as ModelTokenizer;
    const { tokens } = tokenizer.encode('The cat [MASK].');
    assert.equal(tokens[0], '[CLS]');
    assert.equal(tokens.at(-1), '[SEP]');
    assert.ok(tokens.includes('[MASK]'));
    assert.equal(tokenizer.idOf('[MASK]') !== undefined, true);
  });

  it('no tokenizer.json: undefined, and a run on text says to give ids', async () => {
    assert.equal(await open('qwen3'), undefined);
    await assert.rejects(runModel(folderFiles(modelFixture('qwen3')), { text: 'hello' }), /has no tokenizer\.json: give token ids instead \(--ids 1,2,3\)/);
  });

  it('a text longer than the positions is cut at the limit, with a warning', async () => {
    const text = 'one two three four five six seven eight nine ten '.repeat(8);
    const ids = getEncoding('r50k_base').encode(text);
    const run = await runModel(folderFiles(modelFixture('gpt2')), { text });
    assert.equal(run.queryCount, 64); // n_positions
    assert.deepEqual(run.tokenIds, ids.slice(0, 64));
    assert.deepEqual(run.warnings, [`the input has ${ids.length} tokens but the model has 64 positions: cut to the first 64`]);
  });
});
