// A model folder run on a text (or token ids): the tokens, every layer's attention (recomputed per
// head on demand), the final hidden state, the LM head's logits and predictions, and for any head
// the step-by-step problem the panel opens. The result is an AttentionStack like saved attentions
// and multi-head problems, so the model view and head scores work over it unchanged.
import { warmThreads } from '../engine/fast/pool';
import { columns } from '../engine/kernels';
import type { AttentionKind, AttentionStack } from '../heads/stack';
import type { Generation, ModelInput, Prediction } from './input';
import type { AttentionSpec } from '../types';
import type { LinearBackend } from './backend';
import { warmNativeLinear } from '../engine/native/linear';
import { backendChoice, nativeRuntime } from '../engine/native/runtime';
import { greyPng } from '../image/decode';
import { ChosenLinearBackend } from './chosenBackend';
import { type ModelConfig, outputWidth, parseModelConfig, type RopeFrequencies } from './config';
import { attentionGroup, type EncoderMemory, type ForwardControl, type ForwardResult, headBias, linearsOf, matrix, ModelForward, reserveReads, trimReads } from './forward';
import { checkExpertTensors, expertLinears, expertsInFlightBytes } from './experts';
import { layoutOf, type LayerLayout, type LinearLayout } from './layout';
import { softcapInPlace } from './ops';
import { ModelTokenizer } from './tokenizer';
import { probabilitiesOf, topIds } from './decoding';
import { ModelFileError, type ModelFiles, readText, Weights } from './weights';
import { runVision } from './visionRun';
import { runEncoderDecoder } from './seq2seqRun';
import { admit, residentBudget, type ResidentMode } from './resident';

export interface RunModelOptions extends ForwardControl {
  /** The products' backend (disposed by the caller who gave it); default: ONNX Runtime where it loads, else the WebAssembly kernels. */
  backend?: LinearBackend;
  /** Refuse up front a run that would need more bytes than this (default: no limit). */
  memoryLimitBytes?: number;
  /**
   * Bytes the thread's resident models may hold together (resident.ts; default residentBudget():
   * ATTENTION_LENS_RESIDENT_GB, else 60% of the machine's memory); 0 keeps nothing between runs.
   */
  residentBudgetBytes?: number;
}

export interface ModelRun extends AttentionStack {
  architecture: string;
  tokenIds: number[];
  /** The final hidden state at the last position, after the final norm. */
  hiddenLast: Float32Array;
  /** The LM head's logits at the last position, when the checkpoint has a head (or tied embeddings). */
  logitsLast?: Float32Array;
  /** Causal LMs: the top 5 next tokens at the last position; BERT: the top 5 fillers of each [MASK]. */
  predictions: Prediction[];
  /** A generated run's decoding (generate.ts): the prompt's length, each step, why it stopped. */
  generation?: Generation;
  /** Things the user should know (the text was cut at the model's positions…). */
  warnings: string[];
  backend: string;
  /** How the weights stay between runs: as the backend's pre-packed constants, as stored, or not at all (read as the run goes). */
  resident?: ResidentMode;
  /** An encoder–decoder run's generated target: the greedy loop's time (with its cache) and the tokens it made. */
  timings: { loadMs: number; forwardMs: number; generateMs?: number; generatedTokens?: number };
  /** A picture's run: the patch grid [rows, cols] (the tokens are any prefix tokens, then the patches row-major). */
  patchGrid?: [number, number];
  /** A picture's run: the 8-bit RGB picture the model saw, after resizing and cropping. */
  picture?: { width: number; height: number; rgb: Uint8Array; patchSize: number };
  /** The step-by-step problem of one head (0-based layer and head). */
  drillDownSpec(layer: number, head: number): Promise<AttentionSpec>;
  /**
   * What the model predicts at `position`, computed on demand (one row of the LM head, vocab ×
   * hidden, a few recent answers kept): causal LMs the top 5 next tokens, BERT the top 5 fillers
   * of a [MASK]. Undefined without an LM head, or at a BERT position that is not a [MASK].
   */
  predictAt(position: number): Promise<Prediction | undefined>;
  /**
   * An encoder–decoder run's three kinds, each a ModelRun of its own (its heads' weights and
   * step-by-step problems); the run itself is its `cross` stack (target × source: the alignment).
   * Absent for a model with one kind of attention.
   */
  kinds?: { [K in AttentionKind]?: ModelRun };
}

