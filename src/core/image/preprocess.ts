// A picture made into a vision model's pixel_values as the folder's preprocessor_config.json says,
// in the order transformers' (slow, PIL-based) image processors apply it: convert to RGB (decode.ts),
// resize (PIL's filter on the 8-bit picture: resample.ts), center crop, rescale, normalise. The
// result is channel-first float32 [3 × height × width].
import { filterOfPilCode, type ResampleFilter, resizeRgb8 } from './resample';
import type { RgbImage } from './decode';
import { ImageError } from './decode';

export interface ImageProcessing {
  /** From image_processor_type, or the defaults used without one. */
  processor: string;
  resize?: { kind: 'exact'; height: number; width: number; filter: ResampleFilter } | { kind: 'shortest-edge'; shortest: number; filter: ResampleFilter };
  crop?: { height: number; width: number };
  rescale?: number;
  normalize?: { mean: number[]; std: number[] };
}

export interface PixelValues {
  /** [3 × height × width], channel-first. */
  data: Float32Array;
  height: number;
  width: number;
  /** The 8-bit RGB picture the model saw, after resize and crop (for views). */
  seen: { width: number; height: number; rgb: Uint8Array };
}

type Json = Record<string, unknown>;

const IMAGENET_DEFAULT = { mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] };
const IMAGENET_STANDARD = { mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5] };
const OPENAI_CLIP = { mean: [0.48145466, 0.4578275, 0.40821073], std: [0.26862954, 0.26130258, 0.27577711] };

/** Each processor's defaults for what a preprocessor_config.json leaves out (their __init__ defaults). */
const DEFAULTS: Record<string, { size: Json; resample: number; crop?: number; norm: { mean: number[]; std: number[] }; squareInt: boolean }> = {
  ViTImageProcessor: { size: { height: 224, width: 224 }, resample: 2, norm: IMAGENET_STANDARD, squareInt: true },
  DeiTImageProcessor: { size: { height: 256, width: 256 }, resample: 3, crop: 224, norm: IMAGENET_DEFAULT, squareInt: true },
  BitImageProcessor: { size: { shortest_edge: 224 }, resample: 3, crop: 224, norm: OPENAI_CLIP, squareInt: false },
  CLIPImageProcessor: { size: { shortest_edge: 224 }, resample: 3, crop: 224, norm: OPENAI_CLIP, squareInt: false },
  SiglipImageProcessor: { size: { height: 224, width: 224 }, resample: 3, norm: IMAGENET_STANDARD, squareInt: true },
};

