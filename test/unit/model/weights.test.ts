// The lazy tensor index: names with any class prefix, rows read by byte range, the dtypes decoded.
import { strict as assert } from 'node:assert';
import type { ModelFiles } from '../../../src/core/model/weights';
import { ReadBuffer, Weights } from '../../../src/core/model/weights';
import { halfToNumber, widenHalves } from '../../../src/core/parse/tensors/tensor';
import { folderFiles } from '../../../src/node/modelFiles';
import { modelFixture } from './fixtures';

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
    read: async (name, offset, length, into) => {
      reads.push(length);
      if (!into) return files[name].slice(offset, offset + length);
      into.set(files[name].subarray(offset, offset + length));
      return into.subarray(0, length);
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

  it('reads into one reused memory when given a ReadBuffer, float32 without a copy; the reads of one use side by side', async () => {
    const files = memoryFiles({
      'model.safetensors': safetensors({ a: { shape: [2, 3], values: [1, 2, 3, 4, 5, 6] }, b: { shape: [2], values: [7, 8] }, c: { shape: [2], values: [0.5, 0.25], dtype: 'BF16' } }),
    });
    const w = await Weights.open(files);
    const buffer = new ReadBuffer();
    const a = await buffer.exclusive(() => w.get('a', [2, 3], buffer));
    assert.deepEqual([...a], [1, 2, 3, 4, 5, 6]);
    const b = await buffer.exclusive(() => w.get('b', [2], buffer));
    assert.deepEqual([...b], [7, 8]);
    assert.equal(b.buffer, a.buffer, 'a smaller read reuses the memory');
    assert.equal(b.byteOffset, a.byteOffset, 'each use starts at the start');
    // A layer's MLP: its weights read at once in one use, each whole.
    const [first, second, third] = await buffer.exclusive(() => Promise.all([w.get('a', [2, 3], buffer), w.get('b', [2], buffer), w.get('c', [2], buffer)]));
    assert.deepEqual([[...first], [...second], [...third]], [[1, 2, 3, 4, 5, 6], [7, 8], [0.5, 0.25]]);
    assert.ok(second.byteOffset >= first.byteOffset + first.byteLength, 'side by side, not over each other');
    const again = await buffer.exclusive(() => Promise.all([w.get('a', [2, 3], buffer), w.get('b', [2], buffer)]));
    assert.equal(again[0].buffer, again[1].buffer, 'the next use fits in the memory the last one grew to');
    assert.deepEqual([[...again[0]], [...again[1]]], [[1, 2, 3, 4, 5, 6], [7, 8]]);
  });

  it('widens 16-bit weights into the ReadBuffer\'s reused values, and the same as into fresh memory', async () => {
    const values = [0.5, -0.25, 3, 1e-3, -7.5, 65504];
    const files = memoryFiles({ 'model.safetensors': safetensors({ h: { shape: [2, 3], values, dtype: 'BF16' }, g: { shape: [3], values: [1, 2, 3], dtype: 'BF16' } }) });
    const w = await Weights.open(files);
    const buffer = new ReadBuffer();
    const fresh = await w.get('h', [2, 3]);
    const reused = await buffer.exclusive(() => w.get('h', [2, 3], buffer));
    assert.deepEqual([...reused], [...fresh]);
    assert.equal(reused[0], 0.5);
    const next = await buffer.exclusive(() => w.get('g', [3], buffer));
    assert.equal(next.buffer, reused.buffer, 'the next read widens into the same memory');
    assert.deepEqual([...next], [1, 2, 3]);
    const [h, g] = await buffer.exclusive(() => Promise.all([w.get('h', [2, 3], buffer), w.get('g', [3], buffer)]));
    assert.deepEqual([[...h], [...g]], [[...fresh], [1, 2, 3]], 'two 16-bit weights of one use widened side by side');
  });

  it('readRoom says what a read takes of a ReadBuffer, and a buffer reserved for it grows no more in a use that reads it all', async () => {
    const files = memoryFiles({ 'model.safetensors': safetensors({ f: { shape: [5, 7], values: Array.from({ length: 35 }, (_, i) => i) }, h: { shape: [3, 30], values: Array.from({ length: 90 }, (_, i) => i / 8), dtype: 'BF16' } }) });
    const w = await Weights.open(files);
    assert.deepEqual(w.readRoom('f'), { bytes: 192, values: 0 }, '140 bytes, rounded up to 64');
    assert.deepEqual(w.readRoom('h'), { bytes: 192, values: 128 }, '180 bytes, and 90 values widened');
    assert.deepEqual(w.readRoom('absent'), { bytes: 0, values: 0 });
    const buffer = new ReadBuffer();
    await buffer.reserve(384, 128);
    const first = await buffer.exclusive(() => Promise.all([w.get('f', [5, 7], buffer), w.get('h', [3, 30], buffer)]));
    const again = await buffer.exclusive(() => Promise.all([w.get('f', [5, 7], buffer), w.get('h', [3, 30], buffer)]));
    assert.equal(again[0].buffer, first[0].buffer, 'the reserved bytes held both reads');
    assert.equal(again[1].buffer, first[1].buffer, 'the reserved values held the widened ones');
    assert.deepEqual([...again[1]], Array.from({ length: 90 }, (_, i) => i / 8));
    const unreserved = new ReadBuffer();
    const grown = await unreserved.exclusive(() => Promise.all([w.get('f', [5, 7], unreserved), w.get('h', [3, 30], unreserved)]));
    assert.notEqual(grown[0].buffer, (await unreserved.exclusive(() => w.get('f', [5, 7], unreserved))).buffer, 'without it, the use grew the buffer under the first read');
  });

  it('float16 by its table: every one of the 65536 bit patterns as halfToNumber decodes it, NaNs and infinities included', () => {
    const every = Uint16Array.from({ length: 65536 }, (_, bits) => bits);
    const widened = widenHalves(every, 'float16', new Float32Array(65536));
    every.forEach((bits) => assert.ok(Object.is(widened[bits], Math.fround(halfToNumber(bits))), `0x${bits.toString(16)}: ${widened[bits]} vs ${halfToNumber(bits)}`));
    assert.equal(widened[0x3c00], 1);
    assert.equal(widened[0xfc00], -Infinity);
    assert.ok(Number.isNaN(widened[0x7e00]));
    const bf16 = widenHalves(Uint16Array.of(0x3f80, 0xc040, 0x7f80), 'bfloat16', new Float32Array(3));
    assert.deepEqual([...bf16], [1, -3, Infinity]);
  });

  it('bfloat16 two at a time: every bit pattern, at an aligned and an unaligned start, odd lengths, as the top half of a float32', () => {
    const every = Uint16Array.from({ length: 65536 + 3 }, (_, i) => (i * 40503) & 0xffff);
    for (const [start, length] of [[0, 65539], [1, 65538], [2, 7], [3, 1], [0, 0]]) {
      const bits = every.subarray(start, start + length);
      const got = new Uint32Array(widenHalves(bits, 'bfloat16', new Float32Array(length)).buffer);
      bits.forEach((b, i) => assert.equal(got[i], (b << 16) >>> 0, `start ${start}, element ${i}: 0x${b.toString(16)}`));
    }
  });

  it('a ReadBuffer runs its callers one at a time', async () => {
    const buffer = new ReadBuffer();
    const events: string[] = [];
    const section = (name: string, ms: number) =>
      buffer.exclusive(async () => {
        events.push(`${name} starts`);
        await new Promise((resolve) => setTimeout(resolve, ms));
        events.push(`${name} ends`);
      });
    await Promise.all([section('first', 30), section('second', 1)]);
    assert.deepEqual(events, ['first starts', 'first ends', 'second starts', 'second ends']);
  });

  it('a folder on disk reads into a ReadBuffer the values it reads into fresh memory', async () => {
    const w = await Weights.open(folderFiles(modelFixture('gpt2')));
    const fresh = await w.rows('wte.weight', [50257, 16], 100, 3);
    const buffered = await w.rows('wte.weight', [50257, 16], 100, 3, new ReadBuffer());
    assert.deepEqual([...buffered], [...fresh]);
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
