// A sampling value as a person writes it — a directive's `top_k=50`, the Generate… palette's
// answer — read and checked the same way in both: what each value may be, and the line that says
// so. The ranges are those decoding.ts samples with (top-k 0: every token, as transformers reads it).

export type SamplingKey = 'temperature' | 'top_k' | 'top_p' | 'seed';

const RULES: Record<SamplingKey, { read(text: string): number | undefined; must: string; example: string }> = {
  temperature: { read: (text) => positive(number(text)), must: 'a number above 0 (below 1 sharper, above 1 flatter)', example: '0.7' },
  top_k: { read: (text) => whole(text), must: 'a whole number of tokens from 0 (0: every token)', example: '50' },
  top_p: { read: (text) => within(number(text)), must: 'a number above 0 and at most 1', example: '0.9' },
  seed: { read: (text) => whole(text), must: 'a whole number', example: '1' },
};

/** The value of `text` for `key`, or undefined when it cannot be one. */
export function readSamplingValue(key: SamplingKey, text: string): number | undefined {
  return RULES[key].read(text.trim());
}

/** What a value of `key` must be (`a number above 0 and at most 1`), and one that is (`0.9`). */
export function samplingValueRule(key: SamplingKey): { must: string; example: string } {
  return RULES[key];
}

function number(text: string): number | undefined {
  return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(text) ? Number(text) : undefined;
}

function positive(value: number | undefined): number | undefined {
  return value !== undefined && value > 0 && Number.isFinite(value) ? value : undefined;
}

function within(value: number | undefined): number | undefined {
  return value !== undefined && value > 0 && value <= 1 ? value : undefined;
}

function whole(text: string): number | undefined {
  const value = /^\d{1,15}$/.test(text) ? Number(text) : undefined;
  return value !== undefined && Number.isSafeInteger(value) ? value : undefined;
}
