// A picture file's pixels as 8-bit RGB, the way transformers' image processors see it after PIL's
// `convert("RGB")`: PNG (RGB, RGBA, greyscale with or without alpha, palette, 1–16 bits) by
// pngjs, JPEG (baseline and progressive, greyscale or YCbCr) by jpeg-js. Alpha is dropped, not
// composited, as PIL's convert does; a palette becomes its colours. 16-bit samples are scaled to 8
// bits by pngjs. Every problem is an ImageError with one line.
import { decode as decodeJpegData } from 'jpeg-js';
import { PNG } from 'pngjs';

export class ImageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageError';
  }
}

/** Pictures above this many pixels are refused before they are decoded (an RGBA copy of one is 160 MB). */
export const MAX_IMAGE_PIXELS = 40_000_000;

export interface RgbImage {
  width: number;
  height: number;
  /** Row-major, 3 bytes a pixel. */
  rgb: Uint8Array;
  format: 'png' | 'jpeg';
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export function imageFormat(bytes: Uint8Array): RgbImage['format'] | undefined {
  if (bytes.length >= 8 && PNG_SIGNATURE.every((b, i) => bytes[i] === b)) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  return undefined;
}

/** The picture in `bytes` (named `name` in messages) as 8-bit RGB. */
/** A small mid-grey PNG: the picture of a vision model's warm-up run (model/run.ts). */
export function greyPng(size = 8): Uint8Array {
  const png = new PNG({ width: size, height: size });
  png.data.fill(128);
  return PNG.sync.write(png);
}

export function decodeImage(bytes: Uint8Array, name: string): RgbImage {
  const format = imageFormat(bytes);
  if (!format) throw new ImageError(`${name} is not a PNG or JPEG picture`);
  const size = format === 'png' ? pngSize(bytes, name) : jpegSize(bytes, name);
  if (size && size.width * size.height > MAX_IMAGE_PIXELS) {
    throw new ImageError(`${name} is ${size.width}×${size.height} = ${(size.width * size.height / 1e6).toFixed(1)} megapixels, more than the ${MAX_IMAGE_PIXELS / 1e6} allowed`);
  }
  return format === 'png' ? decodePng(bytes, name) : decodeJpeg(bytes, name);
}

function pngSize(bytes: Uint8Array, name: string): { width: number; height: number } {
  // The IHDR chunk comes first: length (4), "IHDR" (4), width (4), height (4).
  if (bytes.length < 24) throw new ImageError(`${name} is a truncated PNG (${bytes.length} bytes: not even its header)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

/** The frame size from the first SOFn marker, or undefined when none is found before the scan (the decoder says why). */
function jpegSize(bytes: Uint8Array, name: string): { width: number; height: number } | undefined {
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1];
    if (marker === 0xff) {
      at++;
      continue;
    }
    const length = (bytes[at + 2] << 8) | bytes[at + 3];
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: (bytes[at + 5] << 8) | bytes[at + 6], width: (bytes[at + 7] << 8) | bytes[at + 8] };
    }
    if (marker === 0xda) return undefined;
    at += 2 + length;
  }
  if (at >= bytes.length - 9) throw new ImageError(`${name} is a truncated JPEG (it ends before its frame header)`);
  return undefined;
}

/** A whole PNG ends with its IEND chunk: length 0, "IEND", its CRC. */
function endsWithIend(bytes: Uint8Array): boolean {
  const at = bytes.length - 8;
  return at > 8 && bytes[at] === 0x49 && bytes[at + 1] === 0x45 && bytes[at + 2] === 0x4e && bytes[at + 3] === 0x44;
}

function decodePng(bytes: Uint8Array, name: string): RgbImage {
  if (!endsWithIend(bytes)) throw new ImageError(`${name} is a truncated PNG (it has ${bytes.length} bytes and no end chunk)`);
  let png: PNG;
  try {
    png = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ImageError(`${name} is not a readable PNG (${why})`);
  }
  const { width, height, data } = png;
  if (data.length < width * height * 4) throw new ImageError(`${name} is a truncated PNG (its pixels end early)`);
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0, j = 0; j < rgb.length; i += 4, j += 3) {
    rgb[j] = data[i];
    rgb[j + 1] = data[i + 1];
    rgb[j + 2] = data[i + 2];
  }
  return { width, height, rgb, format: 'png' };
}

function decodeJpeg(bytes: Uint8Array, name: string): RgbImage {
  try {
    const { width, height, data } = decodeJpegData(bytes, { useTArray: true, formatAsRGBA: false, tolerantDecoding: false, maxResolutionInMP: MAX_IMAGE_PIXELS / 1e6, maxMemoryUsageInMB: 1024 });
    return { width, height, rgb: data, format: 'jpeg' };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ImageError(`${name} is not a readable JPEG (${why})`);
  }
}