const TOP = 5;
/** Positions whose predictions a run keeps: a hover going back and forth asks the same few again. */
const KEPT_PREDICTIONS = 8;
/**
 * Float32 bytes of the LM head read and multiplied at a time: less than a real model's largest
 * layer weight (GPT-2-small's MLP: 9.4 MB), so the chunks fit the read buffer the layers already
 * grew. Chunks of 8192 rows (25 MB for GPT-2) grew it into fresh pages at every run: ~100 ms of
 * page faults in a 128-token forward of ~700 ms.
 */
const VOCAB_CHUNK_BYTES = 4 * 2 ** 20;
/** Float32 bytes of a resident model's LM head per constant: ONNX Runtime makes each one's session in ~50–100 ms here. */
const RESIDENT_HEAD_CHUNK_BYTES = 32 * 2 ** 20;

/** Vocabulary rows per LM head chunk of a model `hidden` wide. */
function vocabChunk(hidden: number): number {
  return Math.max(1, Math.floor(VOCAB_CHUNK_BYTES / (4 * hidden)));
}

/**
 * What a folder's first run would otherwise do before its forward, done ahead (the extension does
 * it once a note names the folder): the tokenizer built and kept (0.35–0.6 s for GPT-2's), ONNX
 * Runtime loaded and its environment started (~120 ms), the compute threads started. Resolves to
 * the tokenizer, undefined without one.
 */
export async function prepareModel(files: ModelFiles): Promise<ModelTokenizer | undefined> {
  warmThreads();
  const [tokenizer] = await Promise.all([ModelTokenizer.open(files), warmNativeLinear(), reserveReadsOf(files)]);
  await warmUp(files);
  return tokenizer;
}

/**
 * A folder whose weights will stay resident as ONNX Runtime's constants gets them ready ahead: one
 * short run (a token; for a vision model a grey picture) feeds every product once, and the idle
 * time after it makes their sessions, so that the first click finds them packed. Nothing for a
 * model that might not stay (it would be read whole for nothing) or on the WebAssembly kernels.
 */
async function warmUp(files: ModelFiles): Promise<void> {
  try {
    if (backendChoice() === 'wasm' || !nativeRuntime().ok) return;
    const config = await readConfig(files);
    const weights = await Weights.open(files);
    // Every tensor in float32 bounds what any run of it keeps.
    if (weights.residentPlan(weights.names).constantBytes > residentBudget()) return;
    const input: ModelInput = config.family === 'vision' ? { image: { name: 'grey.png', bytes: greyPng() } } : config.encoderDecoder ? { ids: [0], target: { ids: [0] } } : { ids: [0] };
    await runModel(files, input);
  } catch {
    // the run's to report
  }
}

/** The read memory of the folder's largest use, paged in (nothing when the folder cannot be read: its run says why). */
async function reserveReadsOf(files: ModelFiles): Promise<void> {
  try {
    const configText = await readText(files, 'config.json');
    if (configText !== undefined) await reserveReads(layoutOf(parseModelConfig(configText)), await Weights.open(files));
  } catch {
    // the run's to report
  }
}

