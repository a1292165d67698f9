// A vision transformer's input step: the picture's pixel_values cut into patches and projected (the
// Conv2d of stride = kernel = patch, as one product), the class / distillation / register tokens
// put before them, the position embeddings added (interpolated to another patch grid where the
// family does so), CLIP's pre-layernorm; and the classification heads on the final states. The
// layers after it are the one forward pass (ModelForward.runFrom): a picture's run is a model run
// whose tokens are patches.
import { ImageError } from '../image/decode';
import type { PixelValues } from '../image/preprocess';
import { bicubicFloat, resampleFloat } from '../image/resample';
import type { ModelConfig, VisionSpec } from './config';
import type { ModelForward } from './forward';
import type { VisionLayout } from './layout';

export interface PatchEmbedding {
  /** [n × hidden], the first layer's input. */
  x: Float32Array;
  n: number;
  /** "[CLS]", "[DIST]", "[REG0]"…, then "(r,c)" per patch in row-major order. */
  tokens: string[];
  /** Patch rows and columns. */
  grid: [number, number];
  /** Positions before the first patch. */
  prefix: number;
}

/** The tokens of a picture `pixels` for the model of `forward` (a vision config and layout). */
export async function embedPatches(forward: ModelForward, pixels: PixelValues): Promise<PatchEmbedding> {
  const { config: c, weights } = forward;
  const v = c.vision as VisionSpec;
  const V = forward.layout.vision as VisionLayout;
  const p = v.patchSize;
  const C = c.hidden;
  const rows = Math.floor(pixels.height / p);
  const cols = Math.floor(pixels.width / p);
  if (rows === 0 || cols === 0) throw new ImageError(`the picture is ${pixels.width}×${pixels.height}, smaller than one ${p}×${p} patch`);
  const patches = rows * cols;
  // Each patch's values in the Conv2d weight's order: channel, then row, then column inside the patch.
  const k = v.channels * p * p;
  const P = new Float32Array(patches * k);
  const plane = pixels.height * pixels.width;
  for (let r = 0; r < rows; r++) {
    for (let q = 0; q < cols; q++) {
      const at = (r * cols + q) * k;
      for (let ch = 0; ch < v.channels; ch++) {
        for (let i = 0; i < p; i++) {
          const source = ch * plane + (r * p + i) * pixels.width + q * p;
          P.set(pixels.data.subarray(source, source + p), at + (ch * p + i) * p);
        }
      }
    }
  }
  const weight = await weights.get(V.patch.weight, [C, v.channels, p, p]);
  const bias = V.patch.bias ? await weights.get(V.patch.bias, [C]) : undefined;
  const projected = await forward.backend.matmul(P, weight, patches, k, C, true, bias);

  const [trainedRows, trainedCols] = [Math.floor(v.imageSize[0] / p), Math.floor(v.imageSize[1] / p)];
  const trained = trainedRows * trainedCols;
  const positioned = (v.classToken ? 1 : 0) + (v.distillationToken ? 1 : 0); // tokens with a position before the patches
  const table = await weights.get(V.positions, v.positionTable === 'parameter' ? [1, positioned + trained, C] : [positioned + trained, C]);
  const patchPositions = positionsFor(c, v, table.subarray(positioned * C), trainedRows, trainedCols, rows, cols, pixels);

  const tokens: string[] = [];
  const prefixRows: Float32Array[] = [];
  if (V.classToken) {
    prefixRows.push(added(await weights.get(V.classToken, v.positionTable === 'parameter' ? [1, 1, C] : [C]), table.subarray(0, C)));
    tokens.push('[CLS]');
  }
  if (V.distillationToken) {
    prefixRows.push(added(await weights.get(V.distillationToken, [1, 1, C]), table.subarray(C, 2 * C)));
    tokens.push('[DIST]');
  }
  if (V.registerTokens) {
    // DINOv2's registers go after the class token once the positions are added: they have none.
    const registers = await weights.get(V.registerTokens, [1, v.registers, C]);
    for (let i = 0; i < v.registers; i++) prefixRows.push(registers.slice(i * C, (i + 1) * C));
    for (let i = 0; i < v.registers; i++) tokens.push(`[REG${i}]`);
  }
  const prefix = prefixRows.length;
  const n = prefix + patches;
  let x: Float32Array = new Float32Array(n * C);
  prefixRows.forEach((row, i) => x.set(row, i * C));
  for (let i = 0; i < patches * C; i++) x[prefix * C + i] = projected[i] + patchPositions[i];
  for (let r = 0; r < rows; r++) for (let q = 0; q < cols; q++) tokens.push(`(${r},${q})`);
  if (forward.layout.embeddingNorm) x = await forward.norm(x, forward.layout.embeddingNorm);
  return { x, n, tokens, grid: [rows, cols], prefix };
}

