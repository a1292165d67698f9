// generation_config.json's sampling values (core/model/generationConfig.ts reads them,
// samplingConfig.ts says what they mean), read as transformers' GenerationConfig reads them: greedy stays the default and says when the folder asks for
// sampling; sampling takes each value not given from the folder, else GenerationConfig's defaults
// (temperature 1, top_k 50, top_p 1), a null or top_k 0 turning one off; values that cannot sample
// are refused in one line naming the file. On the llama fixture with a generation_config.json
// written beside it, the folder's values give the same tokens as the same values given.
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateModel } from '../../../src/core/model/generate';
import { readFolderSampling } from '../../../src/core/model/generationConfig';
import { decodingOf, decodingText, type FolderSampling } from '../../../src/core/model/samplingConfig';
import { ModelFileError } from '../../../src/core/model/weights';
import { folderFiles } from '../../../src/node/modelFiles';
import { generationReferences, modelFixture } from './fixtures';

/** A copy of the llama fixture with `config` as its generation_config.json (none when undefined). */
function folderWith(config: unknown): string {
  const folder = mkdtempSync(join(tmpdir(), 'generation-config-'));
  cpSync(modelFixture('llama-gqa-bf16'), folder, { recursive: true });
  if (config !== undefined) writeFileSync(join(folder, 'generation_config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  return folder;
}

describe('generation_config.json: sampling values', function () {
  this.timeout(60_000);
  const folders: string[] = [];
  const folder = (config: unknown) => {
    const made = folderWith(config);
    folders.push(made);
    return folderFiles(made);
  };
  after(() => folders.forEach((made) => rmSync(made, { recursive: true, force: true })));

  it('reads do_sample, temperature, top_k and top_p as written (null kept), none without the file, and refuses another type in one line', async () => {
    assert.equal(await readFolderSampling(folder(undefined)), undefined);
    assert.deepEqual(await readFolderSampling(folder({ eos_token_id: 2 })), { doSample: false });
    assert.deepEqual(await readFolderSampling(folder({ do_sample: true, temperature: 0.6, top_k: null, top_p: 0.9, repetition_penalty: 1.1 })), { doSample: true, temperature: 0.6, topK: null, topP: 0.9 });
    await assert.rejects(readFolderSampling(folder({ temperature: '0.7' })), (error: Error) => error instanceof RangeError && error.message === 'generation_config.json\'s temperature must be a number or null, not "0.7"');
    await assert.rejects(readFolderSampling(folder('{ "do_sample": tru')), (error: Error) => error instanceof ModelFileError && /^generation_config\.json is not valid JSON/.test(error.message));
  });

  it('greedy unless sampling is asked, saying when the folder asks for it', () => {
    const asks: FolderSampling = { doSample: true, temperature: 0.7, topP: 0.8 };
    assert.deepEqual(decodingOf(undefined, undefined), {});
    assert.deepEqual(decodingOf(undefined, { doSample: false, temperature: 0.7 }), {});
    assert.deepEqual(decodingOf(undefined, asks), { folderSamples: asks });
    assert.equal(decodingText({}), 'greedy: the most probable token at each step');
    assert.equal(decodingText({ folderSamples: asks }), 'greedy: the most probable token at each step (generation_config.json asks for sampling, temperature 0.7, top_p 0.8; greedy is the default here: sample to use it)');
  });

  it('samples with the values given, else the folder’s, else GenerationConfig’s defaults; null and top_k 0 turn one off', () => {
    assert.deepEqual(decodingOf({}, undefined), {
      sampling: { temperature: 1, topK: 50, seed: 0 },
      sources: { temperature: 'default', topK: 'default', topP: 'default', seed: 'default' },
    });
    const folderValues: FolderSampling = { doSample: false, temperature: 0.7, topK: 20, topP: 0.8 };
    const mixed = decodingOf({ topK: 5, seed: 3 }, folderValues);
    assert.deepEqual(mixed, {
      sampling: { temperature: 0.7, topK: 5, topP: 0.8, seed: 3 },
      sources: { temperature: 'generation_config.json', topK: 'given', topP: 'generation_config.json', seed: 'given' },
    });
    assert.equal(decodingText(mixed), 'sampled: temperature 0.7 (generation_config.json), top-k 5, top-p 0.8 (generation_config.json), seed 3');
    assert.deepEqual(decodingOf({}, { doSample: true, temperature: null, topK: null, topP: null }).sampling, { temperature: 1, seed: 0 });
    assert.deepEqual(decodingOf({}, { doSample: true, topK: 0 }).sampling, { temperature: 1, seed: 0 });
    assert.deepEqual(decodingOf({ topK: 0 }, undefined).sampling, { temperature: 1, seed: 0 }, '--top-k 0: every token');
    assert.equal(decodingText(decodingOf({ topK: 0 }, undefined)), 'sampled: temperature 1 (default), no top-k, no top-p (default), seed 0 (default)');
  });

  it('refuses what cannot sample in one line, naming generation_config.json when the value is the folder’s, and not when a given value replaces it', () => {
    const refused = (folderValues: Partial<FolderSampling>, message: string) => assert.throws(() => decodingOf({}, { doSample: true, ...folderValues }), (error: Error) => error instanceof RangeError && error.message === message);
    refused({ temperature: 0 }, "generation_config.json's temperature must be above 0 to sample, not 0");
    refused({ temperature: -1 }, "generation_config.json's temperature must be above 0 to sample, not -1");
    refused({ topP: 1.5 }, "generation_config.json's top_p must be above 0 and at most 1, not 1.5");
    refused({ topP: 0 }, "generation_config.json's top_p must be above 0 and at most 1, not 0");
    refused({ topK: -1 }, "generation_config.json's top_k must be a whole number of at least 0, not -1");
    refused({ topK: 2.5 }, "generation_config.json's top_k must be a whole number of at least 0, not 2.5");
    assert.deepEqual(decodingOf({ temperature: 0.5 }, { doSample: true, temperature: 0 }).sampling, { temperature: 0.5, topK: 50, seed: 0 });
    assert.deepEqual(decodingOf(undefined, { doSample: true, temperature: 0 }), { folderSamples: { doSample: true, temperature: 0 } }, 'a greedy answer does not use them');
    assert.throws(() => decodingOf({ temperature: 0 }, undefined), /^RangeError: the temperature must be a number above 0, not 0/);
    assert.throws(() => decodingOf({ topK: -2 }, undefined), /top-k must be a whole number of at least 0 \(0: no top-k\), not -2/);
  });

  it('a generation samples with the folder’s values as with the same values given, and says so', async () => {
    const { prompt } = generationReferences()['llama-gqa-bf16'];
    const withFolder = await generateModel(folder({ do_sample: true, temperature: 1.5, top_k: 3, top_p: 0.9 }), { ids: prompt }, { maxNewTokens: 6, sampling: { seed: 7 } });
    const given = await generateModel(folder(undefined), { ids: prompt }, { maxNewTokens: 6, sampling: { temperature: 1.5, topK: 3, topP: 0.9, seed: 7 } });
    assert.deepEqual(withFolder.generation!.steps.map((step) => step.id), given.generation!.steps.map((step) => step.id));
    assert.deepEqual(withFolder.generation!.decoding.sources, { temperature: 'generation_config.json', topK: 'generation_config.json', topP: 'generation_config.json', seed: 'given' });
    const greedy = await generateModel(folder({ do_sample: true, temperature: 0.6 }), { ids: prompt }, { maxNewTokens: 2 });
    assert.deepEqual(greedy.generation!.decoding, { folderSamples: { doSample: true, temperature: 0.6 } });
    await assert.rejects(generateModel(folder({ do_sample: true, top_p: 2 }), { ids: prompt }, { maxNewTokens: 2, sampling: {} }), /^RangeError: generation_config\.json's top_p must be above 0 and at most 1, not 2$/);
  });
});