/** preprocessor_config.json's text read as the processor it names would. */
export function parseImageProcessing(text: string): ImageProcessing {
  let json: Json;
  try {
    json = JSON.parse(text) as Json;
  } catch (error) {
    throw new ImageError(`preprocessor_config.json is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const processor = String(json.image_processor_type ?? json.feature_extractor_type ?? 'ViTImageProcessor').replace(/Fast$/, '').replace(/FeatureExtractor$/, 'ImageProcessor');
  const defaults = DEFAULTS[processor] ?? DEFAULTS.ViTImageProcessor;
  const flag = (key: string, fallback: boolean) => (typeof json[key] === 'boolean' ? (json[key] as boolean) : fallback);
  const out: ImageProcessing = { processor };
  if (flag('do_resize', true)) {
    const code = typeof json.resample === 'number' ? json.resample : defaults.resample;
    const filter = filterOfPilCode(code);
    if (!filter) throw new ImageError(`preprocessor_config.json's resample ${code} is not supported: supported are PIL's bilinear (2), bicubic (3), lanczos (1), box (4) and hamming (5)`);
    const size = json.size ?? defaults.size;
    if (typeof size === 'number') out.resize = defaults.squareInt ? { kind: 'exact', height: size, width: size, filter } : { kind: 'shortest-edge', shortest: size, filter };
    else if (isObject(size) && typeof size.shortest_edge === 'number') out.resize = { kind: 'shortest-edge', shortest: size.shortest_edge, filter };
    else if (isObject(size) && typeof size.height === 'number' && typeof size.width === 'number') out.resize = { kind: 'exact', height: size.height, width: size.width, filter };
    else throw new ImageError(`preprocessor_config.json's size ${JSON.stringify(size)} is not supported: give {"height", "width"}, {"shortest_edge"} or a number`);
  }
  if (flag('do_center_crop', defaults.crop !== undefined)) {
    const crop = json.crop_size ?? defaults.crop ?? 224;
    if (typeof crop === 'number') out.crop = { height: crop, width: crop };
    else if (isObject(crop) && typeof crop.height === 'number' && typeof crop.width === 'number') out.crop = { height: crop.height, width: crop.width };
    else throw new ImageError(`preprocessor_config.json's crop_size ${JSON.stringify(crop)} is not supported`);
  }
  if (flag('do_rescale', true)) out.rescale = typeof json.rescale_factor === 'number' ? json.rescale_factor : 1 / 255;
  if (flag('do_normalize', true)) {
    const triple = (value: unknown, fallback: number[]): number[] => (typeof value === 'number' ? [value, value, value] : Array.isArray(value) && value.length === 3 && value.every((v) => typeof v === 'number') ? (value as number[]) : fallback);
    out.normalize = { mean: triple(json.image_mean, defaults.norm.mean), std: triple(json.image_std, defaults.norm.std) };
  }
  return out;
}

/** What a folder without preprocessor_config.json gets: the model's image_size, square, bicubic, mean and std 0.5. */
export function defaultImageProcessing(imageSize: number): ImageProcessing {
  return { processor: 'default', resize: { kind: 'exact', height: imageSize, width: imageSize, filter: 'bicubic' }, rescale: 1 / 255, normalize: IMAGENET_STANDARD };
}

/** The size transformers' get_resize_output_image_size gives a shortest-edge resize: the short side to `shortest`, the long one truncated in proportion. */
export function shortestEdgeSize(width: number, height: number, shortest: number): { width: number; height: number } {
  const [short, long] = width <= height ? [width, height] : [height, width];
  const newLong = Math.trunc((shortest * long) / short);
  return width <= height ? { width: shortest, height: newLong } : { width: newLong, height: shortest };
}

export function preprocess(image: RgbImage, p: ImageProcessing): PixelValues {
  let { width, height, rgb } = image;
  if (p.resize) {
    const size = p.resize.kind === 'exact' ? { width: p.resize.width, height: p.resize.height } : shortestEdgeSize(width, height, p.resize.shortest);
    if (size.width !== width || size.height !== height) {
      rgb = resizeRgb8(rgb, width, height, 3, size.width, size.height, p.resize.filter);
      ({ width, height } = size);
    }
  }
  if (p.crop) {
    // transformers' center_crop: the top-left corner at ⌊(size − crop)/2⌋ on each axis; an axis
    // shorter than the crop is padded with zeros (black, before rescaling), the picture at ⌈(crop − size)/2⌉.
    const { height: ch, width: cw } = p.crop;
    const [top, left] = [Math.max(0, Math.floor((height - ch) / 2)), Math.max(0, Math.floor((width - cw) / 2))];
    const [padTop, padLeft] = [Math.max(0, Math.ceil((ch - height) / 2)), Math.max(0, Math.ceil((cw - width) / 2))];
    const [rows, cols] = [Math.min(height, ch), Math.min(width, cw)];
    const cropped = new Uint8Array(ch * cw * 3);
    for (let y = 0; y < rows; y++) cropped.set(rgb.subarray(((top + y) * width + left) * 3, ((top + y) * width + left + cols) * 3), ((padTop + y) * cw + padLeft) * 3);
    rgb = cropped;
    width = cw;
    height = ch;
  }
  const plane = width * height;
  const data = new Float32Array(3 * plane);
  const scale = p.rescale ?? 1;
  const mean = p.normalize?.mean ?? [0, 0, 0];
  const std = p.normalize?.std ?? [1, 1, 1];
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < plane; i++) data[c * plane + i] = (rgb[i * 3 + c] * scale - mean[c]) / std[c];
  }
  return { data, height, width, seen: { width, height, rgb } };
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
