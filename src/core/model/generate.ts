// A causal model writing its answer: the prompt's forward fills a key/value cache, then each new
// token costs one row of every product and one attention row over the cache (forward.ts's step),
// chosen greedily or by seeded sampling (decoding.ts; the values not given are the folder's
// generation_config.json's, else transformers' defaults: samplingConfig.ts), until the model's
// end-of-sequence token (kept) or the number asked for. The run returned is one forward over the
// whole final sequence (prompt + generated), so every view, head score, rollout and drill-down
// works on it unchanged, and its attention rows are those the steps computed.
//
// The contract the editor codes against:
// - generateModel(files, input, options) → ModelRun with `generation`: promptLength, steps (one
//   per new token: its id and label, the top 5 candidates it was chosen from, its attention row
//   as computed, its time), stoppedBy 'eos' | 'length' | 'cancelled', the generated text, and
//   how the tokens were chosen (decoding).
// - options.onPrompt(attention) is called once, after the prompt's forward and before the first
//   step, with the prompt's attention (every head's lower triangle, up to LIVE_PROMPT_VALUES);
//   options.onStep(step) as each token is chosen, before the next is computed;
//   options.signal's abort stops the loop at once (the run then covers the tokens chosen so far);
//   options.isCancelled / cancelFlag cancel the whole run, as for runModel.
// - decodeStepSpec(run, layer, head, position): one head's step-by-step problem at a generated
//   position, as the engine's decode variant (the row of token `position` over keys 0…position).
import { CancelledError } from '../engine/attention';
import { warmThreads } from '../engine/fast/pool';
import { warmNativeLinear } from '../engine/native/linear';
import type { AttentionSpec, Matrix } from '../types';
import { KeyValueCache } from './cache';
import type { ModelConfig } from './config';
import type { ForwardResult, ModelForward } from './forward';
import { tokenChooser } from './decoding';
import { generationSetting, readFolderSampling } from './generationConfig';
import { decodingOf, type SamplingRequest } from './samplingConfig';
import type { Generation, GenerationStep, ModelInput, PromptAttention } from './input';
import { finishRun, type ModelRun, openTextModel, readConfig, type RunModelOptions } from './run';
import type { ModelFiles } from './weights';
import { whileGenerating } from './resident';

export type { SamplingOptions } from './decoding';
export type { Decoding, SamplingRequest } from './samplingConfig';
export type { Generation, GenerationStep, PromptAttention } from './input';

export interface GenerateOptions extends RunModelOptions {
  /** At most this many new tokens (a whole number ≥ 1); fewer when the model ends its answer. */
  maxNewTokens: number;
  /** Absent: greedy, the most probable token at each step (a tie to the lowest id). Else sampled,
   * each value not given from the folder's generation_config.json, else transformers' default. */
  sampling?: SamplingRequest;
  /** Aborting stops the generation before its next step: the run covers what was generated. */
  signal?: AbortSignal;
  /** Each token as it is chosen, before the next is computed. */
  onStep?(step: GenerationStep): void;
  /** The prompt's attention, once its forward has run and before the first step (what a page draws as the answer grows). */
  onPrompt?(attention: PromptAttention): void;
}

/**
 * The most prompt attention weights (lower triangles of every layer × head) handed to onPrompt:
 * 16 MB of float32, GPT-2-small's 144 heads up to a 240-token prompt. Past it the prompt's
 * attention is one forward's, seen when the run ends.
 */
export const LIVE_PROMPT_VALUES = 2 ** 22;

/** Refused up front, before a weight is read: what cannot be generated. */
export class GenerationError extends RangeError {}

