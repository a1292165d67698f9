#!/usr/bin/python3
"""Tensor files from the real writers, and what is in them (test/fixtures/tensors/).

.npy/.npz are written by numpy.save / savez / savez_compressed, .pt by torch.save, .safetensors by
this script following the published format (8-byte little-endian header length, JSON header with
`__metadata__`, padded with spaces to a multiple of 8, then the raw little-endian buffer).
expected.json holds every tensor's dtype, shape and values as the writer holds them (float64), and
attention computed by PyTorch from the same files: nn.MultiheadAttention itself for its packed
state dict, and per-head softmax(QKᵀ/√d)·V for q_proj/k_proj/v_proj/o_proj checkpoints.
The files are small and committed; run this again only to change them:
    /usr/bin/python3 scripts/gen_tensor_fixtures.py
"""
import json
import math
import os
import pickle
import zipfile

import numpy as np
import torch

from safetensors_file import write_safetensors as write_safetensors_to

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'test', 'fixtures', 'tensors')
torch.manual_seed(18)
rng = np.random.default_rng(18)
expected = {'files': {}, 'attention': {}}


def encode(value):
    value = float(value)
    if math.isnan(value):
        return 'nan'
    if math.isinf(value):
        return 'inf' if value > 0 else '-inf'
    return value


def record(name, tensors):
    """tensors: {key: (dtype name, numpy float64 array)}"""
    expected['files'][name] = {
        key: {'dtype': dtype, 'shape': list(array.shape), 'values': [encode(v) for v in np.asarray(array, dtype=np.float64).reshape(-1)]}
        for key, (dtype, array) in tensors.items()
    }


def path(name):
    return os.path.join(OUT, name)


NUMPY_DTYPES = {
    'f2': 'float16', 'f4': 'float32', 'f8': 'float64', 'i1': 'int8', 'i2': 'int16', 'i4': 'int32', 'i8': 'int64',
    'u1': 'uint8', 'u2': 'uint16', 'u4': 'uint32', 'u8': 'uint64', 'b1': 'bool',
}


def sample(code, shape):
    if code == 'b1':
        return rng.integers(0, 2, size=shape).astype(bool)
    if code[0] == 'f':
        return (rng.standard_normal(shape) * 3).astype(code)
    info = np.iinfo(np.dtype(code))
    values = rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(code)
    values.reshape(-1)[0] = info.min if code[0] == 'i' else info.max  # the extremes of the type
    return values


def npy_files():
    for code, dtype in NUMPY_DTYPES.items():
        for order in ('<', '>') if code not in ('i1', 'u1', 'b1') else ('|',):
            array = sample(code, (2, 3)).astype(np.dtype(code).newbyteorder(order) if order != '|' else code)
            name = f'npy/{dtype}{"-be" if order == ">" else ""}.npy'
            np.save(path(name), array)
            record(name, {'array': (dtype, array)})
    for name, array in {
        'npy/fortran-2d.npy': np.asfortranarray(sample('f8', (3, 4))),
        'npy/fortran-3d.npy': np.asfortranarray(sample('f4', (2, 3, 4))),
        'npy/scalar.npy': np.array(2.5),
        'npy/vector.npy': sample('f8', (5,)),
        'npy/rank3.npy': sample('f4', (2, 2, 3)),
        'npy/rank4.npy': sample('f4', (1, 1, 3, 2)),
        'npy/specials.npy': np.array([[np.nan, np.inf], [-np.inf, -0.0]]),
        'npy/empty.npy': np.zeros((0, 3), dtype=np.float32),
    }.items():
        np.save(path(name), array)
        record(name, {'array': (NUMPY_DTYPES[array.dtype.str[1:]], array)})
    array = sample('f4', (2, 2))
    with open(path('npy/version2.npy'), 'wb') as f:
        np.lib.format.write_array(f, array, version=(2, 0))
    record('npy/version2.npy', {'array': ('float32', array)})


def npz_files():
    arrays = {'X': sample('f4', (3, 4)), 'W_Q': sample('f8', (4, 2)), 'mask': sample('b1', (3, 3)), 'big_endian': sample('f4', (2, 2)).astype('>f4')}
    np.savez(path('npz/stored.npz'), **arrays)
    np.savez_compressed(path('npz/compressed.npz'), **arrays)
    for name in ('npz/stored.npz', 'npz/compressed.npz'):
        record(name, {key: (NUMPY_DTYPES[value.dtype.str[1:]], value) for key, value in arrays.items()})


# ---------------------------------------------------------------- safetensors, by the format

TORCH_NAMES = {
    torch.float16: 'float16', torch.bfloat16: 'bfloat16', torch.float32: 'float32', torch.float64: 'float64', torch.int8: 'int8',
    torch.int16: 'int16', torch.int32: 'int32', torch.int64: 'int64', torch.uint8: 'uint8', torch.bool: 'bool',
}


