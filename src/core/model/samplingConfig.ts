// What a folder asks of sampling and how an answer's tokens were chosen, from generation_config.json's
// values as transformers' GenerationConfig reads them: do_sample, temperature, top_k and top_p
// (generationConfig.ts reads the file). Greedy stays the default here whatever do_sample says (an
// answer you can reproduce and compare with PyTorch's); when sampling is asked, the values the user
// does not give are the folder's, else GenerationConfig's own defaults (temperature 1, top_k 50,
// top_p 1), and a `null` turns one off as it does there (top_k 0 too). Values that cannot sample
// (a temperature ≤ 0, a top_p outside (0, 1], a top_k below 0) are refused in one line that names
// the file. Nothing else of the file is applied (repetition_penalty, num_beams…). Pure, so the
// heads page says with it how an answer was chosen.
import { type SamplingOptions, samplingProblem } from './decoding';

/** The sampling values a user gave (a CLI flag, a directive's attribute, a palette answer); the rest come from the folder. */
export type SamplingRequest = Partial<SamplingOptions>;

/** The sampling keys of generation_config.json, by our name. */
const FOLDER_KEYS = { temperature: 'temperature', topK: 'top_k', topP: 'top_p' } as const;
type FolderKey = keyof typeof FOLDER_KEYS;

/** generation_config.json's sampling values: a number, null (off), or absent (not in the file). */
export interface FolderSampling {
  doSample: boolean;
  temperature?: number | null;
  topK?: number | null;
  topP?: number | null;
}

/** A value neither given nor in the folder: transformers' GenerationConfig defaults, and seed 0. */
export const SAMPLING_DEFAULTS = { temperature: 1, topK: 50, topP: 1, seed: 0 } as const;

/** Where each value of a sampled answer came from. */
export type SamplingSource = 'given' | 'generation_config.json' | 'default';

/** How an answer's tokens were chosen. */
export interface Decoding {
  /** Absent: greedy (the most probable token at each step, a tie to the lowest id). */
  sampling?: SamplingOptions;
  /** Where each sampling value came from. */
  sources?: Record<keyof SamplingOptions, SamplingSource>;
  /** A greedy answer whose folder's generation_config.json asks for sampling (do_sample: true): its values. */
  folderSamples?: FolderSampling;
}

/** The sampling values of generation_config.json's object (a RangeError of one line for a value that is not a number or null). */
export function folderSamplingOf(json: Record<string, unknown>): FolderSampling {
  const folder: FolderSampling = { doSample: json.do_sample === true };
  for (const [key, name] of Object.entries(FOLDER_KEYS) as [FolderKey, string][]) {
    if (!(name in json)) continue;
    const value = json[name];
    if (value !== null && typeof value !== 'number') throw new RangeError(`generation_config.json's ${name} must be a number or null, not ${JSON.stringify(value)}`);
    folder[key] = value;
  }
  return folder;
}

/** A folder value sampling cannot use, in one line; undefined when it can. */
function folderValueProblem(key: FolderKey, value: number): string | undefined {
  if (key === 'temperature' && !(value > 0)) return `generation_config.json's temperature must be above 0 to sample, not ${value}`;
  if (key === 'topK' && !(Number.isInteger(value) && value >= 0)) return `generation_config.json's top_k must be a whole number of at least 0, not ${value}`;
  if (key === 'topP' && !(value > 0 && value <= 1)) return `generation_config.json's top_p must be above 0 and at most 1, not ${value}`;
  return undefined;
}

/**
 * How to choose the tokens: greedy unless `request` asks to sample; then each value as given,
 * else the folder's, else GenerationConfig's default, the seed 0 unless given. Throws a
 * RangeError of one line for a value sampling cannot use, naming generation_config.json when the
 * value is the folder's.
 */
export function decodingOf(request: SamplingRequest | undefined, folder: FolderSampling | undefined): Decoding {
  if (!request) return folder?.doSample ? { folderSamples: folder } : {};
  const sources = { seed: request.seed === undefined ? 'default' : 'given' } as Record<keyof SamplingOptions, SamplingSource>;
  const values: Record<FolderKey, number> = { temperature: SAMPLING_DEFAULTS.temperature, topK: SAMPLING_DEFAULTS.topK, topP: SAMPLING_DEFAULTS.topP };
  for (const key of Object.keys(FOLDER_KEYS) as FolderKey[]) {
    const given = request[key];
    const written = folder?.[key];
    if (given !== undefined) {
      values[key] = given;
      sources[key] = 'given';
    } else if (written !== undefined) {
      const problem = written === null ? undefined : folderValueProblem(key, written);
      if (problem) throw new RangeError(problem);
      // null turns the value off, as GenerationConfig's None does: no scaling, no top-k, no top-p.
      values[key] = written ?? { temperature: 1, topK: 0, topP: 1 }[key];
      sources[key] = 'generation_config.json';
    } else sources[key] = 'default';
  }
  const sampling: SamplingOptions = { temperature: values.temperature, seed: request.seed ?? SAMPLING_DEFAULTS.seed, ...(values.topK !== 0 ? { topK: values.topK } : {}), ...(values.topP !== 1 ? { topP: values.topP } : {}) };
  const problem = samplingProblem(sampling);
  if (problem) throw new RangeError(problem);
  return { sampling, sources };
}

/** One line: how an answer's tokens were chosen, and where each sampling value came from. */
export function decodingText(decoding: Decoding): string {
  const { sampling, sources, folderSamples } = decoding;
  if (!sampling || !sources) {
    const greedy = 'greedy: the most probable token at each step';
    const written = folderSamples && folderSamplingText(folderSamples);
    return folderSamples ? `${greedy} (generation_config.json asks for sampling${written ? `, ${written}` : ''}; greedy is the default here: sample to use it)` : greedy;
  }
  const from = (key: keyof SamplingOptions) => (sources[key] === 'given' ? '' : sources[key] === 'default' ? ' (default)' : ' (generation_config.json)');
  return `sampled: temperature ${sampling.temperature}${from('temperature')}, ${sampling.topK === undefined ? 'no top-k' : `top-k ${sampling.topK}`}${from('topK')}, ${sampling.topP === undefined ? 'no top-p' : `top-p ${sampling.topP}`}${from('topP')}, seed ${sampling.seed}${from('seed')}`;
}

/** `temperature 0.7, top_p 0.8`: the sampling values the folder writes, as named there (empty when none). */
export function folderSamplingText(folder: FolderSampling): string {
  return (Object.keys(FOLDER_KEYS) as FolderKey[])
    .filter((key) => folder[key] !== undefined)
    .map((key) => `${FOLDER_KEYS[key]} ${folder[key]}`)
    .join(', ');
}
