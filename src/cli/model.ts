// `attention-lens model DIR (--text TEXT | --ids 1,2,3 | --image FILE) [--target TGT | --target-ids
// 1,2,3 | --generate N] [--json]`: a whole model folder run on a text (or a vision model on a
// picture; an encoder–decoder model on a source and a target). Text output: the architecture, tokens,
// predictions and where each head of each layer looks from the last token; --json prints exactly
// {architecture, tokens, token_ids, attentions, hidden_last, logits_last}, and a mixture of
// experts' routing as "experts", for scripts and tests (a picture's run: patch_grid in place of
// token_ids; an encoder–decoder run: {architecture, tokens, token_ids, target_tokens, target_ids,
// encoder_attentions, decoder_attentions, cross_attentions, hidden_last, logits_last}). With
// --generate N a causal model writes up to N tokens after the text (greedy, or --sample's seeded
// draws): the report then covers the whole final sequence, and the JSON adds generated_ids and
// generated_tokens; an encoder–decoder model generates its target greedily from the source. Bad
// input is one line on stderr and exit 1.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { ImageError } from '../core/image/decode';
import { ModelConfigError } from '../core/model/config';
import { routingPairs } from '../core/model/experts';
import type { Generation, Languages, ModelInput, TargetInput } from '../core/model/input';
import { type ModelRun, readConfig, runModel } from '../core/model/run';
import { GenerationError, generateModel, type SamplingRequest } from '../core/model/generate';
import { decodingText } from '../core/model/samplingConfig';
import { chatPromptIds } from '../core/model/chatTemplate';
import { ModelFileError } from '../core/model/weights';
import { TensorReadError } from '../core/parse/tensors';
import { defaultMemoryLimit, folderFiles } from '../node/modelFiles';
import { writeFailure } from './failure';

export const MODEL_USAGE = `  attention-lens model DIR (--text TEXT | --ids 1,2,3 | --image FILE) [--json] [--max-memory-mb N]
                      [--generate N [--sample [--temperature T] [--top-k K] [--top-p P] [--seed S]]] [--chat]
                      [--target TGT | --target-ids 1,2,3] [--src-lang CODE] [--tgt-lang CODE]
      Run a Hugging Face model folder (config.json, model.safetensors or shards or
      pytorch_model.bin, tokenizer.json) on TEXT, or on token ids: GPT-2, BERT, Llama,
      Mistral, Qwen2/2.5, Qwen3, Gemma 2/3, Mixtral, Qwen2-MoE, OLMoE, Qwen3-MoE; or a
      vision model (ViT, DeiT, DINOv2, CLIP, SigLIP; preprocessor_config.json) on a PNG or
      JPEG picture. Prints the tokens, the predictions, each head's focus and the experts'
      routing; --json prints {architecture, tokens, token_ids, attentions, hidden_last,
      logits_last, experts (mixtures of experts: [layer][position] of [expert, weight]
      pairs)} (a picture: patch_grid for token_ids). --max-memory-mb refuses a larger run
      up front (default: three quarters of this machine's memory).
      --generate N: a causal model writes up to N new tokens after the input, each from a
      key/value cache, stopping after its end-of-sequence token (kept); greedy unless
      --sample (each value not given: generation_config.json's, else temperature 1,
      top-k 50, top-p 1, seed 0; --top-k 0: no top-k). The report and the JSON
      cover the whole final sequence; the JSON adds generated_ids and generated_tokens.
      --chat: TEXT is sent as a user message through the folder's chat template
      (tokenizer_config.json's chat_template), ending where the assistant's answer begins.
      Encoder–decoder models (T5, Flan-T5, BART, Marian, mBART) take the source as --text
      or --ids and a target: --target TGT (decoder_start_token_id, then its tokens),
      --target-ids (the decoder's exact input) or --generate N (greedy, until EOS or N
      tokens, a tie to the lowest id); --json prints {architecture, tokens, token_ids,
      target_tokens, target_ids, encoder_attentions, decoder_attentions,
      cross_attentions, hidden_last, logits_last}. mBART-50 and mBART folders translate
      between the languages their tokenizer has codes for (en_XX, de_DE, …): --src-lang
      places the source text's code, --tgt-lang the target text's, or starts --generate
      in that language (the tokenizer's saved src_lang / tgt_lang, and generation_config's
      forced_bos_token_id, when not given).
`;

