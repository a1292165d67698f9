// An encoder–decoder model folder (T5, BART, Marian, mBART) run on a source and a target: the
// encoder's stack on the source, then the decoder's on the target with its cross-attention's keys
// and values made once from the encoder's output. The target is text (after
// decoder_start_token_id), the decoder's exact input ids, or generated greedily with a cache (each
// new token one decoder row against the cached keys and values), then recorded by one decoder pass
// over the whole target so every head can be drawn and opened. Both stacks are the one forward
// pass (forward.ts) over their layouts. The result is one ModelRun holding its three kinds of
// attention (heads/stack.ts): itself the cross-attention [target × source], and `kinds` the
// encoder's [source × source], the decoder's [target × target] and that cross stack.
import { ChosenLinearBackend } from './chosenBackend';
import { decoderConfigOf, type ModelConfig } from './config';
import { KeyValueCache } from './cache';
import { greedyToken } from './decoding';
import { encoderMemory, type EncoderMemory, type ForwardResult, linearsOf, ModelForward, reserveReads, trimReads } from './forward';
import type { AttentionKind } from '../heads/stack';
import type { ModelInput, TargetInput } from './input';
import { layoutOf, type ModelLayout } from './layout';
import { admit, whileGenerating } from './resident';
import { crossDrillDown, drillDown, LanguageHead, type ModelRun, refuseIfTooBig, type RunModelOptions } from './run';
import { generationSetting } from './generationConfig';
import { generationStart, type LanguageCodes, languageId, targetWithLanguage, withLanguage } from './languages';
import { ModelTokenizer } from './tokenizer';
import { ModelFileError, type ModelFiles, Weights } from './weights';

