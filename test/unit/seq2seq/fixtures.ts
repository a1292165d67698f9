// Random-weight encoder–decoder folders (T5 v1.0 and v1.1, BART, Marian, mBART, mBART-50 and mBART with
// language codes) and their float64
// PyTorch references, written by scripts/gen_seq2seq_fixtures.py into test-output/seq2seq-models/
// (not committed). The first test that asks generates the set (a few seconds); later runs reuse it
// until the scripts that write it change.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureGenerated } from '../model/fixtures';

export const SEQ2SEQ_FIXTURES = ['t5-v1_0', 't5-v1_1-bf16', 'bart-bin', 'marian-f16', 'mbart'] as const;
export type Seq2SeqFixtureName = (typeof SEQ2SEQ_FIXTURES)[number];
/** mBART-50's and mBART's conventions, their tokenizers with language codes (saved for en_XX; mBART-50's also for de_DE). */
export const LANGUAGE_FIXTURES = ['mbart-50', 'mbart-cc25'] as const;
export type LanguageFixtureName = (typeof LANGUAGE_FIXTURES)[number];

export interface Seq2SeqReference {
  source_ids: number[];
  /** The decoder's input: decoder_start_token_id, then the target's tokens. */
  target_ids: number[];
  /** The texts the ids encode, for folders with a tokenizer.json; null otherwise. */
  source_text: string | null;
  target_text: string | null;
  encoder_attentions: number[][][][];
  decoder_attentions: number[][][][];
  cross_attentions: number[][][][];
  hidden_last: number[];
  logits_last: number[];
  /** Greedy decoding of at most `generate` tokens (full re-runs, no cache): the decoder's input ids, start token first. */
  generate: number;
  generated: number[];
}

/** A language fixture's reference: run on its source in `languages.source` and its target in
 * `languages.target`; `defaults` when no language is named. */
export interface LanguageReference extends Seq2SeqReference {
  languages: { source: string; target: string };
  language_codes: string[];
  defaults: { source_ids: number[]; generated: number[]; target_ids?: number[] };
}

const repoRoot = resolve(__dirname, '..', '..', '..');
const fixtureRoot = join(repoRoot, 'test-output', 'seq2seq-models');
const sources = ['gen_seq2seq_fixtures.py', 'gen_model_fixtures.py', 'safetensors_file.py'].map((file) => join(repoRoot, 'scripts', file));

/** A fixture folder (or the checkpoint without its relative attention bias table, 't5-missing-bias'). */
export function seq2seqFixture(name: Seq2SeqFixtureName | LanguageFixtureName | 't5-missing-bias'): string {
  ensureGenerated(fixtureRoot, sources);
  return join(fixtureRoot, name);
}

export function seq2seqReference(name: Seq2SeqFixtureName): Seq2SeqReference {
  return JSON.parse(readFileSync(join(seq2seqFixture(name), 'reference.json'), 'utf8')) as Seq2SeqReference;
}

export function languageReference(name: LanguageFixtureName): LanguageReference {
  return JSON.parse(readFileSync(join(seq2seqFixture(name), 'reference.json'), 'utf8')) as LanguageReference;
}
