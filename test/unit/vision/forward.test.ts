// Each vision family's run on its fixture pictures against the float64 PyTorch reference of the
// published definitions, with PIL's preprocessing: the pixel values, the tokens and patch grid,
// every head's attention, the final hidden state and the classifier's logits.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runModel } from '../../../src/core/model/run';
import { decodeImage } from '../../../src/core/image/decode';
import { parseImageProcessing, preprocess } from '../../../src/core/image/preprocess';
import { folderFiles } from '../../../src/node/modelFiles';
import { REFERENCE_TOLERANCE } from '../model/fixtures';
import { VISION_FIXTURES, visionFixture, visionReferences } from './fixtures';

/**
 * JPEG pictures are decoded by jpeg-js here and by libjpeg (through PIL) in the reference. On the
 * fixture's 4:4:4 photo their IDCTs differ by at most 3 of 255 per channel (0.03 in normalised
 * pixel values after the resize); that moves this tiny random model's attention by 5e-3 and its
 * final state by 2e-2 relative (measured). The bounds are three times those: far above float
 * rounding, far below a wrong model. An Adobe CMYK JPEG, converted as PIL's convert('RGB'),
 * differs by at most 1 of 255 and stays within the same bounds (3e-3, 1.3e-2 measured).
 * A 4:2:0 JPEG differs by up to 68 of 255 at the picture's colour edges (jpeg-js repeats each
 * chroma sample, libjpeg interpolates them: image.test.ts pins that difference itself): 0.85 in
 * normalised pixels, 7.6e-2 in attention, 0.44 relative in the final state on this model
 * (measured); its bounds are those plus a third, so that they catch a decode that gets worse.
 */
const JPEG_TOLERANCE = { pixel: 0.06, attention: 1.5e-2, hiddenRelative: 5e-2 } as const;
const JPEG420_TOLERANCE = { pixel: 1.15, attention: 0.1, hiddenRelative: 0.6 } as const;

function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

/** max |a − b| / max(1, |b|). */
function maxRelative(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i])));
  return max;
}

describe('vision models against float64 PyTorch with PIL preprocessing', function () {
  this.timeout(120_000);
  const measured: string[] = [];
  after(() => console.log(`      measured: ${measured.join('; ')}`));

  for (const name of VISION_FIXTURES) {
    it(`${name}: pixels, tokens, attention, hidden state, logits`, async () => {
      const folder = visionFixture(name);
      const processing = parseImageProcessing(readFileSync(join(folder, 'preprocessor_config.json'), 'utf8'));
      for (const reference of visionReferences(name)) {
        const bytes = readFileSync(join(folder, reference.picture));
        const tolerance = reference.mode === 'JPEG420' ? JPEG420_TOLERANCE : reference.mode === 'JPEG' || reference.mode === 'CMYK' ? JPEG_TOLERANCE : undefined;
        const pixels = preprocess(decodeImage(bytes, reference.picture), processing);
        assert.deepEqual([3, pixels.height, pixels.width], reference.pixel_shape);
        const pixelDiff = maxAbs(pixels.data, reference.pixel_values);
        // PIL's resize is reproduced exactly, so PNG pixels differ by float32 rounding alone.
        assert.ok(pixelDiff < (tolerance ? tolerance.pixel : 1e-6), `${name}/${reference.picture}: pixel values differ by ${pixelDiff}`);
        const run = await runModel(folderFiles(folder), { image: { name: reference.picture, bytes } });
        assert.deepEqual(run.tokens, reference.tokens);
        assert.deepEqual(run.patchGrid, reference.patch_grid);
        const n = reference.tokens.length;
        let attention = 0;
        reference.attentions.forEach((layer, l) =>
          layer.forEach((head, h) => {
            attention = Math.max(attention, maxAbs(run.weights(l, h), head.flat()));
          }),
        );
        const hidden = maxRelative(run.hiddenLast, reference.hidden_last);
        assert.equal(run.queryCount, n);
        assert.ok(attention < (tolerance ?? REFERENCE_TOLERANCE).attention, `${name}/${reference.picture}: attention differs by ${attention}`);
        assert.ok(hidden < (tolerance ?? REFERENCE_TOLERANCE).hiddenRelative, `${name}/${reference.picture}: hidden state differs by ${hidden} (relative)`);
        let logits = 0;
        if (reference.logits_last) {
          assert.ok(run.logitsLast, 'the classifier ran');
          logits = maxRelative(run.logitsLast, reference.logits_last);
          assert.ok(logits < REFERENCE_TOLERANCE.logitsRelative, `${name}: logits differ by ${logits}`);
          assert.deepEqual(run.predictions[0].top.map((t) => t.id), reference.top5);
          assert.equal(run.predictions[0].kind, 'label');
        } else assert.equal(run.logitsLast, undefined);
        measured.push(`${name}/${reference.picture} pixels ${pixelDiff.toExponential(1)} attention ${attention.toExponential(1)} hidden ${hidden.toExponential(1)}${reference.logits_last ? ` logits ${logits.toExponential(1)}` : ''}`);
      }
    });
  }
});
