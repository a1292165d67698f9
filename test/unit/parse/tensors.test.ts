// The tensor-file readers against files written by numpy, torch.save and the safetensors format
// (scripts/gen_tensor_fixtures.py), and attention on model checkpoints against PyTorch.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { runAttention } from '../../../src/core/engine';
import { readTensorFile, type Tensor, TensorReadError } from '../../../src/core/parse/tensors';
import { attentionLayers, tensorMatrix, tensorProblem } from '../../../src/core/parse/tensors/roles';
import { buildSpec } from '../../../src/core/spec';
import { npyBytes } from './npyBytes';

const DIR = join(__dirname, '..', '..', 'fixtures', 'tensors');
type Value = number | 'nan' | 'inf' | '-inf';
interface Expected {
  files: Record<string, Record<string, { dtype: string; shape: number[]; values: Value[] }>>;
  attention: Record<string, { file: string; x: string; heads: number; layer: string; weights: number[][][]; output: number[][] }>;
}
const expected = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8')) as Expected;
const bytesOf = (name: string) => new Uint8Array(readFileSync(join(DIR, name)));
/** A fixture read as the extension reads a file: the Node Buffer readFileSync gives, whose slice() is a view. */
const read = (name: string, viewsOnFile = false) => readTensorFile(name, readFileSync(join(DIR, name)), { maxElements: 2 ** 27, viewsOnFile });
const decode = (value: Value) => (value === 'nan' ? NaN : value === 'inf' ? Infinity : value === '-inf' ? -Infinity : value);

/** The error a read ends in (the test fails when it reads). */
function readError(name: string, bytes = bytesOf(name)): TensorReadError {
  try {
    readTensorFile(name, bytes);
  } catch (error) {
    assert.ok(error instanceof TensorReadError, `not a TensorReadError: ${String(error)}`);
    return error;
  }
  assert.fail(`${name} was read`);
}

describe('tensor files: every tensor as its writer holds it', () => {
  for (const [name, tensors] of Object.entries(expected.files)) for (const viewsOnFile of [false, true]) {
    it(`${name}${viewsOnFile ? ', read as views on the file' : ''}`, () => {
      const file = read(name, viewsOnFile);
      const byKey = new Map(file.tensors.map((tensor) => [tensor.key, tensor]));
      assert.deepEqual([...byKey.keys()].sort(), Object.keys(tensors).sort());
      for (const [key, want] of Object.entries(tensors)) {
        const got = byKey.get(key) as Tensor;
        assert.equal(got.dtype, want.dtype, `${key} dtype`);
        assert.deepEqual(got.shape, want.shape, `${key} shape`);
        assert.equal(got.data.length, want.values.length, `${key} size`);
        want.values.forEach((value, i) => assert.ok(Object.is(got.data[i], decode(value)), `${key}[${i}] = ${got.data[i]}, want ${value}`));
      }
    });
  }

  it('as views on the file: stored, aligned little-endian float32/float64 numbers share the file\'s memory; the rest are copies', () => {
    const sharing = (name: string) => {
      const bytes = readFileSync(join(DIR, name));
      const file = readTensorFile(name, bytes, { maxElements: 2 ** 27, viewsOnFile: true });
      return Object.fromEntries(file.tensors.map((tensor) => [tensor.key, tensor.data.buffer === bytes.buffer]));
    };
    // torch.save aligns each storage to 64 bytes in a stored zip member.
    assert.ok(Object.values(sharing('pt/mha.pt')).every(Boolean), 'pt/mha.pt');
    const dtypes = sharing('pt/dtypes.pt');
    assert.equal(dtypes.double, true);
    assert.deepEqual(['half', 'bfloat16', 'bool', 'char', 'long'].map((key) => dtypes[key]), [false, false, false, false, false]);
    assert.equal(Object.values(sharing('pt/big-endian.pt')).some(Boolean), false, 'big-endian numbers are swapped in a copy');
    // savez_compressed deflates: nothing to view.
    assert.equal(Object.values(sharing('npz/compressed.npz')).some(Boolean), false);
  });

  it('keeps float32 and narrower as Float32Array, wider as Float64Array', () => {
    const dtypes = read('pt/dtypes.pt').tensors;
    const kind = (key: string) => dtypes.find((t) => t.key === key)?.data.constructor.name;
    assert.deepEqual(['half', 'bfloat16', 'bool', 'char', 'double', 'long'].map(kind), ['Float32Array', 'Float32Array', 'Float32Array', 'Float32Array', 'Float64Array', 'Float64Array']);
  });

  it('reads safetensors __metadata__', () => {
    assert.deepEqual(read('model.safetensors').metadata, { format: 'pt', heads: '3' });
  });
});

