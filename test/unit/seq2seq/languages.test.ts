// mBART-50's and mBART's language codes (src/core/model/languages.ts) against the references of
// scripts/gen_seq2seq_fixtures.py, which places the codes as transformers' MBart50Tokenizer and
// MBartTokenizer do and shifts the labels as modeling_mbart.py does: a source in a chosen language,
// a target text in a chosen language, generation in a chosen language (mBART-50: the code forced
// as the first token; mBART: the decoder starting at it), the tokenizer's saved languages and
// generation_config.json's forced_bos_token_id when none is chosen, and one line per mistake.
import { strict as assert } from 'node:assert';
import { languageCodesOf } from '../../../src/core/model/languages';
import type { Languages, TargetInput } from '../../../src/core/model/input';
import { runModel, type ModelRun } from '../../../src/core/model/run';
import { folderFiles } from '../../../src/node/modelFiles';
import { REFERENCE_TOLERANCE, relativeError } from '../model/fixtures';
import { LANGUAGE_FIXTURES, languageReference, type LanguageFixtureName, seq2seqFixture } from './fixtures';

function run(name: LanguageFixtureName | 'bart-bin', source: { text: string } | { ids: number[] }, target: TargetInput, languages?: Languages): Promise<ModelRun> {
  return runModel(folderFiles(seq2seqFixture(name)), { ...source, target, ...(languages ? { languages } : {}) });
}

describe('mBART language codes', function () {
  this.timeout(120_000);

  for (const name of LANGUAGE_FIXTURES) {
    it(`${name}: a source and a target text in the languages chosen are the ids transformers' tokenizer gives, and run as PyTorch does`, async () => {
      const reference = languageReference(name);
      const ran = await run(name, { text: reference.source_text! }, { text: reference.target_text! }, reference.languages);
      assert.deepEqual(ran.kinds!.encoder!.tokenIds, reference.source_ids);
      assert.deepEqual(ran.tokenIds, reference.target_ids);
      const logits = relativeError(reference.logits_last, ran.logitsLast!);
      assert.ok(logits <= REFERENCE_TOLERANCE.logitsRelative, `logits_last off by ${logits} (relative)`);
    });

    it(`${name}: generation in the target language chosen gives PyTorch's greedy tokens`, async () => {
      const reference = languageReference(name);
      const generated = await run(name, { ids: reference.source_ids }, { generate: reference.generate }, { target: reference.languages.target });
      assert.deepEqual(generated.tokenIds, reference.generated);
    });

    it(`${name}: no language chosen: the tokenizer's saved source language, and generation from decoder_start_token_id (forced_bos_token_id where set)`, async () => {
      const reference = languageReference(name);
      const generated = await run(name, { text: reference.source_text! }, { generate: reference.generate });
      assert.deepEqual(generated.kinds!.encoder!.tokenIds, reference.defaults.source_ids);
      assert.deepEqual(generated.tokenIds, reference.defaults.generated);
    });
  }

  it("mBART-50's target text without a language is in the tokenizer's tgt_lang; mBART's, which has none saved, asks for one", async () => {
    const fifty = languageReference('mbart-50');
    const ran = await run('mbart-50', { ids: fifty.source_ids }, { text: fifty.target_text! });
    assert.deepEqual(ran.tokenIds, fifty.defaults.target_ids);
    const cc25 = languageReference('mbart-cc25');
    await assert.rejects(run('mbart-cc25', { ids: cc25.source_ids }, { text: cc25.target_text! }), /^RangeError: the target text needs its language \(its code starts the decoder's labels\): choose one of en_XX, de_DE, fr_XX, ro_RO$/);
  });

  it('bad input: one line each, a bad code listing the codes there are', async () => {
    const reference = languageReference('mbart-50');
    await assert.rejects(run('mbart-50', { text: 'the cat' }, { generate: 2 }, { source: 'xx_YY' }), /^RangeError: no source language "xx_YY": this tokenizer's are en_XX, de_DE, fr_XX, ro_RO$/);
    await assert.rejects(run('mbart-50', { text: 'the cat' }, { generate: 2 }, { target: 'de' }), /^RangeError: no target language "de": this tokenizer's are en_XX, de_DE, fr_XX, ro_RO$/);
    await assert.rejects(run('mbart-50', { ids: reference.source_ids }, { generate: 2 }, { source: 'fr_XX' }), /a source language places its code around a source text; source ids are read as given/);
    await assert.rejects(run('mbart-50', { text: 'the cat' }, { ids: [2, 37] }, { target: 'ro_RO' }), /target ids are the decoder's input as given/);
    await assert.rejects(run('bart-bin', { text: 'the cat' }, { generate: 2 }, { target: 'ro_RO' }), /has no language codes in its tokenizer \(mBART's and mBART-50's have them, e.g\. en_XX\): leave out the source and target languages$/);
  });

  it("reads the codes and where they go from the tokenizer's class, else from its saved template", () => {
    const code = (content: string, id: number) => ({ id, content, special: true });
    const tokenizer = (single: string[]) => ({
      added_tokens: [code('<s>', 0), code('en_XX', 5), code('de_DE', 4), { id: 6, content: 'fr_XX', special: false }],
      post_processor: { type: 'TemplateProcessing', single: single.map((id) => (id === '$A' ? { Sequence: { id: 'A', type_id: 0 } } : { SpecialToken: { id, type_id: 0 } })) },
    });
    assert.deepEqual(languageCodesOf(tokenizer(['en_XX', '$A', '</s>']), { src_lang: 'en_XX', tgt_lang: 'zz_ZZ' }), {
      codes: [{ code: 'de_DE', id: 4 }, { code: 'en_XX', id: 5 }],
      placement: 'before',
      defaultSource: 'en_XX',
    });
    assert.equal(languageCodesOf(tokenizer(['$A', '</s>', 'en_XX']), {})?.placement, 'after');
    assert.equal(languageCodesOf(tokenizer(['$A', '</s>', 'en_XX']), { tokenizer_class: 'MBart50TokenizerFast' })?.placement, 'before');
    assert.equal(languageCodesOf(tokenizer(['<s>', '$A', '</s>']), {}), undefined, 'codes the template does not place: not a multilingual tokenizer');
    assert.equal(languageCodesOf({ added_tokens: [code('<s>', 0)] }, { tokenizer_class: 'MBartTokenizer' }), undefined);
  });
});