export async function runEncoderDecoder(files: ModelFiles, config: ModelConfig, input: ModelInput, options: RunModelOptions, started: number, nativeWarmed: Promise<void>): Promise<ModelRun> {
  if ('image' in input) throw new ModelFileError(`${files.folder} is a text model (${config.modelType}): give it text or token ids, not a picture`);
  const spec = config.encoderDecoder!;
  const target: TargetInput | undefined = input.target;
  if (!target) throw new ModelFileError(`${files.folder} is an encoder–decoder model (${config.modelType}): give a target too (--target TEXT, --target-ids 1,2,3 or --generate N)`);
  const weights = await Weights.open(files);
  const tokenizer = await ModelTokenizer.open(files);
  const spm = tokenizer ? [] : await sentencePieceFiles(files);
  const noTokenizer = (what: string) =>
    new ModelFileError(`${files.folder} has no tokenizer.json${spm.length ? ` (only SentencePiece's ${spm.join(' and ')}, which this extension does not read)` : ''}: give the ${what} as token ids instead`);
  const languages = chosenLanguages(files.folder, input, target, tokenizer);
  let sourceIds: number[];
  if ('text' in input) {
    if (!tokenizer) throw noTokenizer('source (--ids 1,2,3)');
    // A source language places its code as the tokenizer does; without one, as tokenizer.json was saved (its src_lang).
    const text = tokenizer.encode(input.text, { addSpecialTokens: languages.source === undefined }).ids;
    sourceIds = languages.source === undefined ? text : withLanguage(languages.codes!, text, languages.source, endOf(config));
    if (text.length === 0) throw new RangeError('the source text gives no tokens');
  } else {
    sourceIds = input.ids;
    if (sourceIds.length === 0) throw new RangeError('no source token ids given');
  }
  if (sourceIds.length > config.maxPositions) throw new RangeError(`the source has ${sourceIds.length} tokens but ${config.modelType} has ${config.maxPositions} positions`);
  const decoderConfig = decoderConfigOf(config);
  let targetIds: number[] | undefined;
  if ('text' in target) {
    if (!tokenizer) throw noTokenizer('target (--target-ids 1,2,3)');
    targetIds =
      languages.target === undefined
        ? [spec.decoderStartId, ...tokenizer.encode(target.text).ids]
        : targetWithLanguage(languages.codes!, tokenizer.encode(target.text, { addSpecialTokens: false }).ids, languages.target, endOf(config), spec.decoderStartId);
  } else if ('ids' in target) {
    if (target.ids.length === 0) throw new RangeError('no target token ids given');
    targetIds = target.ids;
  } else if (!(Number.isInteger(target.generate) && target.generate > 0)) throw new RangeError(`generate needs a positive whole number of tokens, not ${target.generate}`);
  // Generation in a target language starts as the tokenizer's convention says; else at
  // decoder_start_token_id, with the folder's forced_bos_token_id (BART's summarisers force <s>).
  const { start, forced } = languages.target === undefined ? { start: spec.decoderStartId, forced: await forcedFirstToken(files, decoderConfig.vocab) } : generationStart(languages.codes!, languages.target, spec.decoderStartId);
  for (const id of targetIds ?? []) if (!(Number.isInteger(id) && id >= 0 && id < decoderConfig.vocab)) throw new RangeError(`target token id ${id} is outside the vocabulary (0…${decoderConfig.vocab - 1})`);
  const generateAtMost = 'generate' in target ? target.generate : 0;
  if (targetIds && targetIds.length > decoderConfig.maxPositions) throw new RangeError(`the target has ${targetIds.length} tokens but ${config.modelType} has ${decoderConfig.maxPositions} positions`);
  if (generateAtMost + 1 > decoderConfig.maxPositions) throw new RangeError(`generating ${generateAtMost} tokens needs ${generateAtMost + 1} positions but ${config.modelType} has ${decoderConfig.maxPositions}`);

  const layout = layoutOf(config);
  const decoderLayout = layout.decoder!;
  for (const [stack, side] of [[layout, 'encoder'], [decoderLayout, 'decoder']] as const) {
    const table = stack.relativeBias?.table;
    if (table && !weights.has(table)) throw new ModelFileError(`the checkpoint has no relative attention bias table ${table} (layer 0 of the ${side} holds the one its every layer adds to its scores)`);
  }
  const backend = options.backend ?? new ChosenLinearBackend();
  const constants = new Set([...layout.layers, ...decoderLayout.layers].flatMap((L) => [...linearsOf(L), ...(L.cross ? [L.cross.q, L.cross.k, L.cross.v, L.cross.out] : [])].map((P) => `${P.name}.weight`)));
  const resident = admit(weights.key, files.folder, weights.residentPlan(constants), backend.name === 'onnxruntime', options.residentBudgetBytes);
  weights.residentIn(resident);
  const longest = Math.max(sourceIds.length, targetIds?.length ?? generateAtMost + 1);
  refuseIfTooBig(config, [...layout.layers, ...decoderLayout.layers], weights, longest, options.memoryLimitBytes, resident ? Math.max(0, resident.plannedBytes - resident.bytes) : 0);
  const encoder = new ModelForward(config, layout, weights, backend);
  const decoder = new ModelForward(decoderConfig, decoderLayout, weights, backend);
  await Promise.all([reserveReads(largerStack(layout, decoderLayout), weights), nativeWarmed]);
  const loadMs = performance.now() - started;
  const head = new LanguageHead(decoder, tokenizer);
  try {
    const encoded = await encoder.run(sourceIds, options);
    const memory = encoderMemory(encoded.hidden, sourceIds.length);
    const generateStarted = performance.now();
    targetIds ??= await generate(decoder, head, memory, { start, forced }, spec.eosId, spec.forbidden, generateAtMost, options);
    const generateMs = 'generate' in target ? performance.now() - generateStarted : undefined;
    const decoded = await decoder.run(targetIds, options, undefined, memory);
    const t = targetIds.length;
    const hiddenLast = decoded.hidden.slice((t - 1) * config.hidden);
    const logitsLast = await head.logits(hiddenLast, 1);
    const predictions = await head.predictions(targetIds, decoded, logitsLast);
    const forwardMs = performance.now() - started - loadMs;
    const label = (id: number) => tokenizer?.label(id) ?? `#${id}`;
    const sourceTokens = sourceIds.map(label);
    const targetTokens = targetIds.map(label);
    const ids = targetIds;
    const shared = {
      source: { kind: 'model' as const, architecture: config.modelType, folder: files.folder },
      architecture: config.modelType,
      hiddenLast,
      ...(logitsLast ? { logitsLast } : {}),
      predictions,
      warnings: [] as string[],
      backend: backend.name,
      resident: resident?.mode ?? ('streamed' as const),
      timings: { loadMs, forwardMs, ...(generateMs !== undefined ? { generateMs, generatedTokens: t - 1 } : {}) },
    };
    const noPrediction = async () => undefined;
    const predictAt = (position: number) => head.predictAt(ids, decoded, position);
    const encoderStack: ModelRun = {
      ...shared,
      kind: 'encoder',
      tokens: sourceTokens,
      keyTokens: sourceTokens,
      tokenIds: sourceIds,
      layerCount: config.layers,
      headCount: config.heads,
      queryCount: sourceIds.length,
      keyCount: sourceIds.length,
      lowerTriangular: false,
      weights: (layer, h) => encoder.headWeights(layer, h, encoded.layers[layer], sourceIds.length),
      headGroups: (layer, use) => encoder.eachHeadGroup(layer, encoded.layers[layer], sourceIds.length, use),
      pooled: (layer, h, mode, rowBlock, colBlock) => encoded.layers[layer].pools.get(h, mode, rowBlock, colBlock),
      drillDownSpec: (layer, h) => drillDown(encoder, encoded, layer, h, sourceTokens),
      predictAt: noPrediction,
    };
    const decoderStack: ModelRun = {
      ...shared,
      kind: 'decoder',
      tokens: targetTokens,
      keyTokens: targetTokens,
      tokenIds: ids,
      layerCount: decoderConfig.layers,
      headCount: decoderConfig.heads,
      queryCount: t,
      keyCount: t,
      lowerTriangular: true,
      weights: (layer, h) => decoder.headWeights(layer, h, decoded.layers[layer], t),
      headGroups: (layer, use) => decoder.eachHeadGroup(layer, decoded.layers[layer], t, use),
      pooled: (layer, h, mode, rowBlock, colBlock) => decoded.layers[layer].pools.get(h, mode, rowBlock, colBlock),
      drillDownSpec: (layer, h) => drillDown(decoder, decoded, layer, h, targetTokens),
      predictAt,
    };
    const crossStack: ModelRun = {
      ...shared,
      kind: 'cross',
      tokens: targetTokens,
      keyTokens: sourceTokens,
      tokenIds: ids,
      layerCount: decoderConfig.layers,
      headCount: decoderConfig.heads,
      queryCount: t,
      keyCount: sourceIds.length,
      lowerTriangular: false,
      weights: (layer, h) => decoder.headWeights(layer, h, crossRecord(decoded, layer), t, 'cross'),
      headGroups: (layer, use) => decoder.eachHeadGroup(layer, crossRecord(decoded, layer), t, use, 'cross'),
      pooled: (layer, h, mode, rowBlock, colBlock) => crossRecord(decoded, layer).pools.get(h, mode, rowBlock, colBlock),
      drillDownSpec: (layer, h) => crossDrillDown(decoder, decoded, memory, layer, h, targetTokens, sourceTokens),
      predictAt,
    };
    const kinds: { [K in AttentionKind]: ModelRun } = { encoder: encoderStack, decoder: decoderStack, cross: crossStack };
    for (const stack of Object.values(kinds)) stack.kinds = kinds;
    return crossStack;
  } finally {
    if (!options.backend) backend.dispose();
    void trimReads();
  }
}

/** The SentencePiece model files a folder has (Marian's source.spm / target.spm, T5's spiece.model) in place of a tokenizer.json. */
async function sentencePieceFiles(files: ModelFiles): Promise<string[]> {
  const names = ['source.spm', 'target.spm', 'spiece.model', 'sentencepiece.bpe.model'];
  const present = await Promise.all(names.map(async (name) => ((await files.size(name)) === undefined ? undefined : name)));
  return present.filter((name): name is string => name !== undefined);
}

function crossRecord(result: ForwardResult, layer: number) {
  const record = result.layers[layer]?.cross;
  if (!record) throw new RangeError(`no decoder layer ${layer}`);
  return record;
}

/** The stack whose layers read the most: the one to size the read memory for. */
function largerStack(a: ModelLayout, b: ModelLayout): ModelLayout {
  const size = (L: ModelLayout) => L.layers.reduce((sum, layer) => sum + linearsOf(layer).reduce((s, P) => s + P.in * P.out, 0), 0) / Math.max(1, L.layers.length);
  return size(a) >= size(b) ? a : b;
}

/** The languages asked for, as their codes' ids, with the tokenizer's codes; a target text in a
 * tokenizer with codes takes its saved tgt_lang unless one is asked for. One line for each mistake. */
function chosenLanguages(folder: string, input: Exclude<ModelInput, { image: unknown }>, target: TargetInput, tokenizer: ModelTokenizer | undefined): { codes?: LanguageCodes; source?: number; target?: number } {
  const asked = input.languages ?? {};
  const codes = tokenizer?.languages;
  if (!codes) {
    if (asked.source !== undefined || asked.target !== undefined) throw new RangeError(`${folder} has no language codes in its tokenizer (mBART's and mBART-50's have them, e.g. en_XX): leave out the source and target languages`);
    return {};
  }
  if (asked.source !== undefined && !('text' in input)) throw new RangeError('a source language places its code around a source text; source ids are read as given (write the code\'s id among them)');
  if (asked.target !== undefined && 'ids' in target) throw new RangeError('a target language places its code in a target text or starts a generation; target ids are the decoder\'s input as given');
  const targetLanguage = asked.target ?? ('text' in target ? codes.defaultTarget : undefined);
  if ('text' in target && targetLanguage === undefined) throw new RangeError(`the target text needs its language (its code starts the decoder's labels): choose one of ${codes.codes.map(({ code }) => code).join(', ')}`);
  return {
    codes,
    ...(asked.source !== undefined ? { source: languageId(codes, asked.source, 'source') } : {}),
    ...(targetLanguage !== undefined ? { target: languageId(codes, targetLanguage, 'target') } : {}),
  };
}

/** The end-of-sequence id a language's code sits beside (mBART's </s>). */
function endOf(config: ModelConfig): number {
  const eos = config.encoderDecoder?.eosId;
  if (eos === undefined) throw new ModelFileError('config.json has no eos_token_id to end a text in a language with');
  return eos;
}

/** forced_bos_token_id (generation_config.json, else config.json) when it is an id of the vocabulary. */
async function forcedFirstToken(files: ModelFiles, vocab: number): Promise<number | undefined> {
  const id = await generationSetting(files, 'forced_bos_token_id');
  return typeof id === 'number' && Number.isInteger(id) && id >= 0 && id < vocab ? id : undefined;
}

/**
 * Greedy decoding from decoder_start_token_id with the causal models' key/value cache (cache.ts,
 * the forward's step): each step runs the one new token through the decoder against the cached
 * self-attention keys and values and the encoder output's cross keys and values (made once),
 * until EOS or `atMost` tokens; the choice is decoding.ts's (a tie to the lowest id), `forbidden`
 * ids never, and the first token `forced` when there is one (a target language's code, forced_bos_token_id). Returns the decoder's input ids: the start token and every token generated (EOS
 * included when reached).
 */
async function generate(decoder: ModelForward, head: LanguageHead, memory: EncoderMemory, { start, forced }: { start: number; forced?: number }, eos: number | undefined, forbidden: number[], atMost: number, options: RunModelOptions): Promise<number[]> {
  const ids = [start];
  const c = decoder.config;
  const cache = new KeyValueCache(c.layers, c.kvHeads * c.headDim, atMost + 1);
  return whileGenerating(decoder.weights.residentModel, async () => {
    while (ids.length <= atMost) {
      const step = await decoder.step(ids[ids.length - 1], cache, options, memory);
      const logits = await head.logits(step.hidden, 1);
      if (!logits) throw new ModelFileError(`the checkpoint has no LM head (${decoder.layout.head.join(' or ')}) to generate with`);
      for (const id of forbidden) logits[id] = -Infinity;
      // transformers' ForcedBOSTokenLogitsProcessor: the first token generated is the forced one.
      const next = ids.length === 1 && forced !== undefined ? forced : greedyToken(logits);
      ids.push(next);
      if (next === eos) break;
    }
    return ids;
  });
}