def write_safetensors(name, tensors, metadata):
    with open(path(name), 'wb') as f:
        write_safetensors_to(f, tensors, metadata)
    record_torch(name, tensors)


def record_torch(name, tensors):
    record(name, {key: (TORCH_NAMES[t.dtype], t.detach().to(torch.float64).numpy()) for key, t in tensors.items()})


# ---------------------------------------------------------------- models and their attention

def mha_files():
    """nn.MultiheadAttention's own state dict (packed in_proj_weight) and its own forward."""
    embed, heads = 4, 2
    mha = torch.nn.MultiheadAttention(embed, heads)
    with torch.no_grad():
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    x = torch.randn(3, embed)
    torch.save(mha.state_dict(), path('pt/mha.pt'))
    np.save(path('acts.npy'), x.numpy())
    record_torch('pt/mha.pt', mha.state_dict())
    record('acts.npy', {'array': ('float32', x.numpy())})
    # In float64 from the float32 numbers the files hold, as the engine computes.
    x64 = x.double()
    out, weights = mha.double()(x64, x64, x64, need_weights=True, average_attn_weights=False)
    expected['attention']['mha'] = {
        'file': 'pt/mha.pt', 'x': 'acts.npy', 'heads': heads, 'layer': '',
        'weights': weights.detach().numpy().tolist(),
        # The engine's output is Concat(heads)·W_O; PyTorch's adds out_proj.bias after that.
        'output': (out - mha.out_proj.bias).detach().numpy().tolist(),
    }


class Layer(torch.nn.Module):
    """The Hugging Face / Llama naming: q_proj, k_proj, v_proj (with biases), o_proj (without)."""

    def __init__(self, d, bias=True):
        super().__init__()
        self.q_proj = torch.nn.Linear(d, d, bias=bias)
        self.k_proj = torch.nn.Linear(d, d, bias=bias)
        self.v_proj = torch.nn.Linear(d, d, bias=bias)
        self.o_proj = torch.nn.Linear(d, d, bias=False)

    def attention(self, x, heads):
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        split = lambda t: t.view(t.shape[0], heads, -1).transpose(0, 1)
        scores = split(q) @ split(k).transpose(1, 2) / math.sqrt(q.shape[1] // heads)
        weights = torch.softmax(scores, dim=-1)
        concat = (weights @ split(v)).transpose(0, 1).reshape(x.shape[0], -1)
        return weights, self.o_proj(concat)


def model_files():
    d, heads = 6, 3
    model = torch.nn.Module()
    model.layers = torch.nn.ModuleList([Layer(d), Layer(d)])
    model.double()
    # model.layers.N.self_attn.q_proj.weight, as Llama checkpoints name them.
    state = {'model.' + key.replace('.', '.self_attn.', 2).replace('.self_attn.', '.', 1): value for key, value in model.state_dict().items()}
    x = torch.randn(4, d, dtype=torch.float64)
    state_x = {**state, 'hidden_states': x}
    torch.save(state_x, path('pt/llama.pt'))
    record_torch('pt/llama.pt', state_x)
    write_safetensors('model.safetensors', {k: v.float() for k, v in state_x.items()}, {'format': 'pt', 'heads': str(heads)})
    for index, layer in enumerate(model.layers):
        weights, output = layer.attention(x, heads)
        expected['attention'][f'llama-layer{index}'] = {
            'file': 'pt/llama.pt', 'x': 'hidden_states', 'heads': heads, 'layer': f'model.layers.{index}.self_attn',
            'weights': weights.detach().numpy().tolist(), 'output': output.detach().numpy().tolist(),
        }
    # Same numbers through float32 safetensors: the reference is computed from what the file holds.
    layer = Layer(d).double()
    layer.load_state_dict({k.split('self_attn.')[1]: v.float().double() for k, v in state.items() if k.startswith('model.layers.1.')})
    weights, output = layer.attention(x.float().double(), heads)
    expected['attention']['safetensors-layer1'] = {
        'file': 'model.safetensors', 'x': 'hidden_states', 'heads': heads, 'layer': 'model.layers.1.self_attn',
        'weights': weights.detach().numpy().tolist(), 'output': output.detach().numpy().tolist(),
    }


def torch_dtype_files():
    base = torch.randn(3, 4)
    tensors = {
        'half': torch.randn(2, 3).half(),
        'bfloat16': torch.randn(2, 3).bfloat16(),
        'double': torch.randn(2, 3, dtype=torch.float64),
        'long': torch.tensor([[-(2 ** 40), 7], [3, 2 ** 40]]),
        'int': torch.tensor([[-5, 6]], dtype=torch.int32),
        'short': torch.tensor([-300, 300], dtype=torch.int16),
        'char': torch.tensor([-7, 7], dtype=torch.int8),
        'byte': torch.tensor([0, 255], dtype=torch.uint8),
        'bool': torch.tensor([[True, False], [False, True]]),
        'transposed': base.t(),  # a non-contiguous view: strides (1, 4)
        'sliced': base[1:, 1:3],  # a view with an offset into the shared storage
        'scalar': torch.tensor(1.5),
        'rank4': torch.randn(2, 1, 2, 3),
    }
    torch.save(tensors, path('pt/dtypes.pt'))
    record_torch('pt/dtypes.pt', tensors)
    write_safetensors('dtypes.safetensors', {k: v.contiguous() for k, v in tensors.items() if k not in ('transposed', 'sliced')}, {'note': 'every dtype'})
    nested = {'model': torch.nn.Linear(2, 2).state_dict(), 'step': 3, 'optimizer': {'lr': 0.1, 'betas': (0.9, 0.99)}, 'param': torch.nn.Parameter(torch.ones(2, 2))}
    torch.save(nested, path('pt/nested.pt'))
    record_torch('pt/nested.pt', {'model.weight': nested['model']['weight'], 'model.bias': nested['model']['bias'], 'param': nested['param']})
    torch.save({'w': torch.arange(4.0)}, path('pt/legacy.pt'), _use_new_zipfile_serialization=False)


def big_endian_checkpoint():
    """torch.save writes byteorder=big only on big-endian machines: rewrite a real checkpoint as one would be."""
    tensors = {'a': torch.randn(2, 3), 'b': torch.randn(3, dtype=torch.float64), 'h': torch.randn(2).half()}
    torch.save(tensors, path('pt/little.pt'))
    with zipfile.ZipFile(path('pt/little.pt')) as source, zipfile.ZipFile(path('pt/big-endian.pt'), 'w', zipfile.ZIP_STORED) as target:
        storage_dtype = {}
        for key, t in tensors.items():
            storage_dtype[str(list(tensors).index(key))] = t.numpy().dtype
        for info in source.infolist():
            data = source.read(info)
            name = info.filename.split('/', 1)[1]
            if name.startswith('data/'):
                data = np.frombuffer(data, dtype=storage_dtype[name[5:]]).byteswap().tobytes()
            if name != 'byteorder':
                target.writestr('big-endian/' + name, data)
        target.writestr('big-endian/byteorder', 'big')
    os.remove(path('pt/little.pt'))
    record_torch('pt/big-endian.pt', tensors)


class Hostile:
    def __reduce__(self):
        return (os.system, ('echo attention-lens-was-here',))


def hostile_files():
    """Checkpoints whose pickle would run code if unpickled: the reader must refuse them by name."""
    torch.save({'w': torch.ones(2)}, path('pt/template.pt'))
    with zipfile.ZipFile(path('pt/template.pt')) as source:
        members = {info.filename.split('/', 1)[1]: source.read(info) for info in source.infolist()}
    os.remove(path('pt/template.pt'))
    payloads = {
        'hostile-os-system.pt': pickle.dumps({'w': Hostile()}, protocol=2),
        'hostile-eval.pt': b'\x80\x02cbuiltins\neval\nq\x00X\x04\x00\x00\x001+1\x85R.',
        'hostile-newobj.pt': pickle.dumps({'w': zipfile.ZipInfo('x')}, protocol=2),
    }
    for name, payload in payloads.items():
        with zipfile.ZipFile(path(f'pt/{name}'), 'w') as target:
            for member, data in members.items():
                target.writestr(f'archive/{member}', payload if member == 'data.pkl' else data)


EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'examples', 'tensors')


