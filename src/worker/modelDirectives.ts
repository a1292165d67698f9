// What a model directive asks of its folder that the text alone cannot tell: `generate=N` of a
// model that does not generate (an encoder such as BERT, a vision model) gets its diagnostic at
// the `generate` word when the text is read, from the folder's config.json. A folder that cannot
// be read says nothing here: its run says why.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseModelConfig } from '../core/model/config';
import type { Diagnostic } from '../core/types';
import type { WorkerReading } from '../protocol';

export async function withGenerateChecks(reading: WorkerReading, textFolder: string): Promise<WorkerReading> {
  const found: Diagnostic[] = [];
  for (const problem of reading.parse.problems) {
    const range = problem.optionRanges?.generate;
    if (problem.model?.generate === undefined || !range) continue;
    const refusal = await generationRefusal(resolve(textFolder, problem.model.path));
    if (refusal) found.push({ range, severity: 'error', code: 'model-cannot-generate', message: refusal });
  }
  if (found.length === 0) return reading;
  return { ...reading, parse: { ...reading.parse, diagnostics: [...reading.parse.diagnostics, ...found] } };
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
    if (!config.causal) return `\`generate\`: ${config.modelType} is an encoder; it fills masked tokens and does not generate. Generation needs a causal language model (GPT-2, Llama…).`;
  } catch {
    return undefined;
  }
  return undefined;
}