describe('tensor files: refusals and broken files', () => {
  it('refuses a pickle calling os.system, naming the global, without running it', () => {
    const error = readError('pt/hostile-os-system.pt');
    assert.equal(error.code, 'pickle-refused');
    // posix.system is what os.system pickles as on Linux.
    assert.match(error.message, /`(posix|os)\.system`/);
  });

  it('refuses builtins.eval and arbitrary objects (NEWOBJ)', () => {
    assert.match(readError('pt/hostile-eval.pt').message, /`builtins\.eval`.*never needs/);
    assert.match(readError('pt/hostile-newobj.pt').message, /`zipfile\.ZipInfo`|arbitrary object/);
  });

  it('names the legacy (non-zip) torch format', () => {
    assert.match(readError('pt/legacy.pt').message, /legacy .*format/);
  });

  it('reports a lying .npy shape without allocating it', () => {
    const patched = bytesOf('npy/float32.npy');
    const header = new TextDecoder('latin1').decode(patched.subarray(10, 128));
    assert.match(header, /\(2, 3\)/);
    // Same header length, a shape of 81 numbers over the 6 present.
    patched.set(new TextEncoder().encode(header.replace('(2, 3)', '(9, 9)')), 10);
    const error = readError('lying.npy', patched);
    assert.equal(error.code, 'tensor-truncated');
    assert.match(error.message, /declares shape \(9, 9\).*324 bytes, but only 24 follow/);
  });

  it('reports safetensors offsets past the data and a header longer than the file', () => {
    const bytes = bytesOf('dtypes.safetensors');
    const cut = bytes.slice(0, bytes.length - 4);
    assert.match(readError('cut.safetensors', cut).message, /ends at byte \d+ of the data, which holds only/);
    const long = bytes.slice();
    new DataView(long.buffer).setBigUint64(0, 10n ** 12n, true);
    assert.match(readError('long.safetensors', long).message, /at most 100 MB/);
  });

  it('refuses a file with more numbers than the limit before decoding', () => {
    const error = (() => {
      try {
        readTensorFile('acts.npy', bytesOf('acts.npy'), { maxElements: 5 });
      } catch (caught) {
        return caught as TensorReadError;
      }
      return assert.fail('read');
    })();
    assert.equal(error.code, 'tensor-too-large');
  });

  const files = Object.keys(expected.files).concat(['pt/hostile-os-system.pt', 'pt/legacy.pt']);
  it('any truncation of any fixture reads or fails with a TensorReadError, never another exception', () => {
    fc.assert(
      fc.property(fc.constantFrom(...files), fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean(), (name, fraction, viewsOnFile) => {
        const bytes = bytesOf(name);
        const cut = bytes.slice(0, Math.floor(bytes.length * fraction));
        try {
          readTensorFile(name, cut, { maxElements: 2 ** 27, viewsOnFile });
        } catch (error) {
          assert.ok(error instanceof TensorReadError, `${name} cut at ${cut.length}: ${String(error)}`);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a directory that claims more entries than the bytes can hold is refused before it is walked', () => {
    // One corrupted byte of the zip64 record's entry count made the unzip walk 4 billion entries.
    for (const name of ['pt/mha.pt', 'pt/llama.pt']) {
      const bytes = bytesOf(name);
      const zip64 = Buffer.from(bytes).lastIndexOf(Buffer.from([0x50, 0x4b, 0x06, 0x06]));
      assert.ok(zip64 > 0, `${name} has a zip64 record`);
      bytes[zip64 + 32 + 3] = 0xff;
      assert.match(readError(name, bytes).message, /directory claims 4,27\d,\d{3},\d{3} entries/);
    }
    const npz = bytesOf('npz/stored.npz');
    const end = Buffer.from(npz).lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    npz[end + 9] = 0xff;
    assert.match(readError('npz/stored.npz', npz).message, /directory claims \d{2},\d{3} entries/);
  });

  it('any corrupted byte reads or fails with a TensorReadError', () => {
    fc.assert(
      fc.property(fc.constantFrom(...files), fc.nat(), fc.integer({ min: 0, max: 255 }), fc.boolean(), (name, position, byte, viewsOnFile) => {
        const bytes = bytesOf(name);
        bytes[position % bytes.length] = byte;
        try {
          readTensorFile(name, bytes, { maxElements: 2 ** 27, viewsOnFile });
        } catch (error) {
          assert.ok(error instanceof TensorReadError, `${name} with byte ${position % bytes.length} = ${byte}: ${String(error)}`);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('tensor files: big tensors', () => {
  it('reads a 4096×4096 float32 .npy (64 MB) as one Float32Array, not through text', () => {
    const n = 4096;
    const { bytes, values } = npyBytes(n, n);
    values[0] = 1.5;
    values[n * n - 1] = -2.25;
    const [tensor] = readTensorFile('big.npy', bytes).tensors;
    assert.deepEqual(tensor.shape, [n, n]);
    assert.ok(tensor.data instanceof Float32Array);
    assert.equal(tensor.data.buffer.byteLength, n * n * 4, 'one float32 copy, no float64 doubling');
    assert.equal(tensor.data[0], 1.5);
    assert.equal(tensor.data[n * n - 1], -2.25);
  });
});

describe('tensor files: names to roles, attention against PyTorch', () => {
  for (const [name, want] of Object.entries(expected.attention)) {
    it(`${name}: ${want.file}${want.layer ? ` · ${want.layer}` : ''}, ${want.heads} heads`, () => {
      const file = read(want.file);
      const layer = attentionLayers(file.tensors).find((candidate) => candidate.prefix === want.layer);
      assert.ok(layer, `layer ${want.layer} among ${attentionLayers(file.tensors).map((l) => l.prefix).join(', ')}`);
      const xTensor = want.x.endsWith('.npy') ? read(want.x).tensors[0] : file.tensors.find((t) => t.key === want.x);
      const X = tensorMatrix(xTensor as Tensor);
      assert.ok(typeof X !== 'string', String(X));
      const made = tensorProblem({ file: want.file, tensors: file.tensors, layer, X: { matrix: X, name: want.x, source: { kind: 'tensor', file: want.x, key: want.x } }, heads: want.heads });
      assert.ok(typeof made !== 'string', String(made));
      const { spec, diagnostics } = buildSpec(made.problem);
      assert.ok(spec, JSON.stringify(diagnostics));
      const result = runAttention(spec);
      assert.equal(result.heads.length, want.heads);
      result.heads.forEach((head, h) => assertClose(head.weights, want.weights[h], `head ${h + 1} weights`));
      assertClose(result.output, want.output, 'output');
      assert.ok(made.notes.some((note) => /transposed/.test(note)), made.notes.join(' | '));
    });
  }

  it('finds every layer of a checkpoint, in file order', () => {
    assert.deepEqual(attentionLayers(read('pt/llama.pt').tensors).map((layer) => layer.prefix), ['model.layers.0.self_attn', 'model.layers.1.self_attn']);
  });

  it('splits in_proj_weight as nn.MultiheadAttention does and says so', () => {
    const file = read('pt/mha.pt');
    const [layer] = attentionLayers(file.tensors);
    assert.deepEqual(layer.projections.WK?.weight, { key: 'in_proj_weight', slice: { index: 1, parts: 3, axis: 0 }, transposed: true });
    const x = tensorMatrix(read('acts.npy').tensors[0]);
    const made = tensorProblem({ file: 'mha.pt', tensors: file.tensors, layer, X: { matrix: x as never, name: 'X', source: undefined }, heads: 2 });
    assert.ok(typeof made !== 'string');
    assert.ok(made.notes.some((note) => /rows \[0, E\) → W_Q/.test(note)));
    assert.ok(made.notes.some((note) => /out_proj\.bias/.test(note)));
  });

  it('says why a 3-d tensor or a scalar cannot be a matrix', () => {
    const dtypes = read('pt/dtypes.pt').tensors;
    assert.match(tensorMatrix(dtypes.find((t) => t.key === 'scalar') as Tensor) as string, /scalar: attention needs a matrix/);
    assert.match(tensorMatrix(dtypes.find((t) => t.key === 'rank4') as Tensor) as string, /2×1×2×3: attention reads 2-d matrices/);
  });
});

function assertClose(actual: { rows: number; cols: number; data: ArrayLike<number> }, want: number[][], label: string): void {
  assert.equal(actual.rows, want.length, `${label} rows`);
  assert.equal(actual.cols, want[0].length, `${label} cols`);
  want.flat().forEach((value, i) => assert.ok(Math.abs(actual.data[i] - value) <= 1e-10 * Math.max(1, Math.abs(value)), `${label}[${i}] = ${actual.data[i]}, want ${value}`));
}