export async function generateModel(files: ModelFiles, input: ModelInput, options: GenerateOptions): Promise<ModelRun> {
  const started = performance.now();
  const newTokens = options.maxNewTokens;
  if (!(Number.isInteger(newTokens) && newTokens >= 1)) throw new GenerationError(`the number of new tokens must be a whole number of at least 1, not ${newTokens}`);
  if ('image' in input) throw new GenerationError('generation needs a text or token ids, not a picture');
  warmThreads();
  const nativeWarmed = options.backend ? Promise.resolve() : warmNativeLinear();
  const config = await readConfig(files);
  refuseNonGenerating(config);
  const decoding = decodingOf(options.sampling, await readFolderSampling(files));
  const choose = tokenChooser(decoding.sampling);
  const eosIds = await endOfSequenceIds(files);
  const model = await openTextModel(files, config, input, options, nativeWarmed, (ids) => {
    const needed = ids.length + newTokens;
    if (needed > config.maxPositions) {
      throw new GenerationError(`the prompt's ${ids.length} token${ids.length === 1 ? '' : 's'} and ${newTokens} new one${newTokens === 1 ? '' : 's'} need ${needed} positions, past the model's ${config.maxPositions}: ask for at most ${Math.max(0, config.maxPositions - ids.length)} new tokens`);
    }
    return needed;
  });
  try {
    const { forward, head, ids, tokenizer } = model;
    if (!head.present) throw new GenerationError('the checkpoint has no LM head (lm_head.weight, or tied embeddings): it cannot choose a next token');
    const label = (id: number) => tokenizer?.label(id) ?? `#${id}`;
    const loadMs = performance.now() - started;
    const cache = new KeyValueCache(config.layers, config.kvHeads * config.headDim, ids.length + newTokens);
    const { signal } = options;
    const control = { isCancelled: () => Boolean(signal?.aborted) || Boolean(options.isCancelled?.()), ...(options.cancelFlag ? { cancelFlag: options.cancelFlag } : {}) };
    const steps: GenerationStep[] = [];
    let stoppedBy: Generation['stoppedBy'] = 'length';
    const prefillStarted = performance.now();
    let prefillMs = 0;
    try {
      await whileGenerating(model.resident, async () => {
        // The prompt but its last token in one forward; the last is fed as step 0, so that every step's row is computed alike.
        const prefill = ids.length > 1 ? await forward.run(ids.slice(0, -1), control, cache) : undefined;
        prefillMs = performance.now() - prefillStarted;
        if (options.onPrompt) options.onPrompt(await promptAttention(forward, config, prefill, ids.length - 1));
        let fed = ids[ids.length - 1];
        for (let index = 0; index < newTokens; index++) {
          if (signal?.aborted) {
            stoppedBy = 'cancelled';
            break;
          }
          const stepStarted = performance.now();
          const { hidden, attention } = await forward.step(fed, cache, control);
          const logits = (await head.logits(hidden, 1)) as Float32Array; // present: checked above
          const position = ids.length + index;
          const id = choose(logits);
          const step: GenerationStep = { index, position, id, token: label(id), candidates: head.top(position - 1, logits, 'next'), attention, ms: performance.now() - stepStarted };
          steps.push(step);
          options.onStep?.(step);
          if (eosIds.includes(id)) {
            stoppedBy = 'eos';
            break;
          }
          fed = id;
        }
      });
    } catch (error) {
      // The signal's abort stops the generation; the caller's own cancel (isCancelled) stops the run.
      if (!(error instanceof CancelledError && signal?.aborted && !options.isCancelled?.())) throw error;
      stoppedBy = 'cancelled';
    }
    const generated = steps.map((step) => step.id);
    const all = [...ids, ...generated];
    if (ropeChangesBy(config, Math.max(1, ids.length - 1), all.length)) {
      model.warnings.push(
        `this model's RoPE frequencies change with the sequence's length (longrope or dynamic scaling): each token was generated with the cache's keys as rotated when computed (as transformers' cache keeps them), while the attentions shown are one forward over the ${all.length} tokens, which rotates them all at the final length`,
      );
    }
    const forwardStarted = performance.now();
    const run = await finishRun(model, all, await forward.run(all, { ...(options.isCancelled ? { isCancelled: options.isCancelled } : {}), ...(options.cancelFlag ? { cancelFlag: options.cancelFlag } : {}) }), loadMs, forwardStarted);
    run.generation = { promptLength: ids.length, steps, stoppedBy, eosIds, decoding, ...(tokenizer ? { text: tokenizer.text(generated) } : {}), prefillMs, cacheBytes: cache.bytes };
    return run;
  } catch (error) {
    model.dispose();
    throw error;
  }
}

