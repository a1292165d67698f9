#!/usr/bin/python3
"""Saved attentions as people write them, and what the heads views must read from them
(test/fixtures/heads/saved/).

Attention weights come from real softmax over random scores (PyTorch), then are written by the
writers users use: torch.save of a stacked tensor [layers, batch, heads, q, k] (torch.stack of
Hugging Face's outputs.attentions), of the tuple itself, of a list and of a dict with input_ids;
numpy.save / savez; safetensors (scripts/safetensors_file.py) with the tokens in its metadata.
expected.json holds each file's weights per layer and head as float64, its tokens, and the pooling
and top-k references (numpy) for the unit tests. Bad inputs: pre-softmax scores, layers whose
shapes disagree. Run again only to change them:
    /usr/bin/python3 scripts/gen_saved_attentions.py
    /usr/bin/python3 scripts/gen_saved_attentions.py --bench [DIR] [--tokens N]
        12 × 12 × N² (N = 1024 unless given) for bench/heads.mjs, into DIR/N/ (default
        test-output/heads-bench/N/, not committed), with its own tokens.json beside it
"""
import json
import math
import os
import sys

import numpy as np
import torch

from safetensors_file import write_safetensors

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
OUT = os.path.join(ROOT, 'test', 'fixtures', 'heads', 'saved')
BENCH_DIR = os.path.join(ROOT, 'test-output', 'heads-bench')
LAYERS, HEADS, N = 2, 3, 5
TOKENS = ['The', 'cat', 'sat', 'on', 'it']
VOCAB = {'[UNK]': 0, 'The': 1, 'cat': 2, 'sat': 3, 'on': 4, 'it': 5}


def attentions(generator, layers, batch, heads, q, k, causal=True, dtype=torch.float32):
    """Per-layer weights [batch, heads, q, k]: a softmax of random scores, causal like a decoder."""
    out = []
    for _ in range(layers):
        scores = torch.randn(batch, heads, q, k, generator=generator, dtype=torch.float64) * 2
        if causal:
            scores = scores.masked_fill(torch.ones(q, k, dtype=torch.bool).triu(k - q + 1), float('-inf'))
        out.append(torch.softmax(scores, dim=-1).to(dtype))
    return tuple(out)


def path(*parts):
    full = os.path.join(OUT, *parts)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    return full


def weights_of(layer_tensors):
    """[layer][head] → flat float64 values of batch item 0."""
    return [[t[0, h].to(torch.float64).reshape(-1).tolist() for h in range(t.shape[1])] for t in layer_tensors]


def pooled(matrix, size, mode):
    """The reference pooling: blocks of ceil(q/size) × ceil(k/size) from the top-left, the last partial."""
    q, k = matrix.shape
    rb, cb = max(1, math.ceil(q / size)), max(1, math.ceil(k / size))
    rows, cols = math.ceil(q / rb), math.ceil(k / cb)
    out = np.zeros((rows, cols))
    for r in range(rows):
        for c in range(cols):
            block = matrix[r * rb:(r + 1) * rb, c * cb:(c + 1) * cb]
            out[r, c] = block.max() if mode == 'max' else block.mean()
    return {'rowBlock': rb, 'colBlock': cb, 'rows': rows, 'cols': cols, 'values': out.reshape(-1).tolist()}


def top_keys(matrix, k):
    """Each row's k strongest keys, strongest first, ties to the lower key (a stable sort of −w)."""
    order = np.argsort(-matrix, axis=1, kind='stable')[:, :k]
    return {'keys': order.reshape(-1).tolist(), 'weights': np.take_along_axis(matrix, order, axis=1).reshape(-1).tolist()}