export async function runModel(files: ModelFiles, input: ModelInput, options: RunModelOptions = {}): Promise<ModelRun> {
  const started = performance.now();
  warmThreads(); // the layers' attention runs on them
  // ONNX Runtime's environment (~120 ms on a process's first session) starts while the folder is
  // read and its tokenizer built, as a prepared folder's did ahead.
  const nativeWarmed = options.backend ? Promise.resolve() : warmNativeLinear();
  const config = await readConfig(files);
  if ('image' in input) return runVision(files, config, input.image, options, started, nativeWarmed);
  if (config.encoderDecoder) return runEncoderDecoder(files, config, input, options, started, nativeWarmed);
  if (input.target) throw new ModelFileError(`${files.folder} is ${config.causal ? 'a decoder-only' : 'an encoder-only'} model (${config.modelType}): it has no decoder to take a target; give only the text or token ids`);
  const model = await openTextModel(files, config, input, options, nativeWarmed);
  const loadMs = performance.now() - started;
  return finishRun(model, model.ids, await model.forward.run(model.ids, options), loadMs, started + loadMs);
}

/** A folder's config.json, parsed. */
export async function readConfig(files: ModelFiles): Promise<ModelConfig> {
  const configText = await readText(files, 'config.json');
  if (configText === undefined) throw new ModelFileError(`${files.folder} has no config.json: not a Hugging Face model folder`);
  return parseModelConfig(configText);
}

/** A text model opened for its runs: its forward on the run's backend, its tokenizer and LM head, and the input's ids. */
export interface TextModel {
  files: ModelFiles;
  config: ModelConfig;
  forward: ModelForward;
  tokenizer: ModelTokenizer | undefined;
  head: LanguageHead;
  /** The input's token ids (cut to the model's positions when too many, with a warning). */
  ids: number[];
  warnings: string[];
  resident: ReturnType<typeof admit>;
  /** Disposes the backend the run made (not one the caller gave). */
  dispose(): void;
}

/**
 * Everything before the forward: the weights and tokenizer opened, the input tokenized, the
 * weights admitted resident, the memory refused up front. `length` is the longest sequence the
 * runs will see (a generation's prompt + new tokens; default: the input's).
 */
export async function openTextModel(files: ModelFiles, config: ModelConfig, input: Exclude<ModelInput, { image: unknown }>, options: RunModelOptions, nativeWarmed: Promise<void>, length?: (ids: number[]) => number): Promise<TextModel> {
  if (config.family === 'vision') throw new ModelFileError(`${files.folder} is a vision model (${config.modelType}): give it a picture (--image FILE), not text or token ids`);
  if (input.languages) throw new ModelFileError(`${files.folder} is not an encoder–decoder model (${config.modelType}): source and target languages are a translation model's (mBART); leave them out`);
  const weights = await Weights.open(files);
  const tokenizer = await ModelTokenizer.open(files);
  const warnings: string[] = [];
  let ids: number[];
  if ('text' in input) {
    if (!tokenizer) throw new ModelFileError(`${files.folder} has no tokenizer.json: give token ids instead (--ids 1,2,3)`);
    ids = tokenizer.encode(input.text).ids;
    if (ids.length === 0) throw new RangeError('the text gives no tokens');
  } else {
    ids = input.ids;
    if (ids.length === 0) throw new RangeError('no token ids given');
  }
  if (!length && ids.length > config.maxPositions) {
    warnings.push(`the input has ${ids.length} tokens but the model has ${config.maxPositions} positions: cut to the first ${config.maxPositions}`);
    ids = ids.slice(0, config.maxPositions);
  }
  const layout = layoutOf(config);
  checkExpertTensors(layout.layers, weights);
  const backend = options.backend ?? new ChosenLinearBackend();
  // Resident between runs when the budget allows: ONNX Runtime keeping every product's weight
  // pre-packed (float32), else the stored bytes; the least recently used model is let go for it.
  const constants = new Set([...layout.layers.flatMap((L) => [...linearsOf(L), ...expertLinears(L)].map((P) => `${P.name}.weight`)), ...(headAsConstant(layout, weights) ? [headAsConstant(layout, weights) as string] : [])]);
  const resident = admit(weights.key, files.folder, weights.residentPlan(constants), backend.name === 'onnxruntime', options.residentBudgetBytes);
  weights.residentIn(resident);
  refuseIfTooBig(config, layout.layers, weights, length?.(ids) ?? ids.length, options.memoryLimitBytes, resident ? Math.max(0, resident.plannedBytes - resident.bytes) : 0);
  const forward = new ModelForward(config, layout, weights, backend);
  // The read memory made its full size at once where no preparation did (the command line): a bf16
  // MLP's three weights and their widened values grew it three times in the first layer, ~20,000
  // pages more.
  await Promise.all([reserveReads(layout, weights), nativeWarmed]);
  // The kernels' memory of the largest product goes; later drill-downs and predictions take fresh memory.
  const dispose = () => (options.backend ? undefined : backend.dispose());
  return { files, config, forward, tokenizer, head: new LanguageHead(forward, tokenizer), ids, warnings, resident, dispose };
}