/** The prefill's attention, every head's lower triangle packed (PromptAttention); its weights only when there are at most LIVE_PROMPT_VALUES. */
async function promptAttention(forward: ModelForward, c: ModelConfig, prefill: ForwardResult | undefined, n: number): Promise<PromptAttention> {
  const triangle = (n * (n + 1)) / 2;
  const shape = { queries: n, layers: c.layers, heads: c.heads };
  if (!prefill || c.layers * c.heads * triangle > LIVE_PROMPT_VALUES) return shape;
  const weights = new Float32Array(c.layers * c.heads * triangle);
  for (let layer = 0; layer < c.layers; layer++) {
    await forward.eachHeadGroup(layer, prefill.layers[layer], n, async (first, heads) =>
      heads.forEach((head, h) => {
        const at = (layer * c.heads + first + h) * triangle;
        for (let row = 0; row < n; row++) weights.set(head.subarray(row * n, row * n + row + 1), at + (row * (row + 1)) / 2);
      }),
    );
  }
  return { ...shape, weights };
}

/** Generation of an encoder (BERT's masks) or a vision model is refused in one line. */
function refuseNonGenerating(c: ModelConfig): void {
  if (c.family === 'vision') throw new GenerationError(`this is a vision model (${c.modelType}): it does not generate text`);
  // Its target is generated by its run (seq2seqRun.ts), from the source the run is given.
  if (c.encoderDecoder) throw new GenerationError(`this is an encoder–decoder model (${c.modelType}): its target is generated from the source by a run with target { generate: N }`);
  if (!c.causal) throw new GenerationError(`this is an encoder (${c.modelType}): it fills masked tokens and does not generate; generation needs a causal language model (GPT-2, Llama…)`);
}

/**
 * The ids that end an answer, as transformers reads them: generation_config.json's eos_token_id
 * when it has one, else config.json's; a number or a list.
 */
export async function endOfSequenceIds(files: ModelFiles): Promise<number[]> {
  const value = await generationSetting(files, 'eos_token_id');
  return (Array.isArray(value) ? value : [value]).filter((id): id is number => Number.isInteger(id));
}

/**
 * Whether some layer rotated rows computed at lengths first…final − 1 (the prompt's forward, then
 * each step) with other RoPE frequencies than one forward of `final` tokens does: longrope's short
 * factors before its original length and the long ones past it; dynamic NTK's theta, which grows
 * with every length past its original.
 */
function ropeChangesBy(c: ModelConfig, first: number, final: number): boolean {
  return c.attention.some(({ rope }) => rope !== undefined && ((rope.long !== undefined && first <= rope.long.beyond && final > rope.long.beyond) || (rope.dynamic !== undefined && final > rope.dynamic.original)));
}

/**
 * One head's step-by-step problem at `position` of a run (a generated token's): the drill-down's
 * problem cut to positions 0…position, with the engine's decode variant, which computes the one
 * query row of that token over every key up to it, as the generation's cached step did.
 */
export async function decodeStepSpec(run: ModelRun, layer: number, head: number, position: number): Promise<AttentionSpec> {
  if (!(Number.isInteger(position) && position >= 0 && position < run.queryCount)) throw new RangeError(`no position ${position}: the run has ${run.queryCount} tokens`);
  const spec = await run.drillDownSpec(layer, head);
  const rows = position + 1;
  const cut = (m: Matrix | undefined): Matrix | undefined => m && { rows, cols: m.cols, data: m.data.slice(0, rows * m.cols) };
  const { X, Q, K, V, tokens, options } = spec;
  return {
    ...spec,
    ...(X ? { X: cut(X) } : {}),
    ...(Q ? { Q: cut(Q) } : {}),
    ...(K ? { K: cut(K) } : {}),
    ...(V ? { V: cut(V) } : {}),
    ...(tokens ? { tokens: tokens.slice(0, rows) } : {}),
    options: { ...options, decode: true, name: `${options.name ?? `L${layer} H${head}`}, step at token ${position}` },
  };
}