def example_files():
    """examples/tensors/: one attention layer (d_model 8, 2 heads, no biases) and five tokens' activations."""
    d, heads = 8, 2
    layer = Layer(d, bias=False)
    x = torch.randn(5, d)
    state = {f'layers.0.self_attn.{key}': value for key, value in layer.state_dict().items()}
    write_safetensors('../../../examples/tensors/attention.safetensors', state, {'format': 'pt', 'num_attention_heads': str(heads)})
    np.save(os.path.join(EXAMPLES, 'acts.npy'), x.numpy())
    weights, output = layer.double().attention(x.double(), heads)
    expected['attention']['example'] = {
        'file': '../../../examples/tensors/attention.safetensors', 'x': '../../../examples/tensors/acts.npy', 'heads': heads,
        'layer': 'layers.0.self_attn', 'weights': weights.detach().numpy().tolist(), 'output': output.detach().numpy().tolist(),
    }
    del expected['files']['../../../examples/tensors/attention.safetensors']


def main():
    for folder in ('npy', 'npz', 'pt'):
        os.makedirs(path(folder), exist_ok=True)
    npy_files()
    npz_files()
    mha_files()
    model_files()
    torch_dtype_files()
    big_endian_checkpoint()
    hostile_files()
    os.makedirs(EXAMPLES, exist_ok=True)
    example_files()
    with open(path('expected.json'), 'w') as f:
        json.dump(expected, f, indent=None, separators=(',', ':'))
        f.write('\n')


if __name__ == '__main__':
    main()
