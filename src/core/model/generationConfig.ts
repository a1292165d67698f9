// A generation setting: generation_config.json's when it names it, else config.json's (older
// folders keep their generation settings there, GenerationConfig.from_model_config's source);
// and generation_config.json's sampling values (samplingConfig.ts says what they mean).
import { type FolderSampling, folderSamplingOf } from './samplingConfig';
import { ModelFileError, type ModelFiles, readText } from './weights';

async function readJson(files: ModelFiles, name: string): Promise<Record<string, unknown> | undefined> {
  const text = await readText(files, name);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new ModelFileError(`${name} is not valid JSON (${(error as Error).message})`);
  }
}

/** `key` of generation_config.json, else of config.json; undefined when neither names it. */
export async function generationSetting(files: ModelFiles, key: string): Promise<unknown> {
  const generation = await readJson(files, 'generation_config.json');
  return generation && key in generation ? generation[key] : (await readJson(files, 'config.json'))?.[key];
}

/** generation_config.json's sampling values; undefined without the file. A value of another type is refused in one line. */
export async function readFolderSampling(files: ModelFiles): Promise<FolderSampling | undefined> {
  const json = await readJson(files, 'generation_config.json');
  return json && folderSamplingOf(json);
}
