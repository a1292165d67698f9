// A config.json that lies about its model's size is refused in one line before anything is
// allocated for it (issue 41: num_hidden_layers 2147483648 on the Llama fixture ran the CLI out of
// JavaScript heap after 15 s, exit 6, an 18-line V8 report).
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelConfigError, parseModelConfig } from '../../../src/core/model/config';
import { bundleCli } from '../cli/bundle';
import { modelFixture } from './fixtures';

/** Mutations of a real config: each size alone far past any model's, and sizes each plausible that imply too many parameters together. */
const LIES: Record<string, unknown>[] = [
  { num_hidden_layers: 2147483648 },
  { num_hidden_layers: 4294967296 },
  { hidden_size: 2147483648, num_attention_heads: 1 },
  { intermediate_size: 1e12 },
  { vocab_size: 2 ** 40 },
  { num_attention_heads: 1e9, num_key_value_heads: 1e9 },
  { num_key_value_heads: 2 ** 31 },
  { head_dim: 2 ** 31 },
  { max_position_embeddings: 2 ** 40 },
  { num_hidden_layers: 1024, hidden_size: 131072, intermediate_size: 1 << 20, num_attention_heads: 1024, num_key_value_heads: 1024 },
];

describe('a config.json that lies about its size', function () {
  this.timeout(120000);
  const original = JSON.parse(readFileSync(join(modelFixture('llama-gqa-bf16'), 'config.json'), 'utf8')) as Record<string, unknown>;

  for (const lie of LIES) {
    it(`is refused in one line at once: ${JSON.stringify(lie)}`, () => {
      const started = performance.now();
      assert.throws(
        () => parseModelConfig(JSON.stringify({ ...original, ...lie })),
        (error: unknown) => error instanceof ModelConfigError && !error.message.includes('\n') && /config\.json's/.test(error.message),
      );
      assert.ok(performance.now() - started < 100, 'refused before anything per layer is built');
    });
  }

  it('GPT-2\'s n_layer too', () => {
    const gpt2 = JSON.parse(readFileSync(join(modelFixture('gpt2'), 'config.json'), 'utf8')) as Record<string, unknown>;
    assert.throws(() => parseModelConfig(JSON.stringify({ ...gpt2, n_layer: 2147483648 })), /n_layer is 2147483648/);
  });

  it('real sizes still parse (Llama 3.1 405B\'s)', () => {
    const config = parseModelConfig(JSON.stringify({ ...original, num_hidden_layers: 126, hidden_size: 16384, intermediate_size: 53248, num_attention_heads: 128, num_key_value_heads: 8, vocab_size: 128256 }));
    assert.equal(config.layers, 126);
  });

  it('the CLI says so in one line, exit 1, no stack trace', () => {
    const dir = mkdtempSync(join(tmpdir(), 'attention-lens-lying-'));
    try {
      const folder = join(dir, 'llama');
      cpSync(modelFixture('llama-gqa-bf16'), folder, { recursive: true });
      writeFileSync(join(folder, 'config.json'), JSON.stringify({ ...original, num_hidden_layers: 2147483648 }));
      const run = spawnSync(process.execPath, [bundleCli(dir), 'model', folder, '--ids', '1,2,3'], { encoding: 'utf8', timeout: 60000 });
      assert.equal(run.status, 1, run.stderr);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      assert.match(run.stderr, /num_hidden_layers is 2147483648/);
      assert.doesNotMatch(run.stderr, /\n\s+at /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
