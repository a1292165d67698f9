import { strict as assert } from 'node:assert';
import { parseDocument } from '../../../src/core/parse/index';
import { buildSpec } from '../../../src/core/spec';
import { positionAt, rangeOf } from './helpers';

describe('the model directive', () => {
  it('pins a model folder and a sentence to a problem of its own', () => {
    const text = '# notes\n<!-- attention: model="models/gpt2" text="The cat sat on the mat" name="GPT-2" -->\n';
    const { problems, diagnostics } = parseDocument(text);
    assert.deepEqual(diagnostics, []);
    assert.equal(problems.length, 1);
    assert.deepEqual(problems[0].model, { path: 'models/gpt2', text: 'The cat sat on the mat' });
    assert.equal(problems[0].name, 'GPT-2');
    assert.deepEqual(problems[0].optionRanges?.model, rangeOf(text, 'model="models/gpt2"'));
    assert.deepEqual(problems[0].matrices, []);
  });

  it('takes token ids instead of text', () => {
    const { problems } = parseDocument('# attention: model=../m ids="464, 3797 3332"\n');
    assert.deepEqual(problems[0].model, { path: '../m', ids: [464, 3797, 3332] });
  });

  it('reads ids and texts thousands of characters long (a 1024-token run)', () => {
    const ids = Array.from({ length: 1024 }, (_, i) => (i * 7919) % 50257);
    const text = 'The cat sat on the mat. '.repeat(150).trim();
    const note = `<!-- attention: model=m ids="${ids.join(' ')}" -->\n\n<!-- attention: model=m text="${text}" -->\n`;
    const { problems, diagnostics } = parseDocument(note);
    assert.deepEqual(diagnostics, []);
    assert.deepEqual(problems.map((problem) => problem.model), [{ path: 'm', ids }, { path: 'm', text }]);
  });

  it('says what is wrong with bad ids, a text without a model, and an empty model', () => {
    const text = '# attention: model=m ids="1, x"\n\n# attention: text="hello"\n\n# attention: model=""\n';
    const { diagnostics, problems } = parseDocument(text);
    const byCode = diagnostics.map((d) => [d.code, d.range]);
    assert.deepEqual(byCode, [
      ['bad-option-value', rangeOf(text, '"1, x"')],
      ['model-missing', rangeOf(text, 'text="hello"')],
      ['bad-option-value', rangeOf(text, '""')],
    ]);
    assert.equal(problems[1].model, undefined);
  });

  it('reads generate=N and chat', () => {
    const { problems, diagnostics } = parseDocument('<!-- attention: model="models/gpt2" text="Once upon a time" generate=40 chat -->\n');
    assert.deepEqual(diagnostics, []);
    assert.deepEqual(problems[0].model, { path: 'models/gpt2', text: 'Once upon a time', generate: 40, chat: true });
  });

  it('says what is wrong with generate=0, generate=abc, generate without a model, chat without a text, and generate on a picture', () => {
    const text = '# attention: model=m text="a" generate=0\n\n# attention: model=m text="a" generate=abc\n\n# attention: generate=5\n\n# attention: model=m ids="1 2" chat\n\n# attention: model=m image="cat.png" generate=3\n';
    const { diagnostics } = parseDocument(text);
    assert.deepEqual(diagnostics.map((d) => [d.code, d.range]), [
      ['bad-option-value', rangeOf(text, '0')],
      ['bad-option-value', rangeOf(text, 'abc')],
      ['model-missing', rangeOf(text, 'generate=5')],
      ['bad-option-value', rangeOf(text, 'chat')],
      ['bad-option-value', rangeOf(text, 'generate=3')],
    ]);
    assert.match(diagnostics[0].message, /whole number from 1 to 4096/);
    assert.match(diagnostics[3].message, /chat template: add `text="…"`/);
  });

  it('reads sample with its values, temperature among them then a sampling value and not an attention option', () => {
    const { problems, diagnostics } = parseDocument('<!-- attention: model=m text="Once" generate=8 sample temperature=0.7 top_k=50 top_p=0.9 seed=1 -->\n<!-- attention: model=m text="Once" generate=8 do_sample topk=0 -->\n');
    assert.deepEqual(diagnostics, []);
    assert.deepEqual(problems[0].model, { path: 'm', text: 'Once', generate: 8, sample: { temperature: 0.7, topK: 50, topP: 0.9, seed: 1 } });
    assert.equal(problems[0].options.temperature, undefined);
    assert.deepEqual(problems[1].model?.sample, { topK: 0 });
  });

  it('says at the word what is wrong with a sampling value, a value without sample, sample without generate, and sampling values without a model', () => {
    const text = [
      '# attention: model=m text="a" generate=4 sample temperature=0 top_k=-1 top_p=1.5 seed=x',
      '# attention: model=m text="a" generate=4 top_p=0.9',
      '# attention: model=m text="a" sample',
      '# attention: heads=2 top_k=3',
      '# attention: sample',
      '',
    ].join('\n\n');
    const { diagnostics } = parseDocument(text);
    /** `needle` where it stands in the first `within` of the text. */
    const inside = (within: string, needle: string) => {
      const at = text.indexOf(within) + within.indexOf(needle);
      return { start: positionAt(text, at), end: positionAt(text, at + needle.length) };
    };
    assert.deepEqual(diagnostics.map((d) => [d.code, d.range]), [
      ['bad-option-value', inside('temperature=0', '0')],
      ['bad-option-value', inside('top_k=-1', '-1')],
      ['bad-option-value', inside('top_p=1.5', '1.5')],
      ['bad-option-value', inside('seed=x', 'x')],
      ['bad-option-value', rangeOf(text, 'top_p=0.9')],
      ['bad-option-value', inside('text="a" sample\n', 'sample')],
      ['model-missing', rangeOf(text, 'top_k=3')],
      ['model-missing', inside('# attention: sample', 'sample')],
    ]);
    assert.deepEqual(diagnostics.slice(1, 4).map((d) => d.message), [
      '`top_k` must be a whole number of tokens from 0 (0: every token), e.g. `top_k=50`.',
      '`top_p` must be a number above 0 and at most 1, e.g. `top_p=0.9`.',
      '`seed` must be a whole number, e.g. `seed=1`.',
    ]);
    assert.match(diagnostics[4].message, /^`top_p` is a sampling value: add `sample`/);
    assert.match(diagnostics[5].message, /^`sample` draws the tokens `generate=N` writes/);
  });

  it('leaves problems without the key alone', () => {
    const { problems } = parseDocument('# attention: heads=2\nX = [[1, 0], [0, 1]]\n');
    assert.equal(problems[0].model, undefined);
  });
});