def main():
    generator = torch.Generator().manual_seed(26)
    expected = {'tokens': TOKENS, 'files': {}}
    layers = attentions(generator, LAYERS, 1, HEADS, N, N)
    reference = weights_of(layers)

    def record(name, **extra):
        expected['files'][name] = {'layers': LAYERS, 'heads': HEADS, 'queries': N, 'keys': N, **extra}

    # torch.save, as users write Hugging Face's output_attentions=True.
    torch.save(torch.stack(layers), path('pt', 'stacked.pt'))
    record('pt/stacked.pt')
    torch.save(layers, path('pt', 'tuple.pt'))
    record('pt/tuple.pt')
    torch.save([t[0] for t in layers], path('pt', 'list.pt'))
    record('pt/list.pt')
    batch2 = attentions(generator, LAYERS, 2, HEADS, N, N)
    torch.save(torch.stack(batch2), path('pt', 'batch2.pt'))
    record('pt/batch2.pt', weights=weights_of(batch2))
    # With ids and a tokenizer.json beside (a WordLevel tokenizer: ids name whole words).
    ids = torch.tensor([[VOCAB[t] for t in TOKENS]])
    torch.save({'attentions': layers, 'input_ids': ids}, path('ids', 'attn.pt'))
    tokenizer = {
        'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': [], 'normalizer': None,
        'pre_tokenizer': {'type': 'Whitespace'}, 'post_processor': None, 'decoder': None,
        'model': {'type': 'WordLevel', 'vocab': VOCAB, 'unk_token': '[UNK]'},
    }
    with open(path('ids', 'tokenizer.json'), 'w') as f:
        json.dump(tokenizer, f)
    record('ids/attn.pt', ids=ids[0].tolist(), tokens=TOKENS)
    # numpy: a stacked [layers, heads, q, k] array; savez with one array per layer and tokens.json beside.
    np.save(path('npy', 'stacked.npy'), torch.stack([t[0] for t in layers]).numpy())
    record('npy/stacked.npy')
    np.savez(path('sidecar', 'layers.npz'), **{f'attentions.{i}': t.numpy() for i, t in enumerate(layers)})
    with open(path('sidecar', 'tokens.json'), 'w') as f:
        json.dump(TOKENS, f)
    record('sidecar/layers.npz', tokens=TOKENS)
    # safetensors, float16, one tensor per layer named like a module, tokens in the metadata.
    half = {f'model.layers.{i}.attn': t[0].to(torch.float16) for i, t in enumerate(layers)}
    with open(path('safetensors', 'layers.safetensors'), 'wb') as f:
        write_safetensors(f, half, {'tokens': json.dumps(TOKENS)})
    record('safetensors/layers.safetensors', tokens=TOKENS, weights=weights_of([t.unsqueeze(0) for t in half.values()]))
    # Bad input: scores before the softmax; layers whose shapes disagree.
    np.save(path('bad', 'scores.npy'), (torch.randn(LAYERS, HEADS, N, N, generator=generator) * 2).numpy())
    short = attentions(generator, 1, 1, HEADS, N - 1, N - 1)
    np.savez(path('bad', 'mismatch.npz'), **{'attentions.0': layers[0].numpy(), 'attentions.1': short[0].numpy()})

    expected['weights'] = reference
    # Pooling and top-k on odd sizes, so blocks come out partial.
    odd = attentions(generator, 1, 1, 1, 37, 29, causal=False, dtype=torch.float64)[0][0, 0].numpy()
    expected['pooling'] = {
        'matrix': odd.reshape(-1).tolist(), 'rows': 37, 'cols': 29,
        'cases': [{'size': size, 'mode': mode, **pooled(odd, size, mode)} for size in (8, 29, 64, 5) for mode in ('max', 'mean')],
        'topK': {k: top_keys(odd, k) for k in (1, 3, 29)},
    }
    ties = np.array([[0.25, 0.5, 0.25, 0.0], [0.25, 0.25, 0.25, 0.25]])
    expected['ties'] = {'matrix': ties.reshape(-1).tolist(), 'rows': 2, 'cols': 4, **top_keys(ties, 3)}
    with open(path('expected.json'), 'w') as f:
        json.dump(expected, f, separators=(',', ':'))
        f.write('\n')


def bench(root, n, layers=12, heads=12, formats=('pt',)):
    """Hugging Face's shape for a 12-layer, 12-head model on n tokens: torch.stack(outputs.attentions).
    One folder per n: each file's tokens.json lies beside it. `formats` adds the same stack as
    numpy.save's .npy and as a .safetensors of one tensor per layer (bench/savedRead.ts)."""
    folder = os.path.join(root, str(n))
    os.makedirs(folder, exist_ok=True)
    generator = torch.Generator().manual_seed(1024)
    stem = os.path.join(folder, f'attn-{layers}x{heads}x{n}')
    stack = torch.stack(attentions(generator, layers, 1, heads, n, n))
    if 'pt' in formats:
        torch.save(stack, stem + '.pt')
        print(stem + '.pt')
    if 'npy' in formats:
        np.save(stem + '.npy', stack.numpy())
        print(stem + '.npy')
    if 'safetensors' in formats:
        with open(stem + '.safetensors', 'wb') as f:
            write_safetensors(f, {f'attentions.{layer}': stack[layer].contiguous() for layer in range(layers)}, {})
        print(stem + '.safetensors')
    with open(os.path.join(folder, 'tokens.json'), 'w') as f:
        json.dump([f'tok{i}' for i in range(n)], f)


if __name__ == '__main__':
    if '--bench' in sys.argv:
        args = sys.argv[sys.argv.index('--bench') + 1:]
        tokens = 1024
        if '--tokens' in args:
            at = args.index('--tokens')
            tokens = int(args[at + 1])
            del args[at:at + 2]
        formats = ('pt',)
        if '--formats' in args:
            at = args.index('--formats')
            formats = tuple(args[at + 1].split(','))
            del args[at:at + 2]
        bench(args[0] if args else BENCH_DIR, tokens, formats=formats)
    else:
        main()
