// Generate…'s last question: greedy (the default) or sampled, and then each sampling value, an
// empty answer keeping the folder's generation_config.json value, else transformers' default —
// each box says which. The values are read and checked as a directive's are
// (core/parse/samplingValues.ts); the run checks the folder's own and says what it cannot use.
import * as vscode from 'vscode';
import { readFolderSampling } from '../core/model/generationConfig';
import { type FolderSampling, folderSamplingText, SAMPLING_DEFAULTS, type SamplingRequest } from '../core/model/samplingConfig';
import { readSamplingValue, type SamplingKey, samplingValueRule } from '../core/parse/samplingValues';
import { folderFiles } from '../node/modelFiles';

/** The values asked for, in order, with the request's field each fills (the folder's of the same name, but the seed). */
const QUESTIONS: { key: SamplingKey; field: keyof SamplingRequest; label: string }[] = [
  { key: 'temperature', field: 'temperature', label: 'Temperature' },
  { key: 'top_k', field: 'topK', label: 'Top-k' },
  { key: 'top_p', field: 'topP', label: 'Top-p' },
  { key: 'seed', field: 'seed', label: 'Seed' },
];

/**
 * Greedy (`{}`) or sampled (`{ sampling }`, the values typed; empty ones left to the folder and the
 * defaults); undefined when the user cancels. `title` is the question's place among Generate…'s.
 */
export async function askDecoding(folder: string, title: string): Promise<{ sampling?: SamplingRequest } | undefined> {
  const written = await folderSampling(folder);
  const values = written && folderSamplingText(written);
  const asks = written?.doSample ? `generation_config.json asks for sampling${values ? `: ${values}` : ''}` : undefined;
  const picked = await vscode.window.showQuickPick(
    [
      { label: 'Greedy', description: 'the most probable token at each step (the default)', ...(asks ? { detail: asks } : {}), sample: false },
      { label: 'Sample…', description: 'draw each token: temperature, top-k, top-p, seed', sample: true },
    ],
    { title, placeHolder: 'How each token is chosen', ignoreFocusOut: true },
  );
  if (!picked) return undefined;
  if (!picked.sample) return {};
  const sampling: SamplingRequest = {};
  for (const [index, { key, field, label }] of QUESTIONS.entries()) {
    const { must, example } = samplingValueRule(key);
    const kept = keptValue(field, written);
    const answer = await vscode.window.showInputBox({
      title: `${title} — sampling (${index + 1}/${QUESTIONS.length})`,
      prompt: `${label}: ${must}`,
      placeHolder: `empty: ${kept}`,
      ignoreFocusOut: true,
      validateInput: (value) => (value.trim() === '' || readSamplingValue(key, value) !== undefined ? undefined : `${label} must be ${must}, e.g. ${example}`),
    });
    if (answer === undefined) return undefined;
    if (answer.trim() !== '') sampling[field] = readSamplingValue(key, answer);
  }
  return { sampling };
}

/** What an empty answer keeps: the folder's value (null: off), else the default. */
function keptValue(field: keyof SamplingRequest, written: FolderSampling | undefined): string {
  const value = field === 'seed' ? undefined : written?.[field];
  if (value === undefined) return `${SAMPLING_DEFAULTS[field]} (the default)`;
  return `${value === null ? 'off' : String(value)} (generation_config.json)`;
}

/** The folder's generation_config.json sampling values; undefined without one, or when it cannot be read (the run says why). */
async function folderSampling(folder: string): Promise<FolderSampling | undefined> {
  return readFolderSampling(folderFiles(folder)).catch(() => undefined);
}
