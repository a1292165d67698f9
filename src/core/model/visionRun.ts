// A vision model folder run on a picture: decoded and prepared as its preprocessor_config.json says
// (core/image), cut into patches (patches.ts), then the one forward pass. The result is the same
// ModelRun as a text run's — an AttentionStack whose tokens are "[CLS]", "[DIST]", "[REG0]"… and
// "(r,c)" per patch — so the heads page, head scores and rollout work over it unchanged; its
// predictions are a classifier's top 5 labels, when the folder has one.
import { warmThreads } from '../engine/fast/pool';
import { decodeImage } from '../image/decode';
import { admit } from './resident';
import { defaultImageProcessing, parseImageProcessing, preprocess } from '../image/preprocess';
import type { ImageInput, Prediction } from './input';
import { ChosenLinearBackend } from './chosenBackend';
import type { ModelConfig } from './config';
import { linearsOf, ModelForward, reserveReads, trimReads } from './forward';
import { visionLayout, visionPrefixOf } from './layout';
import { classify, embedPatches } from './patches';
import { drillDown, type ModelRun, refuseIfTooBig, type RunModelOptions } from './run';
import { ModelFileError, type ModelFiles, readText, Weights } from './weights';

const TOP = 5;

export async function runVision(files: ModelFiles, config: ModelConfig, image: ImageInput, options: RunModelOptions, started: number, nativeWarmed: Promise<void>): Promise<ModelRun> {
  if (config.family !== 'vision' || !config.vision) throw new ModelFileError(`${files.folder} is a text model (${config.modelType}): give it text (--text) or token ids, not a picture`);
  warmThreads();
  const processingText = await readText(files, 'preprocessor_config.json');
  const warnings: string[] = [];
  if (processingText === undefined) warnings.push(`${files.folder} has no preprocessor_config.json: the picture is resized to ${config.vision.imageSize[1]}×${config.vision.imageSize[0]} (bicubic) and normalised with mean and std 0.5`);
  const processing = processingText === undefined ? defaultImageProcessing(config.vision.imageSize[0]) : parseImageProcessing(processingText);
  const decoded = decodeImage(image.bytes, image.name);
  const pixels = preprocess(decoded, processing);
  const weights = await Weights.open(files);
  const prefix = visionPrefixOf(config, (name) => weights.has(name));
  if (prefix === undefined) throw new ModelFileError(`the checkpoint has no patch projection ${visionLayout(config, '').vision!.patch.weight} (with or without a class prefix such as vit., dinov2., vision_model.)`);
  const layout = visionLayout(config, prefix);
  const backend = options.backend ?? new ChosenLinearBackend();
  // Resident between runs as text models are: the next picture reads no weight and runs on packed products.
  const constants = new Set(layout.layers.flatMap((L) => linearsOf(L).map((P) => `${P.name}.weight`)));
  const resident = admit(weights.key, files.folder, weights.residentPlan(constants), backend.name === 'onnxruntime', options.residentBudgetBytes);
  weights.residentIn(resident);
  const forward = new ModelForward(config, layout, weights, backend);
  try {
    await Promise.all([reserveReads(layout, weights), nativeWarmed]);
    const loadMs = performance.now() - started;
    const embedded = await embedPatches(forward, pixels);
    const n = embedded.n;
    refuseIfTooBig(config, layout.layers, weights, n, options.memoryLimitBytes, resident ? Math.max(0, resident.plannedBytes - resident.bytes) : 0);
    const result = await forward.runFrom(embedded.x, n, options);
    const hiddenLast = result.hidden.slice((n - 1) * config.hidden);
    const logits = await classify(forward, result.hidden, n, embedded.prefix);
    const labels = config.vision.classifier?.labels ?? [];
    const predictions: Prediction[] = logits ? [top(logits, labels)] : [];
    const forwardMs = performance.now() - started - loadMs;
    const tokens = embedded.tokens;
    return {
      source: { kind: 'model', architecture: config.modelType, folder: files.folder },
      architecture: config.modelType,
      tokens,
      keyTokens: tokens,
      tokenIds: [],
      layerCount: config.layers,
      headCount: config.heads,
      queryCount: n,
      keyCount: n,
      lowerTriangular: false,
      hiddenLast,
      ...(logits ? { logitsLast: logits } : {}),
      predictions,
      warnings,
      backend: backend.name,
      resident: resident?.mode ?? 'streamed',
      timings: { loadMs, forwardMs },
      patchGrid: embedded.grid,
      picture: { ...pixels.seen, patchSize: config.vision.patchSize },
      weights: (layer, h) => forward.headWeights(layer, h, result.layers[layer], n),
      headGroups: (layer, use) => forward.eachHeadGroup(layer, result.layers[layer], n, use),
      pooled: (layer, h, mode, rowBlock, colBlock) => result.layers[layer].pools.get(h, mode, rowBlock, colBlock),
      drillDownSpec: (layer, h) => drillDown(forward, result, layer, h, tokens),
      predictAt: async (position) => (position === 0 && predictions.length > 0 ? predictions[0] : undefined),
    };
  } finally {
    if (!options.backend) backend.dispose();
    void trimReads();
  }
}

/** The classifier's 5 most probable labels (softmax of the logits). */
function top(logits: Float32Array, labels: string[]): Prediction {
  let max = -Infinity;
  for (const v of logits) if (v > max) max = v;
  let sum = 0;
  for (const v of logits) sum += Math.exp(v - max);
  const order = [...logits.keys()].sort((a, b) => logits[b] - logits[a]).slice(0, TOP);
  return { position: 0, kind: 'label', top: order.map((id) => ({ id, token: labels[id] ?? `#${id}`, probability: Math.exp(logits[id] - max) / sum })) };
}