/** The ModelRun of a whole forward `result` over `ids`, its forward time counted from `forwardStarted` (performance.now()). */
export async function finishRun(model: TextModel, ids: number[], result: ForwardResult, loadMs: number, forwardStarted: number): Promise<ModelRun> {
  const { config, forward, tokenizer, head, files } = model;
  const n = ids.length;
  const hiddenLast = result.hidden.slice((n - 1) * outputWidth(config));
  const logitsLast = await head.logits(hiddenLast, 1);
  const predictions = await head.predictions(ids, result, logitsLast);
  model.dispose();
  void trimReads();
  const forwardMs = performance.now() - forwardStarted;
  const tokens = ids.map((id) => tokenizer?.label(id) ?? `#${id}`);
  return {
    source: { kind: 'model', architecture: config.modelType, folder: files.folder },
    architecture: config.modelType,
    tokens,
    keyTokens: tokens,
    tokenIds: ids,
    layerCount: config.layers,
    headCount: config.heads,
    queryCount: n,
    keyCount: n,
    lowerTriangular: config.causal,
    hiddenLast,
    ...(logitsLast ? { logitsLast } : {}),
    predictions,
    warnings: model.warnings,
    backend: forward.backend.name,
    resident: model.resident?.mode ?? 'streamed',
    timings: { loadMs, forwardMs },
    weights: (layer, h) => forward.headWeights(layer, h, result.layers[layer], n),
    row: (layer, h, query) => forward.headRow(layer, h, result.layers[layer], n, query) ?? forward.headWeights(layer, h, result.layers[layer], n).subarray(query * n, (query + 1) * n),
    headGroups: (layer, use) => forward.eachHeadGroup(layer, result.layers[layer], n, use),
    pooled: (layer, h, mode, rowBlock, colBlock) => result.layers[layer].pools.get(h, mode, rowBlock, colBlock),
    drillDownSpec: (layer, h) => drillDown(forward, result, layer, h, tokens),
    predictAt: (position) => head.predictAt(ids, result, position),
    ...(config.moe ? { routing: { experts: config.moe.experts, topK: config.moe.topK, layers: result.layers.map((layer) => layer.routing) } } : {}),
  };
}

/** The LM head's tensor when it can be a resident constant of one product (`….weight`, no MLM transform), else undefined. */
function headAsConstant(layout: ReturnType<typeof layoutOf>, weights: Weights): string | undefined {
  const name = layout.mlmTransform ? undefined : weights.first(...layout.head);
  return name?.endsWith('.weight') ? name : undefined;
}

/** The LM head (tied or not; BERT's MLM transform first; Gemma 2's final softcap after; an encoder–decoder model's on its decoder). */
export class LanguageHead {
  private readonly name: string | undefined;
  /** Recent predictAt answers by position, oldest first. */
  private readonly kept = new Map<number, Promise<Prediction | undefined>>();

  constructor(
    private readonly forward: ModelForward,
    private readonly tokenizer: ModelTokenizer | undefined,
  ) {
    const { layout, weights } = forward;
    const complete = !layout.mlmTransform || weights.has(`${layout.mlmTransform.dense.name}.weight`);
    this.name = complete ? weights.first(...layout.head) : undefined;
  }

  /** Whether the checkpoint has an LM head (or tied embeddings) to give logits. */
  get present(): boolean {
    return this.name !== undefined;
  }