describe('a model problem in the spec builder', () => {
  it('is not reported as missing its matrices', () => {
    const { problems } = parseDocument('# attention: model=models/gpt2 text="Hi"\n');
    assert.deepEqual(buildSpec(problems[0]), { diagnostics: [] });
  });
});

describe('a directive past the 64 KiB a directive is read to', () => {
  it('gets an error at its place that says the limit, and starts a problem of its own', () => {
    const ids = Array.from({ length: 12_000 }, (_, i) => String(1000 + (i % 9000))).join(', ');
    const line = `<!-- attention: model="models/gpt2" ids="${ids}" -->`;
    assert.ok(line.length > 65_536);
    const text = `# notes\nX = [[1, 0], [0, 1]]\n${line}\nmore prose\n`;
    const { problems, diagnostics } = parseDocument(text);
    const errors = diagnostics.filter((d) => d.code === 'directive-too-long');
    assert.equal(errors.length, 1, JSON.stringify(diagnostics.map((d) => d.message)));
    const [error] = errors;
    assert.equal(error.severity, 'error');
    assert.match(error.message, /read up to 65,536 \(64 KiB\)/);
    assert.match(error.message, new RegExp(`options are ${(line.length - '<!-- attention: '.length).toLocaleString('en-US')} characters long`));
    // At its place: from `attention` on its line, not the whole file nor nothing.
    assert.deepEqual(error.range.start, { line: 2, character: '<!-- '.length });
    assert.equal(error.range.end.line, 2);
    assert.equal(error.range.end.character, '<!-- attention: '.length + 65_536);
    // The matrix before it stays a problem of its own; the directive starts another.
    assert.equal(problems.length, 2);
    assert.deepEqual(problems[1].matrices, []);
  });

  it('leaves a long line that is not options alone (prose or data that starts with "Attention:")', () => {
    const text = `Attention: ${'this is prose, '.repeat(5000)}\n`;
    assert.deepEqual(parseDocument(text).diagnostics.filter((d) => d.code === 'directive-too-long'), []);
  });

  it('reads a directive just under the limit as before', () => {
    const ids = Array.from({ length: 10_000 }, () => '1').join(' ');
    const text = `# attention: model=../m ids="${ids}"\n`;
    assert.ok(text.length < 65_536);
    const { problems, diagnostics } = parseDocument(text);
    assert.deepEqual(diagnostics, []);
    assert.equal(problems[0].model?.ids?.length, 10_000);
  });
});

