// Resampling, written from the published description of PIL's convolution resize (the filters and
// the support scaled by the downscale factor, "antialiased") and of PyTorch's bicubic interpolate:
//
// - `resizeRgb8`: PIL's Image.resize of an 8-bit picture, which transformers' image processors
//   call. Per output pixel x of a pass, centre c = (x + ½)·scale with scale = in/out; the filter is
//   stretched by s = max(scale, 1) (so a downscale averages every input pixel it covers), its
//   support becomes support·s, the window is [trunc(c − support + ½), trunc(c + support + ½))
//   clipped to the picture, each weight is filter((i − c + ½)/s), and the weights are normalised to
//   sum 1, then rounded to fixed point with 22 fractional bits. A pass sums byte × weight from
//   ½ (rounding), shifts back and clips to 0–255. The horizontal pass runs first, into bytes, then
//   the vertical one.
// - `resampleFloat`: the same windows and weights in floating point, unrounded, on a [channels ×
//   h × w] map: PyTorch's interpolate(..., antialias=True), whose bicubic uses a = −0.5 as PIL's.
// - `bicubicFloat`: PyTorch's interpolate(mode="bicubic", align_corners=False) without antialias:
//   source x = (i + ½)·scale − ½, the four taps around it with a = −0.75, indices clamped to the
//   edge.

export type ResampleFilter = 'bilinear' | 'bicubic' | 'lanczos' | 'box' | 'hamming';

interface Filter {
  support: number;
  weight(x: number): number;
}

const FILTERS: Record<ResampleFilter, Filter> = {
  box: { support: 0.5, weight: (x) => (x > -0.5 && x <= 0.5 ? 1 : 0) },
  bilinear: { support: 1, weight: (x) => Math.max(0, 1 - Math.abs(x)) },
  hamming: { support: 1, weight: (x) => (Math.abs(x) >= 1 ? 0 : x === 0 ? 1 : (Math.sin(Math.PI * x) / (Math.PI * x)) * (0.54 + 0.46 * Math.cos(Math.PI * x))) },
  bicubic: { support: 2, weight: (x) => cubic(x, -0.5) },
  lanczos: { support: 3, weight: (x) => (Math.abs(x) >= 3 ? 0 : sinc(x) * sinc(x / 3)) },
};

function sinc(x: number): number {
  return x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
}