  /** Logits [rows × vocab] of hidden states [rows × hidden], or undefined without a head. */
  async logits(hidden: Float32Array, rows: number): Promise<Float32Array | undefined> {
    if (!this.name) return undefined;
    const { config: c, layout, weights } = this.forward;
    let x = hidden;
    let bias: Float32Array | undefined;
    if (layout.mlmTransform) {
      x = await this.forward.norm(await this.forward.linear(x, rows, layout.mlmTransform.dense, c.headActivation ?? c.activation), layout.mlmTransform.norm);
      bias = await weights.get(layout.mlmTransform.bias, [c.vocab]);
    }
    // BART's final_logits_bias is a [1 × vocab] buffer.
    if (layout.headBias) bias = await weights.get(layout.headBias, c.encoderDecoder?.finalLogitsBias ? [1, c.vocab] : [c.vocab]);
    const inputScale = c.encoderDecoder?.headInputScale;
    if (inputScale !== undefined) {
      const scale = Math.fround(inputScale); // T5 multiplies in the model's dtype
      x = x.map((v) => v * scale);
    }
    const width = outputWidth(c);
    // A resident model's head is products on its constant chunks, each a session of its own (made
    // while idle, one at a time: Qwen2.5's 151936 × 896 head as one took 1.3 s, and the worker
    // answers nothing while ONNX Runtime makes a session). Others read it chunk by chunk.
    const constant = weights.residentModel?.mode === 'constants' && headAsConstant(layout, weights) === this.name;
    const chunk = constant ? Math.max(1, Math.floor(RESIDENT_HEAD_CHUNK_BYTES / (4 * width))) : vocabChunk(width);
    const out = new Float32Array(rows * c.vocab);
    for (let v0 = 0; v0 < c.vocab; v0 += chunk) {
      const count = Math.min(chunk, c.vocab - v0);
      const part = await this.forward.timesRows(x, rows, this.name, [c.vocab, width], v0, count, bias?.subarray(v0, v0 + count), constant);
      for (let r = 0; r < rows; r++) out.set(part.subarray(r * count, (r + 1) * count), r * c.vocab + v0);
    }
    if (c.logitScale !== undefined && c.logitScale !== 1) for (let i = 0; i < out.length; i++) out[i] *= c.logitScale;
    return c.finalSoftcap === undefined ? out : softcapInPlace(out, c.finalSoftcap);
  }

  async predictions(ids: readonly number[], result: ForwardResult, logitsLast: Float32Array | undefined): Promise<Prediction[]> {
    if (!logitsLast) return [];
    if (this.forward.config.causal) {
      const next = this.top(ids.length - 1, logitsLast, 'next');
      // Kept as predictAt's answer there: the same numbers as the run shows, not a product run again (which may round otherwise once its weights are packed).
      this.kept.set(ids.length - 1, Promise.resolve(next));
      return [next];
    }
    const out: Prediction[] = [];
    for (const p of this.maskPositions(ids)) out.push(this.top(p, await this.logitsAt(result, p), 'mask'));
    return out;
  }

  /** The prediction at `position` (see ModelRun.predictAt), from the kept ones when recent. */
  predictAt(ids: readonly number[], result: ForwardResult, position: number): Promise<Prediction | undefined> {
    if (!(Number.isInteger(position) && position >= 0 && position < ids.length)) return Promise.reject(new RangeError(`no position ${position}: the run has ${ids.length} tokens`));
    const kept = this.kept.get(position);
    this.kept.delete(position);
    const answer = kept ?? this.compute(ids, result, position);
    this.kept.set(position, answer);
    // A failure is not kept: the next ask tries again.
    answer.catch(() => this.kept.get(position) === answer && this.kept.delete(position));
    for (const old of this.kept.keys()) {
      if (this.kept.size <= KEPT_PREDICTIONS) break;
      this.kept.delete(old);
    }
    return answer;
  }

