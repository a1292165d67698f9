// The lazy tensor index: names with any class prefix, rows read by byte range, the dtypes decoded.
import { strict as assert } from 'node:assert';
import type { ModelFiles } from '../../../src/core/model/weights';
import { Weights } from '../../../src/core/model/weights';

/** A safetensors file of float32 tensors, in memory. */
function safetensors(tensors: Record<string, { shape: number[]; values: number[]; dtype?: 'F32' | 'BF16' }>): Uint8Array {
  const header: Record<string, unknown> = {};
  const parts: Uint8Array[] = [];
  let offset = 0;
  for (const [name, { shape, values, dtype = 'F32' }] of Object.entries(tensors)) {
    const bytes = dtype === 'F32' ? new Uint8Array(Float32Array.from(values).buffer) : new Uint8Array(Uint16Array.from(new Uint32Array(Float32Array.from(values).buffer), (bits) => bits >>> 16).buffer);
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes.length] };
    parts.push(bytes);
    offset += bytes.length;
  }
  const text = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + text.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  let at = 8 + text.length;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function memoryFiles(files: Record<string, Uint8Array>): ModelFiles & { reads: number[] } {
  const reads: number[] = [];
  return {
    folder: 'memory',
    reads,
    size: async (name) => files[name]?.length,
    read: async (name, offset, length) => {
      reads.push(length);
      return files[name].slice(offset, offset + length);
    },
  };
}

describe('model weights', () => {
  it('accepts names under any class prefix, Gemma 3 multimodal ones included', async () => {
    const files = memoryFiles({
      'model.safetensors': safetensors({
        'language_model.model.layers.0.mlp.up_proj.weight': { shape: [1, 2], values: [1, 2] },
        'language_model.lm_head.weight': { shape: [1, 1], values: [3] },
        'bert.embeddings.x': { shape: [1], values: [4] },
        plain: { shape: [1], values: [5] },
      }),
    });
    const w = await Weights.open(files);
    assert.deepEqual([...(await w.get('layers.0.mlp.up_proj.weight', [1, 2]))], [1, 2]);
    assert.deepEqual([...(await w.get('lm_head.weight', [1, 1]))], [3]);
    assert.deepEqual([...(await w.get('embeddings.x', [1]))], [4]);
    assert.deepEqual([...(await w.get('plain', [1]))], [5]);
  });

  it('reads only the rows asked for, and decodes bfloat16', async () => {
    const table = Array.from({ length: 12 }, (_, i) => i / 4);
    const files = memoryFiles({ 'model.safetensors': safetensors({ 'wte.weight': { shape: [4, 3], values: table, dtype: 'BF16' } }) });
    const w = await Weights.open(files);
    files.reads.length = 0;
    assert.deepEqual([...(await w.rows('wte.weight', [4, 3], 2, 1))], [1.5, 1.75, 2]);
    assert.deepEqual(files.reads, [3 * 2]);
  });

  it('names a missing tensor, a wrong shape and a shard the index lists but the folder lacks', async () => {
    const w = await Weights.open(memoryFiles({ 'model.safetensors': safetensors({ 'a.weight': { shape: [2, 3], values: [1, 2, 3, 4, 5, 6] } }) }));
    await assert.rejects(w.get('b.weight', [1]), /no tensor b\.weight/);
    await assert.rejects(w.get('a.weight', [3, 2]), /tensor a\.weight is 2×3 but the config asks for 3×2/);
    const index = new TextEncoder().encode(JSON.stringify({ weight_map: { 'a.weight': 'model-00001-of-00002.safetensors' } }));
    await assert.rejects(Weights.open(memoryFiles({ 'model.safetensors.index.json': index })), /model-00001-of-00002\.safetensors is listed in model\.safetensors\.index\.json but missing/);
    await assert.rejects(Weights.open(memoryFiles({})), /has no weights: expected model\.safetensors/);
  });
});
