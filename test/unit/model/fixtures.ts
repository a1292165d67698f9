// Random-weight Hugging Face model folders and their float64 PyTorch references, written by
// scripts/gen_model_fixtures.py into test-output/models/ (not committed: the GPT-2 tokenizer alone
// is 3 MB). The first test that asks for one generates the whole set (a few seconds); later runs
// reuse it until one of the scripts that write it changes.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The folders the script writes, one per checkpoint layout it covers. */
export const MODEL_FIXTURES = [
  'gpt2',
  'gpt2-bin',
  'bert',
  'llama-gqa-bf16',
  'qwen2-sharded-f16',
  'qwen3',
  'mistral-window',
  'gemma2-softcap',
  // issue 40's dense families
  'pythia-f16',
  'gpt_neox-sequential-sharded-bf16',
  'gptj-bf16',
  'gpt_neo-local',
  'opt-f16',
  'opt-350m-post-ln-bin',
  'phi',
  'phi3-longrope-bf16',
  'olmo-clip',
  'olmo2-bf16',
  'stablelm-f16',
  'granite',
  'gemma',
  'llama-yarn',
  'llama-dynamic',
  'roberta',
  'xlm-roberta-sharded-f16',
  'distilbert-f16',
  'modernbert-bf16',
  // Mixtures of experts (MOE_FIXTURES of the script).
  'mixtral-bf16',
  'qwen2-moe-sharded-f16',
  'olmoe',
  'qwen3-moe',
] as const;
export type ModelFixtureName = (typeof MODEL_FIXTURES)[number];

/** The fixtures of bidirectional encoders: their predictions are a mask token's fillers. */
export const ENCODER_FIXTURES: readonly ModelFixtureName[] = ['bert', 'roberta', 'xlm-roberta-sharded-f16', 'distilbert-f16', 'modernbert-bf16'];

/** Issue 40's dense-family fixtures. */
export const DENSE_FIXTURES = MODEL_FIXTURES.slice(MODEL_FIXTURES.indexOf('pythia-f16'));

/** What reference.json holds: the float64 reference forward of the folder's weights on token_ids. */
export interface ModelReference {
  token_ids: number[];
  /** [layer][head][query][key] softmax weights. */
  attentions: number[][][][];
  /** Final hidden state at the last position, after the final norm. */
  hidden_last: number[];
  /** Logits at the last position; null when the checkpoint has no LM head. */
  logits_last: number[] | null;
  /** At every position, the 5 most probable tokens of the softmax of its logits (most probable first); null without an LM head. */
  top5: { ids: number[]; probabilities: number[] }[] | null;
  /** The text token_ids encode, for folders with a real tokenizer; null otherwise. */
  text: string | null;
  /** Mixtures of experts: [layer][position] → [expert, weight] pairs by decreasing weight ([] in a dense layer). */
  experts?: [number, number][][][];
  /** The smallest gap between consecutive router logits of any token's top k + 1 (how far from a tie). */
  router_margin?: number;
}

/** max |a − b| / max |a|: the relative tolerance of the issue, over a whole vector. */
export function relativeError(want: readonly number[], got: ArrayLike<number>): number {
  assert.equal(got.length, want.length, 'length');
  let difference = 0;
  let scale = 0;
  want.forEach((v, i) => {
    difference = Math.max(difference, Math.abs(v - got[i]));
    scale = Math.max(scale, Math.abs(v));
  });
  return difference / scale;
}

/** Issue 25's tolerances for a float32 forward against the float64 reference. */
export const REFERENCE_TOLERANCE = { attention: 2e-4, hiddenRelative: 2e-3, logitsRelative: 5e-3 } as const;

const repoRoot = resolve(__dirname, '..', '..', '..');
const fixtureRoot = join(repoRoot, 'test-output', 'models');
const sources = ['gen_model_fixtures.py', 'safetensors_file.py', 'build-gpt2-tokenizer.mjs'].map((file) => join(repoRoot, 'scripts', file));

/** Whether the set under `root` was written after every one of `sources` last changed. */
function isCurrent(root = fixtureRoot, scripts = sources): boolean {
  const generated = join(root, '.generated');
  if (!existsSync(generated)) return false;
  const at = statSync(generated).mtimeMs;
  return scripts.every((source) => statSync(source).mtimeMs <= at);
}

/** Writes the set of `scripts[0]` (run as `python3 script STAGING`) into `root`, unless it is current. */
export function ensureGenerated(root = fixtureRoot, scripts = sources): void {
  if (isCurrent(root, scripts)) return;
  // Written beside the target and moved in whole, so a run interrupted half-way (or another
  // mocha process reading the set) never sees a partial folder.
  const staging = `${root}.${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  execFileSync('/usr/bin/python3', [scripts[0], staging], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] });
  writeFileSync(join(staging, '.generated'), new Date().toISOString());
  if (isCurrent(root, scripts)) {
    rmSync(staging, { recursive: true, force: true }); // another process finished first: keep what it wrote
    return;
  }
  rmSync(root, { recursive: true, force: true });
  renameSync(staging, root);
}

/** The absolute path of a fixture model folder, generating the set first if it is missing or stale. */
export function modelFixture(name: ModelFixtureName): string {
  ensureGenerated();
  return join(fixtureRoot, name);
}

export function modelReference(name: ModelFixtureName): ModelReference {
  return JSON.parse(readFileSync(join(modelFixture(name), 'reference.json'), 'utf8')) as ModelReference;
}

/** What scripts/gen_generation_references.py writes per causal fixture: a greedy continuation recomputed in float64. */
export interface GenerationReference {
  prompt: number[];
  /** The greedy tokens, ending after config.json's eos_token_id when the model said it. */
  generated: number[];
  /** The smallest gap between a step's two largest logits. */
  margin: number;
  /** [layer][head][query][key] of one float64 forward over prompt + generated. */
  attentions: number[][][][];
}

/** The generation references by fixture name, generating them (after the model set) when missing or stale. */
export function generationReferences(): Record<string, GenerationReference> {
  ensureGenerated();
  const root = join(repoRoot, 'test-output', 'generation');
  ensureGenerated(root, [join(repoRoot, 'scripts', 'gen_generation_references.py'), ...sources]);
  return JSON.parse(readFileSync(join(root, 'generation.json'), 'utf8')) as Record<string, GenerationReference>;
}
