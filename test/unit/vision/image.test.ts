// Pictures in: each PNG kind decoded to PIL's convert("RGB"), and bad files refused in one line.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { decodeImage, ImageError, MAX_IMAGE_PIXELS } from '../../../src/core/image/decode';
import { parseImageProcessing, shortestEdgeSize } from '../../../src/core/image/preprocess';
import { resizeRgb8 } from '../../../src/core/image/resample';
import { visionFixture, visionReferences } from './fixtures';

/** The most a JPEG's decode may differ from PIL's (of 255), per kind: measured (the test prints it), with a margin. */
const JPEG_DECODE_BOUND = { JPEG: { max: 3, mean: 1 }, CMYK: { max: 3, mean: 1 }, JPEG420: { max: 80, mean: 12 } } as const;

describe('pictures: decoding and preparing', function () {
  this.timeout(120_000); // the first test may generate the fixtures
  it('RGBA loses its alpha and greyscale and palette pictures become RGB, as PIL converts them', () => {
    const png = new PNG({ width: 2, height: 1 });
    png.data.set([10, 20, 30, 0, 200, 100, 50, 255]);
    const image = decodeImage(PNG.sync.write(png), 'a.png');
    assert.deepEqual([...image.rgb], [10, 20, 30, 200, 100, 50]);
    // Greyscale and palette fixtures: every decoded pixel of a grey picture has equal channels.
    const grey = decodeImage(readFileSync(join(visionFixture('deit-teacher'), 'grey.png')), 'grey.png');
    for (let i = 0; i < grey.rgb.length; i += 3) assert.ok(grey.rgb[i] === grey.rgb[i + 1] && grey.rgb[i] === grey.rgb[i + 2]);
    const palette = decodeImage(readFileSync(join(visionFixture('dinov2'), 'palette.png')), 'palette.png');
    assert.equal(palette.rgb.length, 60 * 50 * 3);
  });

  it("decodes each JPEG kind close to PIL's libjpeg: 4:4:4 and Adobe CMYK (converted as PIL's convert('RGB')) within 3 of 255; 4:2:0 differs at colour edges", () => {
    const measured: string[] = [];
    for (const reference of visionReferences('clip').filter((r) => r.decoded_rgb)) {
      const image = decodeImage(readFileSync(join(visionFixture('clip'), reference.picture)), reference.picture);
      const pil = reference.decoded_rgb!;
      assert.equal(image.rgb.length, pil.length);
      let max = 0;
      let sum = 0;
      image.rgb.forEach((v, i) => {
        max = Math.max(max, Math.abs(v - pil[i]));
        sum += Math.abs(v - pil[i]);
      });
      const mean = sum / pil.length;
      measured.push(`${reference.mode} max ${max} mean ${mean.toFixed(2)}`);
      // IDCTs differ by rounding (jpeg-js's float, libjpeg's integer "islow"): a few levels.
      // 4:2:0: jpeg-js repeats each chroma sample over its 2×2 pixels, libjpeg's default "fancy"
      // upsampling interpolates them (3/4, 1/4 triangles): far apart where colour changes sharply,
      // as on this picture's hard-edged blue checkerboard with noise (docs/vision.md).
      const bound = JPEG_DECODE_BOUND[reference.mode as keyof typeof JPEG_DECODE_BOUND];
      assert.ok(max <= bound.max && mean <= bound.mean, `${reference.picture} (${reference.mode}): max ${max}, mean ${mean}`);
    }
    assert.equal(measured.length, 3);
    console.log(`      measured (of 255): ${measured.join('; ')}`);
  });

  it('refuses a file that is not a picture, a truncated PNG, and a picture over the pixel limit, each in one line', () => {
    const refused = (bytes: Uint8Array, message: RegExp) => {
      assert.throws(() => decodeImage(bytes, 'x'), (error: unknown) => error instanceof ImageError && message.test(error.message) && !error.message.includes('\n'));
    };
    refused(new TextEncoder().encode('{"not": "a picture"}'), /^x is not a PNG or JPEG picture$/);
    const whole = readFileSync(join(visionFixture('vit-classifier'), 'exact.png'));
    refused(whole.subarray(0, Math.floor(whole.length / 2)), /^x is a truncated PNG/);
    refused(whole.subarray(0, 20), /^x is a truncated PNG/);
    const huge = new PNG({ width: 1, height: 1 });
    const bytes = PNG.sync.write(huge);
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(16, 10_000); // IHDR width
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(20, 5_000); // IHDR height
    refused(bytes, new RegExp(`^x is 10000×5000 = 50.0 megapixels, more than the ${MAX_IMAGE_PIXELS / 1e6} allowed$`));
  });

  it('reads preprocessor_config.json as the processors do: shortest edge, crop, PIL resample codes', () => {
    const clip = parseImageProcessing('{"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": 224}, "crop_size": 224, "resample": 3}');
    assert.deepEqual(clip.resize, { kind: 'shortest-edge', shortest: 224, filter: 'bicubic' });
    assert.deepEqual(clip.crop, { height: 224, width: 224 });
    assert.deepEqual(shortestEdgeSize(640, 480, 224), { width: 298, height: 224 });
    assert.deepEqual(parseImageProcessing('{"image_processor_type": "ViTImageProcessor", "size": 224}').resize, { kind: 'exact', height: 224, width: 224, filter: 'bilinear' });
    assert.throws(() => parseImageProcessing('{"resample": 0}'), /resample 0 is not supported/);
  });

  it('a resize to the same size is a copy; a downscale averages what it covers (antialiased)', () => {
    const stripes = Uint8Array.from({ length: 8 * 3 }, (_, i) => (Math.floor(i / 3) % 2 === 0 ? 0 : 200));
    assert.deepEqual([...resizeRgb8(stripes, 8, 1, 3, 8, 1, 'bilinear')], [...stripes]);
    // Down by 4 with the triangle stretched over 8 pixels: every output is near the mean, 100.
    for (const v of resizeRgb8(stripes, 8, 1, 3, 2, 1, 'bilinear')) assert.ok(Math.abs(v - 100) <= 15, String(v));
  });
});
