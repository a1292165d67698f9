// What a model directive asks of its folder that the text alone cannot tell: `generate=N` of a
// model that does not generate (an encoder such as BERT, a vision model) gets its diagnostic at
// the `generate` word when the text is read, from the folder's config.json; `sample` on an
// encoder–decoder model (whose target is generated greedily), or where generation_config.json
// holds a value sampling cannot use, gets its own at the `sample` word. A folder that cannot be
// read says nothing here: its run says why.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseModelConfig } from '../core/model/config';
import { readFolderSampling } from '../core/model/generationConfig';
import { decodingOf, type SamplingRequest } from '../core/model/samplingConfig';
import { folderFiles } from '../node/modelFiles';
import type { Diagnostic } from '../core/types';
import type { WorkerReading } from '../protocol';

export async function withGenerateChecks(reading: WorkerReading, textFolder: string): Promise<WorkerReading> {
  const found: Diagnostic[] = [];
  for (const problem of reading.parse.problems) {
    const range = problem.optionRanges?.generate;
    if (problem.model?.generate === undefined || !range) continue;
    const folder = resolve(textFolder, problem.model.path);
    const refusal = await generationRefusal(folder);
    if (refusal) found.push({ range, severity: 'error', code: 'model-cannot-generate', message: refusal });
    const sampleRange = problem.optionRanges?.sample;
    const sampleRefusal = !refusal && problem.model.sample && sampleRange ? await samplingRefusal(folder, problem.model.sample) : undefined;
    if (sampleRefusal && sampleRange) found.push({ range: sampleRange, severity: 'error', code: 'model-cannot-sample', message: sampleRefusal });
  }
  if (found.length === 0) return reading;
  return { ...reading, parse: { ...reading.parse, diagnostics: [...reading.parse.diagnostics, ...found] } };
}

/** Why `sample` cannot draw this folder's tokens: an encoder–decoder model, or a value of its generation_config.json; undefined when it can (or the folder cannot be read). */
async function samplingRefusal(folder: string, given: SamplingRequest): Promise<string | undefined> {
  try {
    const config = parseModelConfig(await readFile(resolve(folder, 'config.json'), 'utf8'));
    if (config.encoderDecoder) return `\`sample\`: ${config.modelType} is an encoder–decoder model; its target is generated greedily here.`;
    decodingOf(given, await readFolderSampling(folderFiles(folder)));
  } catch (error) {
    // Sampling's own refusals (RangeError) are said here; anything else is the run's to say.
    if (error instanceof RangeError) return `\`sample\`: ${error.message}`;
  }
  return undefined;
}

async function generationRefusal(folder: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(resolve(folder, 'config.json'), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const config = parseModelConfig(text);
    if (config.family === 'vision') return `\`generate\`: ${config.modelType} is a vision model; it classifies pictures and does not generate text.`;
    // An encoder–decoder model's `generate` is its target, generated from the source (commands.ts).
    if (!config.causal && !config.encoderDecoder) return `\`generate\`: ${config.modelType} is an encoder; it fills masked tokens and does not generate. Generation needs a causal language model (GPT-2, Llama…).`;
  } catch {
    return undefined;
  }
  return undefined;
}