interface ModelArguments {
  folder: string;
  input: ModelInput;
  json: boolean;
  memoryLimitBytes: number;
  /** --generate's value as written (checked with the run's other bad input: exit 1). */
  generate?: string;
  /** --sample's options as written, by flag. */
  sample?: Partial<Record<SamplingFlag, string>>;
  /** --chat: the text as a user message through the folder's chat template. */
  chat: boolean;
}

const SAMPLING_FLAGS = ['--temperature', '--top-k', '--top-p', '--seed'] as const;
type SamplingFlag = (typeof SAMPLING_FLAGS)[number];

/** Runs the command; returns the exit status (0, 1 on bad input, 2 on a usage error). */
export async function modelCommand(argv: string[]): Promise<number> {
  let args: ModelArguments;
  try {
    args = parseModelArguments(argv);
  } catch (error) {
    const message = (error as Error).message;
    return writeFailure(argv.includes('--json'), 'usage', message, 2, 'attention-lens model', `${message}\n\nUsage:\n${MODEL_USAGE.replace(/\n$/, '')}`);
  }
  let run: ModelRun;
  try {
    const files = folderFiles(args.folder);
    // A chat model's prompt: the template writes the special tokens, so the ids are given as they are.
    if (args.chat && 'text' in args.input) args.input = { ids: await chatPromptIds(files, args.input.text), ...('target' in args.input && args.input.target ? { target: args.input.target } : {}) };
    if (args.generate !== undefined) {
      if ('image' in args.input) throw new GenerationError('--generate writes text after a text or token ids, not a picture');
      const maxNewTokens = count('--generate', args.generate);
      // Every step reads every weight: they stay resident for the run (the default budget).
      if ((await readConfig(files)).encoderDecoder) {
        if (args.sample) throw new GenerationError("an encoder–decoder model's target is generated greedily here: --sample is for causal models");
        run = await runModel(files, { ...args.input, target: { generate: maxNewTokens } }, { memoryLimitBytes: args.memoryLimitBytes });
      } else run = await generateModel(files, args.input, { memoryLimitBytes: args.memoryLimitBytes, maxNewTokens, ...(args.sample ? { sampling: samplingOf(args.sample) } : {}) });
    } else {
      const input: ModelInput = 'image' in args.input ? { image: readPicture(args.input.image.name) } : args.input;
      // One run per process: keeping the weights (ONNX Runtime's sessions pre-packing them) would only
      // cost this run (Llama-3.2-1B-shaped: 23 s of CPU against 10 s), unless ATTENTION_LENS_RESIDENT_GB asks.
      const residentBudgetBytes = process.env.ATTENTION_LENS_RESIDENT_GB === undefined ? 0 : undefined;
      run = await runModel(files, input, { memoryLimitBytes: args.memoryLimitBytes, residentBudgetBytes });
    }
  } catch (error) {
    if (error instanceof ModelConfigError || error instanceof ModelFileError || error instanceof TensorReadError || error instanceof RangeError || error instanceof ImageError) {
      // Messages that name the folder already are not prefixed with it again.
      return writeFailure(args.json, 'failure', error.message.startsWith(args.folder) ? error.message : `${args.folder}: ${error.message}`, 1, 'attention-lens model');
    }
    throw error;
  }
  for (const warning of run.warnings) process.stderr.write(`attention-lens model: warning: ${warning}\n`);
  process.stdout.write(args.json ? `${JSON.stringify(modelJson(run))}\n` : modelText(run));
  return 0;
}