/** Keys' cubic convolution kernel with parameter a. */
function cubic(x: number, a: number): number {
  const t = Math.abs(x);
  if (t < 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return (((t - 5) * t + 8) * t - 4) * a;
  return 0;
}

/** PIL's resample codes as preprocessor_config.json gives them (PIL.Image.Resampling). */
export function filterOfPilCode(code: number): ResampleFilter | undefined {
  return ({ 1: 'lanczos', 2: 'bilinear', 3: 'bicubic', 4: 'box', 5: 'hamming' } as Record<number, ResampleFilter>)[code];
}

/** Per output position: the first input index and the normalised weights of its window. */
interface Windows {
  first: Int32Array;
  weights: Float64Array[];
}

function windows(inSize: number, outSize: number, filter: Filter): Windows {
  const scale = inSize / outSize;
  const stretch = Math.max(scale, 1);
  const support = filter.support * stretch;
  const first = new Int32Array(outSize);
  const weights: Float64Array[] = [];
  for (let x = 0; x < outSize; x++) {
    const centre = (x + 0.5) * scale;
    const lo = Math.max(0, Math.trunc(centre - support + 0.5));
    const hi = Math.min(inSize, Math.trunc(centre + support + 0.5));
    const w = new Float64Array(Math.max(0, hi - lo));
    let total = 0;
    for (let i = 0; i < w.length; i++) total += w[i] = filter.weight((i + lo - centre + 0.5) / stretch);
    if (total !== 0) for (let i = 0; i < w.length; i++) w[i] /= total;
    first[x] = lo;
    weights.push(w);
  }
  return { first, weights };
}

const PRECISION_BITS = 22;
const ONE = 2 ** PRECISION_BITS;

/** The weights in PIL's 8-bit fixed point: round half away from zero. */
function fixedPoint(w: Windows): { first: Int32Array; weights: Int32Array[] } {
  return { first: w.first, weights: w.weights.map((ws) => Int32Array.from(ws, (k) => Math.trunc(k < 0 ? k * ONE - 0.5 : k * ONE + 0.5))) };
}

/** An 8-bit picture of `channels` interleaved bytes a pixel, resized to outWidth × outHeight as PIL's Image.resize does. */
export function resizeRgb8(pixels: Uint8Array, width: number, height: number, channels: number, outWidth: number, outHeight: number, filterName: ResampleFilter): Uint8Array {
  const filter = FILTERS[filterName];
  let data = pixels;
  let w = width;
  if (outWidth !== width) {
    const { first, weights } = fixedPoint(windows(width, outWidth, filter));
    const out = new Uint8Array(outWidth * height * channels);
    for (let y = 0; y < height; y++) {
      const row = y * width * channels;
      for (let x = 0; x < outWidth; x++) {
        const k = weights[x];
        const base = row + first[x] * channels;
        for (let c = 0; c < channels; c++) {
          let sum = ONE / 2;
          for (let i = 0; i < k.length; i++) sum += data[base + i * channels + c] * k[i];
          out[(y * outWidth + x) * channels + c] = clip8(sum);
        }
      }
    }
    data = out;
    w = outWidth;
  }
  if (outHeight !== height) {
    const { first, weights } = fixedPoint(windows(height, outHeight, filter));
    const out = new Uint8Array(w * outHeight * channels);
    const stride = w * channels;
    for (let y = 0; y < outHeight; y++) {
      const k = weights[y];
      const base = first[y] * stride;
      for (let j = 0; j < stride; j++) {
        let sum = ONE / 2;
        for (let i = 0; i < k.length; i++) sum += data[base + i * stride + j] * k[i];
        out[y * stride + j] = clip8(sum);
      }
    }
    data = out;
  }
  return data === pixels ? pixels.slice() : data;
}

function clip8(sum: number): number {
  const v = Math.floor(sum / ONE);
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

/** A [channels × h × w] float map resized by the windows above, unrounded (PyTorch's antialiased interpolate). */
export function resampleFloat(map: Float32Array, channels: number, h: number, w: number, outH: number, outW: number, filterName: ResampleFilter): Float32Array {
  return separable(map, channels, h, w, outH, outW, (inSize, outSize) => windows(inSize, outSize, FILTERS[filterName]));
}

/** PyTorch's bicubic interpolate without antialias (align_corners=False, a = −0.75, edge-clamped taps). */
export function bicubicFloat(map: Float32Array, channels: number, h: number, w: number, outH: number, outW: number): Float32Array {
  return separable(map, channels, h, w, outH, outW, (inSize, outSize) => {
    const scale = inSize / outSize;
    const first = new Int32Array(outSize);
    const weights: Float64Array[] = [];
    for (let x = 0; x < outSize; x++) {
      const source = (x + 0.5) * scale - 0.5;
      const base = Math.floor(source);
      const t = source - base;
      // Taps base−1 … base+2, clamped: a clamped tap adds its weight to the edge pixel.
      const dense = new Float64Array(inSize);
      [cubic(t + 1, -0.75), cubic(t, -0.75), cubic(1 - t, -0.75), cubic(2 - t, -0.75)].forEach((k, i) => {
        dense[Math.min(inSize - 1, Math.max(0, base - 1 + i))] += k;
      });
      const lo = Math.max(0, Math.min(inSize - 1, base - 1));
      const hi = Math.min(inSize, Math.max(0, base + 2) + 1);
      first[x] = lo;
      weights.push(dense.slice(lo, hi));
    }
    return { first, weights };
  });
}

/** Width then height, each pass in float64 sums stored as float32 (both passes computed in float32 by PyTorch). */
function separable(map: Float32Array, channels: number, h: number, w: number, outH: number, outW: number, plan: (inSize: number, outSize: number) => Windows): Float32Array {
  const across = outW === w ? undefined : plan(w, outW);
  const tmp = across ? new Float32Array(channels * h * outW) : map;
  if (across) {
    for (let row = 0; row < channels * h; row++) {
      for (let x = 0; x < outW; x++) {
        const k = across.weights[x];
        let sum = 0;
        for (let i = 0; i < k.length; i++) sum += map[row * w + across.first[x] + i] * k[i];
        tmp[row * outW + x] = sum;
      }
    }
  }
  if (outH === h) return tmp === map ? map.slice() : tmp;
  const down = plan(h, outH);
  const out = new Float32Array(channels * outH * outW);
  for (let c = 0; c < channels; c++) {
    for (let y = 0; y < outH; y++) {
      const k = down.weights[y];
      for (let x = 0; x < outW; x++) {
        let sum = 0;
        for (let i = 0; i < k.length; i++) sum += tmp[(c * h + down.first[y] + i) * outW + x] * k[i];
        out[(c * outH + y) * outW + x] = sum;
      }
    }
  }
  return out;
}
