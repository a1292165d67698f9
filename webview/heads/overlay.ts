// A picture run's attention laid over the picture, as both the Picture tab and the model view's
// thumbnails draw it: the picture as a canvas, each patch's colour and opacity from its weight,
// and a thumbnail's pixels blended by hand (one ImageData for every layer × head, not a fill per
// patch per thumbnail: 144 thumbnails × 196 patches of ViT-B/16).
import type { PictureInfo } from '../../src/protocol';
import { RAMP } from './colors';

/** The overlay's RGBA per patch: the ramp's colour of weight / max, alpha growing with the weight times `opacity`. */
export function overlayColor(weight: number, max: number, opacity: number): [number, number, number, number] {
  const v = max > 0 ? Math.max(0, Math.min(1, weight / max)) : 0;
  const at = Math.round(v * 255) * 3;
  return [RAMP[at], RAMP[at + 1], RAMP[at + 2], opacity * (0.25 + 0.75 * v)];
}

/** The 8-bit picture the model saw, on a canvas of its own size. */
export function pictureCanvas(picture: PictureInfo): HTMLCanvasElement {
  const canvas = document.createElement('canvas');
  canvas.width = picture.width;
  canvas.height = picture.height;
  const image = new ImageData(picture.width, picture.height);
  for (let i = 0, j = 0; i < picture.rgb.length; i += 3, j += 4) {
    image.data[j] = picture.rgb[i];
    image.data[j + 1] = picture.rgb[i + 1];
    image.data[j + 2] = picture.rgb[i + 2];
    image.data[j + 3] = 255;
  }
  canvas.getContext('2d')!.putImageData(image, 0, 0);
  return canvas;
}

/** The picture scaled into a thumbnail (its longer side `side` pixels), and the patch under each pixel. */
export interface ThumbnailPicture {
  width: number;
  height: number;
  /** RGBA, width × height. */
  base: Uint8ClampedArray;
  /** The patch (r·cols + c) under each pixel; −1 on the strip past the last whole patch, which the model never saw. */
  patchOf: Int32Array;
}

export function thumbnailPicture(picture: PictureInfo, source: HTMLCanvasElement, side: number): ThumbnailPicture {
  const scale = side / Math.max(picture.width, picture.height);
  const width = Math.max(1, Math.round(picture.width * scale));
  const height = Math.max(1, Math.round(picture.height * scale));
  const small = document.createElement('canvas');
  small.width = width;
  small.height = height;
  const g = small.getContext('2d', { willReadFrequently: true })!;
  g.imageSmoothingEnabled = true;
  g.imageSmoothingQuality = 'high';
  g.drawImage(source, 0, 0, width, height);
  const base = g.getImageData(0, 0, width, height).data;
  const [rows, cols] = picture.grid;
  const colOf = Int32Array.from({ length: width }, (_, x) => Math.floor((((x + 0.5) / width) * picture.width) / picture.patchSize));
  const rowOf = Int32Array.from({ length: height }, (_, y) => Math.floor((((y + 0.5) / height) * picture.height) / picture.patchSize));
  const patchOf = new Int32Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) patchOf[y * width + x] = rowOf[y] < rows && colOf[x] < cols ? rowOf[y] * cols + colOf[x] : -1;
  return { width, height, base, patchOf };
}

/**
 * Paints one thumbnail into `pixels` (RGBA, `stride` pixels a row) at (x0, y0): the picture, each
 * patch blended with overlayColor(weight, the largest weight, opacity). Returns the largest weight.
 */
export function paintOverlay(pixels: Uint8ClampedArray, stride: number, x0: number, y0: number, thumbnail: ThumbnailPicture, weights: ArrayLike<number>, opacity: number): number {
  let top = 0;
  for (let p = 0; p < weights.length; p++) if (weights[p] > top) top = weights[p];
  const colors = new Float32Array(weights.length * 4);
  for (let p = 0; p < weights.length; p++) colors.set(overlayColor(weights[p], top, opacity), p * 4);
  const { width, height, base, patchOf } = thumbnail;
  for (let y = 0; y < height; y++) {
    let at = ((y0 + y) * stride + x0) * 4;
    for (let x = 0, i = y * width; x < width; x++, i++, at += 4) {
      const p = patchOf[i];
      const a = p < 0 ? 0 : colors[p * 4 + 3];
      for (let c = 0; c < 3; c++) pixels[at + c] = base[i * 4 + c] * (1 - a) + (p < 0 ? 0 : colors[p * 4 + c] * a);
      pixels[at + 3] = 255;
    }
  }
  return top;
}
