import { type PickledTensor, PickledTuple, type PickleValue, readPickle } from './pickle';
import { BYTES_PER_ELEMENT, checkShape, decodeElements, type ElementBudget, elementCount, gatherStrided, isContiguous, type Tensor, TensorReadError, viewExtent } from './tensor';
import { unzipMembers } from './zip';

// PyTorch checkpoints as `torch.save` writes them since 1.6: a zip holding `<name>/data.pkl` (the
// pickled object), `<name>/data/<key>` (one raw storage per key) and `<name>/byteorder` (absent
// before 2.1 = little). The pickle is read by opcodes (pickle.ts), never executed. Tensors are
// found anywhere in the pickled object (a state dict, or `{"model": state_dict, "step": 3}`),
// named by their path of keys joined with dots.

export function readTorch(bytes: Uint8Array, where: string, budget: ElementBudget, maxElements: number): Tensor[] {
  const maxBytes = maxElements * BYTES_PER_ELEMENT.float64 + 64 * 1024 * 1024;
  const members = unzipMembers(bytes, where, maxBytes, (name) => /(^|\/)(data\.pkl|byteorder|data\/\w+)$/.test(name), budget.limits.viewsOnFile);
  const pickleName = [...members.keys()].find((name) => /(^|\/)data\.pkl$/.test(name));
  if (pickleName === undefined) throw new TensorReadError(`${where} is a zip without data.pkl: not a PyTorch checkpoint.`, 'tensor-format');
  const prefix = pickleName.slice(0, -'data.pkl'.length);
  const byteorder = members.get(`${prefix}byteorder`);
  const littleEndian = byteorder === undefined || new TextDecoder().decode(byteorder).trim() !== 'big';
  const root = readPickle(members.get(pickleName) as Uint8Array, `${where} (${pickleName})`);
  const found: { key: string; tensor: PickledTensor }[] = [];
  collectTensors(root, '', found);
  if (found.length === 0) throw new TensorReadError(`${where} holds no tensors.`, 'tensor-empty');
  const storages = new Map<string, Float32Array | Float64Array>();
  return found.map(({ key, tensor }) => {
    const at = `${where}[${JSON.stringify(key)}]`;
    const shape = checkShape(tensor.shape, at);
    const { storage } = tensor;
    let values = storages.get(storage.key);
    if (!values) {
      const raw = members.get(`${prefix}data/${storage.key}`);
      if (!raw) throw new TensorReadError(`${at} views storage ${storage.key}, which the archive does not hold.`, 'tensor-truncated');
      const size = BYTES_PER_ELEMENT[storage.dtype];
      if (raw.length < storage.numel * size) throw new TensorReadError(`${at}: storage ${storage.key} should hold ${storage.numel} ${storage.dtype} values (${storage.numel * size} bytes) but has ${raw.length} bytes.`, 'tensor-truncated');
      budget.take(storage.numel, at);
      values = decodeElements(raw, 0, storage.numel, storage.dtype, littleEndian, budget.limits.viewsOnFile);
      storages.set(storage.key, values);
    }
    if (viewExtent(tensor.offset, shape, tensor.strides) > values.length) throw new TensorReadError(`${at} reaches past the end of its storage ${storage.key}.`, 'tensor-header');
    const count = elementCount(shape);
    const whole = tensor.offset === 0 && count === values.length && isContiguous(shape, tensor.strides);
    // A view may repeat its storage (stride 0): its own numbers count against the budget too.
    if (!whole) budget.take(count, at);
    return { key, dtype: storage.dtype, shape, data: whole ? values : gatherStrided(values, tensor.offset, shape, tensor.strides) };
  });
}

function collectTensors(value: PickleValue, path: string, found: { key: string; tensor: PickledTensor }[]): void {
  const join = (part: string) => (path === '' ? part : `${path}.${part}`);
  if (value instanceof Map) {
    for (const [key, item] of value) if (typeof key === 'string' || typeof key === 'number') collectTensors(item, join(String(key)), found);
  } else if (Array.isArray(value) || value instanceof PickledTuple) {
    (Array.isArray(value) ? value : value.items).forEach((item, index) => collectTensors(item, join(String(index)), found));
  } else if (typeof value === 'object' && value !== null && (value as { kind?: string }).kind === 'tensor') {
    found.push({ key: path === '' ? 'tensor' : path, tensor: value as PickledTensor });
  }
}