describe('an encoder–decoder model directive', () => {
  it('takes the target as text, as the decoder\'s ids, or as a number of tokens to generate', () => {
    const text = [
      '<!-- attention: model="models/opus-mt-en-de" text="The house is small." target="Das Haus ist klein." -->',
      '<!-- attention: model="models/opus-mt-en-de" text="The house is small." generate=20 -->',
      '# attention: model=m ids="100, 7" target_ids="58100, 42"',
      '# attention: model=m text="summarize: hi" max_new_tokens=8',
    ].join('\n\n');
    const { problems, diagnostics } = parseDocument(text);
    assert.deepEqual(diagnostics, []);
    assert.deepEqual(problems.map((problem) => problem.model), [
      { path: 'models/opus-mt-en-de', text: 'The house is small.', target: { text: 'Das Haus ist klein.' } },
      { path: 'models/opus-mt-en-de', text: 'The house is small.', generate: 20 },
      { path: 'm', ids: [100, 7], target: { ids: [58100, 42] } },
      { path: 'm', text: 'summarize: hi', generate: 8 },
    ]);
  });

  it('says at its place what is wrong with each bad target', () => {
    const lines = [
      '# attention: model=m text="a" generate=0',
      '# attention: model=m text="a" generate=lots',
      '# attention: model=m text="a" target_ids="1, x"',
      '# attention: model=m text="a" target=""',
      '# attention: model=m text="a" target="b" generate=5',
      '# attention: model=m target="Das Haus"',
      '# attention: model=m image="cat.png" target="Katze"',
      '# attention: generate=5',
    ];
    const text = lines.join('\n\n');
    const { diagnostics } = parseDocument(text);
    const found = diagnostics.map((d) => [d.code, d.range, d.message]);
    assert.deepEqual(found.map(([code, range]) => [code, range]), [
      ['bad-option-value', rangeOf(text, '0')],
      ['bad-option-value', rangeOf(text, 'lots')],
      ['bad-option-value', rangeOf(text, '"1, x"')],
      ['bad-option-value', rangeOf(text, '""')],
      ['bad-option-value', rangeOf(text, 'generate=5')],
      ['bad-option-value', rangeOf(text, 'target="Das Haus"')],
      ['bad-option-value', rangeOf(text, 'target="Katze"')],
      ['model-missing', rangeOf(text, 'generate=5', 1)],
    ]);
    assert.match(String(found[0][2]), /`generate` is how many tokens to generate .*, a whole number from 1 to 4096/);
    assert.match(String(found[4][2]), /`generate` and `target` both give the target: keep one/);
    assert.match(String(found[5][2]), /`target` is the target of an encoder–decoder model: give its source too/);
    assert.match(String(found[6][2]), /reads text, not a picture/);
  });

  it('takes an mBART model\'s languages, src_lang and tgt_lang, and says at its place where one cannot apply', () => {
    const lines = [
      '<!-- attention: model="models/mbart-50" text="The cat." src_lang="en_XX" tgt_lang=de_DE generate=10 -->',
      '# attention: model=m text="a" target_lang="ro_RO" target="b"',
      '# attention: model=m ids="5 6" src_lang=en_XX generate=3',
      '# attention: model=m text="a" target_ids="2 250004" tgt_lang=de_DE',
      '# attention: model=m text="a" tgt_lang="" generate=3',
      '# attention: tgt_lang=de_DE',
    ];
    const text = lines.join('\n\n');
    const { problems, diagnostics } = parseDocument(text);
    assert.deepEqual(problems[0].model, { path: 'models/mbart-50', text: 'The cat.', languages: { source: 'en_XX', target: 'de_DE' }, generate: 10 });
    assert.deepEqual(problems[1].model?.languages, { target: 'ro_RO' });
    const found = diagnostics.map((d) => [d.code, d.range, d.message]);
    assert.deepEqual(found.map(([code, range]) => [code, range]), [
      ['bad-option-value', rangeOf(text, 'src_lang=en_XX')],
      ['bad-option-value', rangeOf(text, 'tgt_lang=de_DE', 1)],
      ['bad-option-value', rangeOf(text, '""')],
      ['model-missing', rangeOf(text, 'tgt_lang=de_DE', 2)],
    ]);
    assert.match(String(found[0][2]), /`src_lang` places its code around a source text: give `text="…"`/);
    assert.match(String(found[1][2]), /`target_ids` are the decoder's input as given/);
    assert.match(String(found[2][2]), /`tgt_lang` is a language code of the model's tokenizer, e\.g\. `tgt_lang="de_DE"`/);
  });
});
