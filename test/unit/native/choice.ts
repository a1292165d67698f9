// What the tests of both backends share: running with ATTENTION_LENS_BACKEND forced, and numpy's
// products for the LinearBackends (scripts/gen_native_fixtures.py).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Runs `body` with the backend forced (undefined: nothing forced), then restores the environment. */
export async function forced<T>(backend: 'native' | 'wasm' | undefined, body: () => Promise<T>): Promise<T> {
  const before = process.env.ATTENTION_LENS_BACKEND;
  if (backend) process.env.ATTENTION_LENS_BACKEND = backend;
  else delete process.env.ATTENTION_LENS_BACKEND;
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env.ATTENTION_LENS_BACKEND;
    else process.env.ATTENTION_LENS_BACKEND = before;
  }
}

export interface LinearCase {
  m: number;
  k: number;
  n: number;
  bTransposed: boolean;
  a: number[];
  b: number[];
  bias: number[] | null;
  expected: number[];
}

export const linearCases = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'native', 'linear.json'), 'utf8')) as { cases: LinearCase[] }).cases;