  private async compute(ids: readonly number[], result: ForwardResult, position: number): Promise<Prediction | undefined> {
    if (!this.name) return undefined;
    if (this.forward.config.causal) return this.top(position, await this.logitsAt(result, position), 'next');
    return this.maskPositions(ids).includes(position) ? this.top(position, await this.logitsAt(result, position), 'mask') : undefined;
  }

  private maskPositions(ids: readonly number[]): number[] {
    const mask = this.tokenizer?.idOf('[MASK]') ?? this.tokenizer?.idOf('<mask>');
    return mask === undefined ? [] : ids.flatMap((id, i) => (id === mask ? [i] : []));
  }

  private async logitsAt(result: ForwardResult, position: number): Promise<Float32Array> {
    const width = outputWidth(this.forward.config);
    return (await this.logits(result.hidden.slice(position * width, (position + 1) * width), 1)) as Float32Array;
  }

  /** The 5 most probable tokens of `logits` (a tie to the lowest id) and their softmax probabilities. */
  top(position: number, logits: Float32Array, kind: Prediction['kind']): Prediction {
    const ids = topIds(logits, TOP);
    const probabilities = probabilitiesOf(logits, ids);
    return { position, kind, top: ids.map((id, i) => ({ id, token: this.tokenizer?.label(id) ?? `#${id}`, probability: probabilities[i] })) };
  }
}

/**
 * One head as a step-by-step problem: the layer's normed input as X and the head's columns of the
 * checkpoint's W_Q, W_K, W_V (biases as an extra row, on a column of ones added to X: exact), with
 * the model's scale, causal mask, window, softcap and RoPE as options. Where Q and K are not a
 * product of X (Qwen3's q/k norms) or RoPE is scaled (which the options cannot say), Q, K and V
 * are given as the model computes them.
 */
export async function drillDown(forward: ModelForward, result: ForwardResult, layer: number, head: number, tokens: string[]): Promise<AttentionSpec> {
  const c = forward.config;
  if (!(layer >= 0 && layer < c.layers && head >= 0 && head < c.heads)) throw new RangeError(`no layer ${layer}, head ${head}: the model has layers 0–${c.layers - 1} of heads 0–${c.heads - 1}`);
  const L: LayerLayout = forward.layerLayout(layer);
  const n = tokens.length;
  const d = c.headDim;
  const kvHead = Math.floor(head / (c.heads / c.kvHeads));
  const rope = c.attention[layer].rope;
  // Counted from 0, as PyTorch indexes `outputs.attentions[layer][0, head]` and the heads page names them.
  const title = `${c.modelType} L${layer} H${head}${c.kvHeads < c.heads ? ` (KV head ${kvHead})` : ''}`;
  const input = result.layers[layer].input;
  const direct = L.qNorm !== undefined || (rope !== undefined && !rope.plain) || c.clipQkv !== undefined;
  if (direct) {
    // Before RoPE when the options can say it (plain frequencies), else as scored.
    const qkv = await forward.queriesKeysValues(layer, input, n, rope !== undefined && !rope.plain);
    const part = (data: Float32Array, heads: number, index: number) => columns(matrix(n, heads * d, data), index * d, d);
    // The steps in the model's order: OLMo clips before its (absent) q/k norms, OLMoE after them.
    const clip = c.clipQkv !== undefined ? [`Q, K and V clipped to ±${c.clipQkv}`] : [];
    const norms = L.qNorm ? ['the q/k norms'] : [];
    const turned = rope && !rope.plain ? [`the model's ${ropeWords(rope)}`] : [];
    const qk = (what: string[]) => (what.length ? [`Q and K after ${what.join(' and ')}`] : []);
    const how = (c.clipAfterQkNorms ? [...qk(norms), ...clip, ...qk(turned)] : [...clip, ...qk([...norms, ...turned])]).join(', then ');
    return {
      Q: part(qkv.Q, c.heads, head),
      K: part(qkv.K, c.kvHeads, kvHead),
      V: part(qkv.V, c.kvHeads, kvHead),
      options: { ...forward.attentionOptions(layer, 1, 1), ...(rope?.plain ? ropeOptions(rope) : {}), name: `${title}: ${how}, as the model computes them` },
      tokens,
    };
  }
  const qWidth = c.heads * d;
  const kvWidth = c.kvHeads * d;
  // Where the head's columns start in each projection's output (GPT-2's c_attn holds q | k | v),
  // each projection read once: the fused one serves all three.
  const qkv = L.qkv;
  const [WQ, WK, WV] =
    'fused' in qkv
      ? await forward.withLinearWeights(qkv.fused, async (weights) => {
          await weights.constant?.load?.(); // held pre-packed by ONNX Runtime: read again from the file
          return [head * d, qWidth + kvHead * d, qWidth + kvWidth + kvHead * d].map((start) => headColumns(qkv.fused, weights, start, d));
        })
      : await Promise.all(
          ([[qkv.q, head * d], [qkv.k, kvHead * d], [qkv.v, kvHead * d]] as const).map(([P, start]) =>
            forward.withLinearWeights(P, async (weights) => {
              await weights.constant?.load?.();
              return headColumns(P, weights, start, d);
            }),
          ),
        );
  const biased = c.qkvBias;
  const X = biased ? withOnes(input, n, c.hidden) : input;
  // T5's relative position bias: this head's, as the additive mask the run added to its scores.
  const bias = forward.fullBiasOf(n);
  return {
    X: matrix(n, biased ? c.hidden + 1 : c.hidden, X),
    WQ: [WQ],
    WK: [WK],
    WV: [WV],
    ...(bias ? { mask: headBias(bias, head, n, n) } : {}),
    options: {
      ...forward.attentionOptions(layer, 1, 1),
      ...(rope ? ropeOptions(rope) : {}),
      name: `${title}${biased ? ' (biases as the last row of W_Q, W_K, W_V, on a column of ones added to X: exact)' : ''}${bias ? ", the relative position bias as the additive mask" : ''}`,
    },
    tokens,
  };
}

