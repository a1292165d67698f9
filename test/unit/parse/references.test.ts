// Text that loads tensors: what the reader records, and the resolver's matrices and errors.
import * as assert from 'node:assert/strict';
import { parseDocument } from '../../../src/core/parse';
import { resolveReferences, type TensorFileLoader } from '../../../src/core/parse/tensors/resolve';
import type { TensorFile } from '../../../src/core/parse/tensors';
import { buildSpec } from '../../../src/core/spec';

const references = (text: string) => parseDocument(text).problems.flatMap((problem) => problem.references ?? []);

describe('reader: tensor references', () => {
  it('reads the four loaders, subscripts, conversions and transposes', () => {
    const read = references(
      [
        'X = np.load("acts.npy")',
        "W_Q = numpy.load('a.npz')['W_Q']",
        'W_K = load_file("model.safetensors")["layers.0.k_proj.weight"].T',
        'W_V = torch.load("ckpt.pt", map_location="cpu")["model"]["v_proj.weight"].t().float()',
        'W_O = safetensors.torch.load_file("m.safetensors")["o"].detach().numpy()',
      ].join('\n'),
    );
    assert.deepEqual(
      read.map(({ name, role, file, key, transpose }) => ({ name, role, file, key, transpose })),
      [
        { name: 'X', role: 'X', file: 'acts.npy', key: undefined, transpose: false },
        { name: 'W_Q', role: 'WQ', file: 'a.npz', key: 'W_Q', transpose: false },
        { name: 'W_K', role: 'WK', file: 'model.safetensors', key: 'layers.0.k_proj.weight', transpose: true },
        { name: 'W_V', role: 'WV', file: 'ckpt.pt', key: 'model.v_proj.weight', transpose: true },
        { name: 'W_O', role: 'WO', file: 'm.safetensors', key: 'o', transpose: false },
      ],
    );
    assert.deepEqual(read[2].range, { start: { line: 2, character: 0 }, end: { line: 2, character: 64 } });
  });

  it('leaves other calls and unknown names alone', () => {
    assert.deepEqual(references('data = np.load("acts.npy")\nX = np.loadtxt("a.txt")\nX = json.load(f)\n'), []);
  });

  it('a problem waits for its tensors instead of reporting them missing', () => {
    const [problem] = parseDocument('X = np.load("acts.npy")\nW_Q = [[1]]\n').problems;
    const { spec, diagnostics } = buildSpec(problem);
    assert.equal(spec, undefined);
    assert.deepEqual(diagnostics.map((d) => [d.severity, d.code]), [['info', 'waiting-for-tensor']]);
  });
});

describe('resolver', () => {
  const file = (tensors: TensorFile['tensors']): TensorFile => ({ format: 'npz', tensors });
  const files: Record<string, TensorFile> = {
    'a.npz': file([
      { key: 'X', dtype: 'float32', shape: [2, 3], data: new Float32Array([1, 2, 3, 4, 5, 6]) },
      { key: 'cube', dtype: 'float32', shape: [2, 2, 2], data: new Float32Array(8) },
    ]),
  };
  const load: TensorFileLoader = async (name) => {
    if (!files[name]) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    return files[name];
  };

  it('turns references into matrices with their source, transposed when asked', async () => {
    const read = await resolveReferences(parseDocument('X = np.load("a.npz")["X"]\nW_Q = np.load("a.npz")["X"].T\nW_K = np.load("a.npz")["X"].T\nW_V = np.load("a.npz")["X"].T\n'), load);
    const [X, WQ] = read.problems[0].matrices;
    assert.deepEqual([X.value.rows, X.value.cols, [...X.value.data]], [2, 3, [1, 2, 3, 4, 5, 6]]);
    assert.deepEqual([WQ.value.rows, WQ.value.cols, [...WQ.value.data]], [3, 2, [1, 4, 2, 5, 3, 6]]);
    assert.deepEqual(X.source, { kind: 'tensor', file: 'a.npz', key: 'X' });
    const { spec, diagnostics } = buildSpec(read.problems[0]);
    assert.ok(spec, JSON.stringify(diagnostics));
  });

  it('reports a missing file, a missing key, an unnamed key and a 3-d tensor at the reference', async () => {
    const text = 'X = np.load("b.npy")\n\nattention:\nX = np.load("a.npz")["Y"]\n\nattention:\nX = np.load("a.npz")\n\nattention:\nX = np.load("a.npz")["cube"]\n';
    const read = await resolveReferences(parseDocument(text), load);
    assert.deepEqual(
      read.diagnostics.map((d) => [d.range.start.line, d.message]),
      [
        [0, 'X: cannot read b.npy: no such file next to this one.'],
        [3, 'X: a.npz has no tensor "Y"; it has "X", "cube".'],
        [6, 'X: a.npz holds 2 tensors; name one, e.g. a.npz["X"]. It has "X", "cube".'],
        [9, 'X: cube is 2×2×2: attention reads 2-d matrices; save one slice (e.g. batch 0, head 0) as its own tensor.'],
      ],
    );
    assert.ok(read.problems.every((problem) => problem.unreadable?.length === 1 && problem.matrices.length === 0));
  });
});