function parseModelArguments(argv: string[]): ModelArguments {
  let folder: string | undefined;
  let input: ModelInput | undefined;
  let json = false;
  let target: TargetInput | undefined;
  const languages: Languages = {};
  let memoryLimitBytes = defaultMemoryLimit();
  let generate: string | undefined;
  let sampled = false;
  let chat = false;
  const sample: Partial<Record<SamplingFlag, string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') json = true;
    else if (arg === '--text' || arg === '--ids' || arg === '--image') {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      if (input) throw new Error('give one of --text, --ids or --image, once');
      input = arg === '--text' ? { text: value } : arg === '--ids' ? { ids: parseIds(value) } : { image: { name: value, bytes: new Uint8Array() } };
    } else if (arg === '--target' || arg === '--target-ids') {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      if (target) throw new Error('give one of --target or --target-ids, once');
      target = arg === '--target' ? { text: value } : { ids: parseIds(value, arg) };
    } else if (arg === '--src-lang' || arg === '--tgt-lang') {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a language code (en_XX)`);
      languages[arg === '--src-lang' ? 'source' : 'target'] = value;
    } else if (arg === '--generate' || (SAMPLING_FLAGS as readonly string[]).includes(arg)) {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      if (arg === '--generate') generate = value;
      else sample[arg as SamplingFlag] = value;
    } else if (arg === '--sample') sampled = true;
    else if (arg === '--chat') chat = true;
    else if (arg === '--max-memory-mb') {
      const mb = Number(argv[++i]);
      if (!(mb > 0)) throw new Error('--max-memory-mb needs a positive number');
      memoryLimitBytes = mb * 2 ** 20;
    } else if (arg.startsWith('-')) throw new Error(`unknown option \`${arg}\``);
    else if (folder === undefined) folder = arg;
    else throw new Error(`unexpected argument \`${arg}\``);
  }
  if (folder === undefined) throw new Error('no model folder given');
  if (!input) throw new Error('give the input as --text TEXT, --ids 1,2,3 or --image FILE');
  if (target && 'image' in input) throw new Error('a picture takes no target');
  if (target && generate !== undefined) throw new Error('give one of --target, --target-ids or --generate');
  const given = Object.keys(sample);
  if (sampled && generate === undefined) throw new Error('--sample chooses the tokens --generate N writes: give --generate too');
  if (given.length > 0 && !sampled) throw new Error(`${given[0]} is a sampling option: add --sample (without it the most probable token is taken)`);
  if (chat && !('text' in input)) throw new Error('--chat sends --text TEXT through the chat template: give --text');
  if ((languages.source !== undefined || languages.target !== undefined) && 'image' in input) throw new Error('a picture has no language: --src-lang and --tgt-lang are a translation model\'s');
  const withTarget = 'image' in input ? input : { ...input, ...(target ? { target } : {}), ...(languages.source !== undefined || languages.target !== undefined ? { languages } : {}) };
  return { folder, input: withTarget, json, memoryLimitBytes, chat, ...(generate !== undefined ? { generate } : {}), ...(sampled ? { sample } : {}) };
}

/** A flag's number as written; anything else is refused in one line with the flag's name. */
function count(flag: string, value: string): number {
  const trimmed = value.trim();
  if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(trimmed)) throw new GenerationError(`${flag} needs a number, not \`${value}\``);
  return Number(trimmed);
}

/** --sample's options as given; the core takes the others from generation_config.json, else transformers' defaults, and checks their ranges. */
function samplingOf(flags: Partial<Record<SamplingFlag, string>>): SamplingRequest {
  const value = (flag: SamplingFlag) => (flags[flag] === undefined ? undefined : count(flag, flags[flag] as string));
  const given = { temperature: value('--temperature'), topK: value('--top-k'), topP: value('--top-p'), seed: value('--seed') };
  return Object.fromEntries(Object.entries(given).filter(([, number]) => number !== undefined));
}

