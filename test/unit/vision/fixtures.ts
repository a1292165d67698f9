// Random-weight vision transformer folders, their pictures and float64 PyTorch references (with
// PIL's preprocessing), written by scripts/gen_vision_fixtures.py into test-output/vision-models/
// (not committed). The first test that asks generates the set (a few seconds); later runs reuse it
// until the scripts that write it change.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureGenerated } from '../model/fixtures';

export const VISION_FIXTURES = ['vit-classifier', 'deit-teacher', 'dinov2', 'dinov2-registers', 'clip', 'siglip'] as const;
export type VisionFixtureName = (typeof VISION_FIXTURES)[number];

export interface VisionReference {
  picture: string;
  /** How the picture file is stored: RGB, RGBA, L (greyscale) or P (palette) PNG, or JPEG (YCbCr 4:4:4, YCbCr 4:2:0, or Adobe CMYK). */
  mode: 'RGB' | 'RGBA' | 'L' | 'P' | 'JPEG' | 'JPEG420' | 'CMYK';
  tokens: string[];
  patch_grid: [number, number];
  /** PIL's preprocessing, [3 × h × w] flattened. */
  pixel_values: number[];
  pixel_shape: [number, number, number];
  /** A JPEG's 8-bit RGB as PIL decodes and converts it (libjpeg), row-major. */
  decoded_rgb?: number[];
  attentions: number[][][][];
  hidden_last: number[];
  logits_last: number[] | null;
  top5: number[] | null;
}

const repoRoot = resolve(__dirname, '..', '..', '..');
const fixtureRoot = join(repoRoot, 'test-output', 'vision-models');
const sources = ['gen_vision_fixtures.py', 'safetensors_file.py'].map((file) => join(repoRoot, 'scripts', file));

export function visionFixture(name: VisionFixtureName): string {
  ensureGenerated(fixtureRoot, sources);
  return join(fixtureRoot, name);
}

/** Every picture of a fixture folder with its reference. */
export function visionReferences(name: VisionFixtureName): VisionReference[] {
  const folder = visionFixture(name);
  return readdirSync(folder)
    .filter((file) => /^reference-.*\.json$/.test(file))
    .sort()
    .map((file) => JSON.parse(readFileSync(join(folder, file), 'utf8')) as VisionReference);
}