/**
 * A decoder layer's cross-attention head as a step-by-step problem: X the layer's cross-attention
 * input (the decoder's states after its self-attention, normed where the model norms first), the
 * keys' and values' source the encoder's output, and the head's columns of the checkpoint's W_Q,
 * W_K, W_V (biases as an extra row on a column of ones added to X and to the source: exact).
 */
export async function crossDrillDown(forward: ModelForward, result: ForwardResult, memory: EncoderMemory, layer: number, head: number, tokens: string[], keyTokens: string[]): Promise<AttentionSpec> {
  const c = forward.config;
  const X = forward.layerLayout(layer)?.cross;
  const record = result.layers[layer]?.cross;
  if (!X || !record || !(head >= 0 && head < c.heads)) throw new RangeError(`no layer ${layer}, head ${head}: the decoder has layers 0–${c.layers - 1} of heads 0–${c.heads - 1}`);
  const n = tokens.length;
  const d = c.headDim;
  const [WQ, WK, WV] = await Promise.all(
    [X.q, X.k, X.v].map((P) =>
      forward.withLinearWeights(P, async (weights) => {
        await weights.constant?.load?.();
        return headColumns(P, weights, head * d, d);
      }),
    ),
  );
  const biased = X.q.bias;
  return {
    X: matrix(n, biased ? c.hidden + 1 : c.hidden, biased ? withOnes(record.input, n, c.hidden) : record.input),
    context: matrix(memory.rows, biased ? c.hidden + 1 : c.hidden, biased ? withOnes(memory.states, memory.rows, c.hidden) : memory.states),
    WQ: [WQ],
    WK: [WK],
    WV: [WV],
    options: {
      ...forward.attentionOptions(layer, 1, 1, 'cross'),
      name: `${c.modelType} cross-attention L${layer} H${head}: queries from the decoder, keys and values from the encoder's output${biased ? ' (biases as the last row of W_Q, W_K, W_V, on a column of ones: exact)' : ''}`,
    },
    tokens,
    keyTokens,
  };
}