/** The picture file's bytes; a file that cannot be read is an ImageError (one line). */
function readPicture(path: string): { name: string; bytes: Uint8Array } {
  try {
    return { name: basename(path), bytes: readFileSync(path) };
  } catch (error) {
    throw new ImageError(`cannot read the picture ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

function parseIds(value: string, option = '--ids'): number[] {
  const ids = value.split(',').map((part) => part.trim());
  if (ids.some((id) => !/^\d+$/.test(id))) throw new Error(`${option} needs whole numbers separated by commas, not \`${value}\``);
  return ids.map(Number);
}

/** Every head's weights of a stack, [layer][head][query][key]. */
function attentionsOf(stack: ModelRun): number[][][][] {
  const { queryCount: n, keyCount: m } = stack;
  return Array.from({ length: stack.layerCount }, (_, l) =>
    Array.from({ length: stack.headCount }, (_, h) => {
      const w = stack.weights(l, h);
      return Array.from({ length: n }, (_, q) => Array.from(w.subarray(q * m, (q + 1) * m)));
    }),
  );
}

/** The JSON the issue fixes: these keys, nothing else. */
function modelJson(run: ModelRun) {
  const n = run.queryCount;
  if (run.kinds) {
    // An encoder–decoder run (issue 43): the source, the decoder's input, its three kinds of attention.
    const { encoder, decoder, cross } = run.kinds as Required<NonNullable<ModelRun['kinds']>>;
    return {
      architecture: run.architecture,
      tokens: encoder.tokens,
      token_ids: encoder.tokenIds,
      target_tokens: decoder.tokens,
      target_ids: decoder.tokenIds,
      encoder_attentions: attentionsOf(encoder),
      decoder_attentions: attentionsOf(decoder),
      cross_attentions: attentionsOf(cross),
      hidden_last: Array.from(run.hiddenLast),
      ...(run.logitsLast ? { logits_last: Array.from(run.logitsLast) } : {}),
    };
  }
  const attentions = attentionsOf(run);
  if (run.patchGrid) {
    // A picture's run: the issue's keys, patch_grid in place of token_ids.
    return {
      architecture: run.architecture,
      tokens: run.tokens,
      patch_grid: run.patchGrid,
      attentions,
      hidden_last: Array.from(run.hiddenLast),
      ...(run.logitsLast ? { logits_last: Array.from(run.logitsLast) } : {}),
    };
  }
  const steps = run.generation?.steps;
  return {
    architecture: run.architecture,
    tokens: run.tokens,
    token_ids: run.tokenIds,
    attentions,
    hidden_last: Array.from(run.hiddenLast),
    ...(run.logitsLast ? { logits_last: Array.from(run.logitsLast) } : {}),
    ...(run.routing ? { experts: routingPairs(run.routing, n) } : {}),
    ...(steps ? { generated_ids: steps.map((step) => step.id), generated_tokens: steps.map((step) => step.token) } : {}),
  };
}

/** An encoder–decoder run in brief: the source and target, the next token's top 5, and per cross layer where the last target token looks in the source. */
function encoderDecoderText(run: ModelRun): string {
  const { encoder, decoder, cross } = run.kinds as Required<NonNullable<ModelRun['kinds']>>;
  const t = cross.queryCount;
  const s = cross.keyCount;
  const generated = run.timings.generatedTokens === undefined ? '' : `; generated ${run.timings.generatedTokens} tokens in ${ms(run.timings.generateMs ?? 0)}`;
  const lines = [
    `${run.architecture}: encoder ${encoder.layerCount} layers × ${encoder.headCount} heads, decoder ${decoder.layerCount} × ${decoder.headCount}; ${s} source tokens, ${t} target tokens (${run.backend}; load ${ms(run.timings.loadMs)}, forward ${ms(run.timings.forwardMs)}${generated})`,
    `source: ${encoder.tokens.map((token) => JSON.stringify(token)).join(' ')}`,
    `target: ${decoder.tokens.map((token) => JSON.stringify(token)).join(' ')}`,
  ];
  for (const p of run.predictions) lines.push(`next after ${JSON.stringify(decoder.tokens[p.position])}: ${p.top.map((x) => `${JSON.stringify(x.token)} ${(100 * x.probability).toFixed(1)}%`).join(', ')}`);
  lines.push(`where the last target token ${JSON.stringify(cross.tokens[t - 1])} looks in the source (cross-attention, the source token it weighs most, per head):`);
  for (let l = 0; l < cross.layerCount; l++) {
    const heads = Array.from({ length: cross.headCount }, (_, h) => {
      const row = cross.weights(l, h).subarray((t - 1) * s, t * s);
      let best = 0;
      row.forEach((v, j) => {
        if (v > row[best]) best = j;
      });
      return `H${h} ${JSON.stringify(cross.keyTokens[best])} ${row[best].toFixed(2)}`;
    });
    lines.push(`  L${l}: ${heads.join(' · ')}`);
  }
  return `${lines.join('\n')}\n`;
}

function modelText(run: ModelRun): string {
  if (run.kinds) return encoderDecoderText(run);
  const n = run.queryCount;
  const lines = [
    `${run.architecture}: ${run.layerCount} layers × ${run.headCount} heads, ${n} tokens (${run.backend}; load ${ms(run.timings.loadMs)}, forward ${ms(run.timings.forwardMs)})`,
    `tokens: ${run.tokens.map((t) => JSON.stringify(t)).join(' ')}`,
  ];
  for (const p of run.predictions) {
    const what = p.kind === 'next' ? `next after ${JSON.stringify(run.tokens[p.position])}` : p.kind === 'label' ? 'labels' : `[MASK] at ${p.position + 1}`;
    lines.push(`${what}: ${p.top.map((t) => `${JSON.stringify(t.token)} ${(100 * t.probability).toFixed(1)}%`).join(', ')}`);
  }
  // A picture's class token is where its classifier reads; without one (SigLIP), the last patch as for text.
  const from = run.patchGrid && run.tokens[0] === '[CLS]' ? 0 : n - 1;
  if (run.patchGrid) lines.splice(1, 0, `patch grid: ${run.patchGrid[0]} × ${run.patchGrid[1]}`);
  lines.push(`where ${from === 0 ? 'the class token' : 'the last token'} ${JSON.stringify(run.tokens[from])} looks (the key it weighs most, per head):`);
  for (let l = 0; l < run.layerCount; l++) {
    const heads = Array.from({ length: run.headCount }, (_, h) => {
      const row = run.weights(l, h).subarray(from * n, (from + 1) * n);
      let best = 0;
      row.forEach((v, j) => {
        if (v > row[best]) best = j;
      });
      return `H${h} ${JSON.stringify(run.tokens[best])} ${row[best].toFixed(2)}`;
    });
    lines.push(`  L${l}: ${heads.join(' · ')}`);
  }
  if (run.routing) lines.push(...routingText(run));
  if (run.generation) lines.push(...generationText(run.generation));
  return `${lines.join('\n')}\n`;
}

/** The answer, why it stopped, its time per token, and each step's choice among its candidates. */
function generationText(g: Generation): string[] {
  const why = { eos: "the model's end-of-sequence token", length: 'the number asked for', cancelled: 'cancelled' }[g.stoppedBy];
  const perToken = g.steps.length ? g.steps.reduce((sum, step) => sum + step.ms, 0) / g.steps.length : 0;
  const lines = [`generated ${g.steps.length} token${g.steps.length === 1 ? '' : 's'} after the ${g.promptLength} of the prompt (stopped by ${why}; ${perToken.toFixed(1)} ms per token):`];
  if (g.text !== undefined) lines.push(`  ${JSON.stringify(g.text)}`);
  lines.push(`  ${decodingText(g.decoding)}`);
  for (const step of g.steps) {
    const chosen = step.candidates.top.find((t) => t.id === step.id);
    const among = step.candidates.top.map((t) => `${JSON.stringify(t.token)} ${(100 * t.probability).toFixed(1)}%`).join(', ');
    lines.push(`  ${step.position}: ${JSON.stringify(step.token)}${chosen ? '' : ' (outside the top 5)'} · of ${among}`);
  }
  return lines;
}

/** A mixture of experts in brief: per layer, the last token's experts and weights, and the experts most tokens chose. */
function routingText(run: ModelRun): string[] {
  const routing = run.routing!;
  const n = run.queryCount;
  const lines = [`experts (${routing.topK} of ${routing.experts} per token; the last token's, and the most chosen across the ${n} tokens):`];
  routingPairs(routing, n).forEach((layer, l) => {
    if (layer[0].length === 0) {
      lines.push(`  L${l}: dense MLP`);
      return;
    }
    const counts = new Map<number, number>();
    for (const pairs of layer) for (const [e] of pairs) counts.set(e, (counts.get(e) ?? 0) + 1);
    const most = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 3).map(([e, count]) => `E${e} ×${count}`);
    lines.push(`  L${l}: ${layer[n - 1].map(([e, w]) => `E${e} ${w.toFixed(3)}`).join(', ')} · most chosen ${most.join(', ')}`);
  });
  return lines;
}

function ms(value: number): string {
  return `${Math.round(value)} ms`;
}
