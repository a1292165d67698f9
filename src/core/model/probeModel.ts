// A model folder as the head analyses run it (the induction probe, comparing two texts): ids in,
// every layer's attention out, text encoded by the folder's own tokenizer. The probe draws random
// ids below the vocabulary size and starts with the model's BOS token.
import type { AttentionStack } from '../heads/stack';
import { parseModelConfig } from './config';
import { runModel, type RunModelOptions } from './run';
import { ModelTokenizer } from './tokenizer';
import { ModelFileError, type ModelFiles, readText } from './weights';

/** A model the analyses run on ids (and on text when it has a tokenizer). */
export interface ProbeModel {
  run(ids: number[]): Promise<AttentionStack>;
  encode?(text: string): Promise<number[]>;
  vocabularySize: number;
  bos: number;
}

/** Tokens that begin a sequence, by family, for folders whose config names no BOS id. */
const BOS_TOKENS = ['<|endoftext|>', '<s>', '<bos>', '[CLS]', '<|begin_of_text|>'];

export async function probeModel(files: ModelFiles, options: RunModelOptions = {}): Promise<ProbeModel> {
  const configText = await readText(files, 'config.json');
  if (configText === undefined) throw new ModelFileError(`${files.folder} has no config.json: not a Hugging Face model folder`);
  const config = parseModelConfig(configText);
  const tokenizer = await ModelTokenizer.open(files);
  const named = (JSON.parse(configText) as { bos_token_id?: unknown }).bos_token_id;
  const bos = typeof named === 'number' ? named : BOS_TOKENS.map((token) => tokenizer?.idOf(token)).find((id) => id !== undefined) ?? 0;
  return {
    run: (ids) => runModel(files, { ids }, options),
    ...(tokenizer ? { encode: async (text: string) => tokenizer.encode(text).ids } : {}),
    vocabularySize: config.vocab,
    bos,
  };
}