/** The step view's own RoPE for frequencies it reproduces: theta, and GPT-J's interleaved pairs. */
function ropeOptions(rope: RopeFrequencies): { rope: number; ropeLayout?: 'interleaved' } {
  return { rope: rope.theta, ...(rope.interleaved ? { ropeLayout: 'interleaved' as const } : {}) };
}

/** What the model's RoPE does that the step view's options cannot: `partial (16 of 32 columns), longrope-scaled RoPE`. */
function ropeWords(rope: RopeFrequencies): string {
  const words = [
    ...(rope.rotaryDim !== undefined ? [`partial (${rope.rotaryDim} of each head's columns)`] : []),
    ...(rope.interleaved ? ['interleaved'] : []),
    ...(rope.type !== 'default' ? [`${rope.type}-scaled`] : []),
  ];
  return `${words.join(', ')} RoPE`;
}

/** Columns [start, start + count) of a projection's output as a [in (+1 bias row) × count] matrix. */
function headColumns(P: LinearLayout, { weight, bias }: { weight: Float32Array; bias?: Float32Array }, start: number, count: number) {
  const rows = P.in + (bias ? 1 : 0);
  const data = new Float32Array(rows * count);
  for (let i = 0; i < P.in; i++) {
    for (let j = 0; j < count; j++) data[i * count + j] = P.stored === 'in-out' ? weight[i * P.out + start + j] : weight[(start + j) * P.in + i];
  }
  if (bias) data.set(bias.subarray(start, start + count), P.in * count);
  return matrix(rows, count, data);
}

/** x [n × width] with a column of ones appended. */
function withOnes(x: Float32Array, n: number, width: number): Float32Array {
  const out = new Float32Array(n * (width + 1));
  for (let r = 0; r < n; r++) {
    out.set(x.subarray(r * width, (r + 1) * width), r * (width + 1));
    out[r * (width + 1) + width] = 1;
  }
  return out;
}

/**
 * Refuses a run whose memory would pass `limit`, before anything large is read: the kept per-layer
 * inputs, Q and K, one layer's weights three times (decoded, copied to the kernels, packed), the
 * MLP's activations, a head group's n×n attention steps, a chunk of the LM head, and
 * pytorch_model.bin's tensors (read whole).
 */
export function refuseIfTooBig(c: ModelConfig, layers: LayerLayout[], weights: Weights, n: number, limit: number | undefined, residentToCome = 0): void {
  if (limit === undefined) return;
  const kept = c.layers * n * (c.hidden + (c.heads + c.kvHeads) * c.headDim) * 4;
  const linearBytes = (P: LinearLayout | undefined) => (P ? P.in * P.out * 4 : 0);
  const layerBytes = Math.max(
    ...layers.map((L) => ('fused' in L.qkv ? linearBytes(L.qkv.fused) : linearBytes(L.qkv.q) + linearBytes(L.qkv.k) + linearBytes(L.qkv.v)) + linearBytes(L.out) + linearBytes(L.gate) + linearBytes(L.up) + linearBytes(L.down)),
  );
  const working = n * Math.max(c.intermediate, 3 * c.hidden) * 4 * 4;
  const head = VOCAB_CHUNK_BYTES * 3 + n * vocabChunk(c.hidden) * 4;
  const resident = weights.residentBytes + residentToCome;
  const needed = kept + layerBytes * 3 + working + attentionGroup(c, n).bytes + head + resident + Math.max(0, ...layers.map(expertsInFlightBytes));
  if (needed > limit) {
    const gb = (bytes: number) => (bytes / 1e9).toFixed(2);
    throw new RangeError(`running this model on ${n} tokens needs about ${gb(needed)} GB of memory (${gb(layerBytes)} GB per layer of weights, ${gb(kept)} GB kept for the views${resident ? `, ${gb(resident)} GB of weights to keep resident or pytorch_model.bin read whole` : ''}), more than the ${gb(limit)} GB allowed`);
  }
}