function added(a: Float32Array, b: Float32Array): Float32Array {
  return a.map((value, i) => value + b[i]);
}

/**
 * The patches' position embeddings [rows·cols × hidden] for a grid of rows × cols: the trained
 * ones as they are, or (DINOv2) interpolated as its interpolate_pos_encoding does — bicubic on the
 * trained grid taken as a [hidden × side × side] map, except when the patch count is the trained
 * one and the picture is square.
 */
function positionsFor(c: ModelConfig, v: VisionSpec, trained: Float32Array, trainedRows: number, trainedCols: number, rows: number, cols: number, pixels: PixelValues): Float32Array {
  const C = c.hidden;
  const same = rows * cols === trainedRows * trainedCols;
  if (v.interpolation === 'none') {
    if (rows !== trainedRows || cols !== trainedCols) {
      throw new ImageError(`the picture gives ${rows}×${cols} patches but ${c.modelType} was trained on ${trainedRows}×${trainedCols} and does not interpolate its position embeddings (it needs a ${v.imageSize[1]}×${v.imageSize[0]} picture after preprocessing)`);
    }
    return trained.slice(0, rows * cols * C);
  }
  if (same && pixels.height === pixels.width) return trained.slice(0, rows * cols * C);
  const side = Math.trunc(Math.sqrt(trainedRows * trainedCols));
  const map = new Float32Array(C * side * side);
  for (let i = 0; i < side * side; i++) for (let ch = 0; ch < C; ch++) map[ch * side * side + i] = trained[i * C + ch];
  const resized = v.interpolation === 'bicubic' ? bicubicFloat(map, C, side, side, rows, cols) : resampleFloat(map, C, side, side, rows, cols, 'bicubic');
  const out = new Float32Array(rows * cols * C);
  for (let i = 0; i < rows * cols; i++) for (let ch = 0; ch < C; ch++) out[i * C + ch] = resized[ch * rows * cols + i];
  return out;
}

/** The classification head's logits from the final states [n × hidden] (after the final norm), or undefined without one. */
export async function classify(forward: ModelForward, hidden: Float32Array, n: number, prefix: number): Promise<Float32Array | undefined> {
  const { config: c } = forward;
  const v = c.vision as VisionSpec;
  const heads = (forward.layout.vision as VisionLayout).classifiers;
  if (!v.classifier || heads.length === 0 || !forward.weights.has(`${heads[0].name}.weight`)) return undefined;
  const C = c.hidden;
  const row = (i: number) => hidden.slice(i * C, (i + 1) * C);
  switch (v.classifier.kind) {
    case 'class-token':
      return forward.linear(row(0), 1, heads[0]);
    case 'class-and-distillation': {
      // DeiT with its teacher: the class token's head and the distillation token's, averaged.
      const a = await forward.linear(row(0), 1, heads[0]);
      const b = await forward.linear(row(1), 1, heads[1]);
      return a.map((value, i) => (value + b[i]) / 2);
    }
    case 'class-and-mean-patches': {
      // DINOv2: the class token beside the mean of the patch tokens (registers left out).
      const input = new Float32Array(2 * C);
      input.set(row(0));
      for (let t = prefix; t < n; t++) for (let j = 0; j < C; j++) input[C + j] += hidden[t * C + j] / (n - prefix);
      return forward.linear(input, 1, heads[0]);
    }
  }
}
