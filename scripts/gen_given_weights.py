#!/usr/bin/python3
"""Given attention weights (the `attn_weights` role): a note whose weights come from PyTorch, and
what comparing them with the engine's must give.

torch.nn.MultiheadAttention (float32, no biases, 2 heads) runs on X and returns its weights per
head (`need_weights=True, average_attn_weights=False`); its in_proj_weight holds W_Qᵀ, W_Kᵀ, W_Vᵀ
(nn.Linear stores Wᵀ), so the note's W_Q is in_proj_weight[:d].T — the engine's row-vector
convention. numpy float64 computes the same weights from the note's matrices; the expected
"max |given − computed|" per head is numpy's max |torch − numpy|. A second note gives the weights
of a common bug (scores not divided by √d_k), so the difference is large and known.

Writes test/fixtures/given-weights/{mha.md,unscaled.md,expected.json}.
Run: /usr/bin/python3 scripts/gen_given_weights.py
"""
import json
from pathlib import Path

import numpy as np
import torch

OUT = Path(__file__).resolve().parent.parent / 'test' / 'fixtures' / 'given-weights'


def literal(m):
    """Rows as a Python literal, every float64 written exactly (repr round-trips)."""
    return '[' + ', '.join('[' + ', '.join(repr(float(x)) for x in row) + ']' for row in np.asarray(m, dtype=np.float64)) + ']'


def numpy_weights(x, wq, wk, heads, scaled=True):
    q, k = x @ wq, x @ wk
    out = []
    for qh, kh in zip(np.split(q, heads, axis=1), np.split(k, heads, axis=1)):
        s = qh @ kh.T / (np.sqrt(qh.shape[1]) if scaled else 1.0)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        out.append(e / e.sum(axis=1, keepdims=True))
    return out


def main():
    torch.manual_seed(19)
    tokens, d_model, heads = 4, 6, 2
    mha = torch.nn.MultiheadAttention(d_model, heads, bias=False, batch_first=True)
    x = torch.randn(1, tokens, d_model)
    with torch.no_grad():
        _, torch_weights = mha(x, x, x, need_weights=True, average_attn_weights=False)  # (1, heads, L, L)
    w = mha.in_proj_weight.detach().numpy().astype(np.float64)
    wq, wk, wv = w[:d_model].T, w[d_model:2 * d_model].T, w[2 * d_model:].T
    X = x[0].numpy().astype(np.float64)
    given = [torch_weights[0, h].numpy().astype(np.float64) for h in range(heads)]
    reference = numpy_weights(X, wq, wk, heads)
    unscaled = numpy_weights(X, wq, wk, heads, scaled=False)
    # torch's weights must be PyTorch's attention on these very matrices, to float32 precision.
    for g, r in zip(given, reference):
        assert np.max(np.abs(g - r)) < 1e-5, np.max(np.abs(g - r))

    OUT.mkdir(parents=True, exist_ok=True)
    common = [f'X = {literal(X)}', f'W_Q = {literal(wq)}', f'W_K = {literal(wk)}', f'W_V = {literal(wv)}']
    notes = {
        'mha.md': ('torch.nn.MultiheadAttention (float32) weights beside the math', given),
        'unscaled.md': ('weights of a bug: scores not divided by sqrt(d_k)', unscaled),
    }
    expected = {}
    for name, (title, weights) in notes.items():
        lines = [f'# {title}', '', '```python', f'# attention: heads={heads} name="{title}"', *common]
        lines += [f'attn_weights{h + 1} = {literal(weights[h])}' for h in range(heads)]
        lines += ['```', '', 'Only the weights, with nothing to compute them from:', '', '```python',
                  '# attention: name="weights only"']
        lines += [f'attn_weights{h + 1} = {literal(weights[h])}' for h in range(heads)]
        lines += ['```', '']
        (OUT / name).write_text('\n'.join(lines), encoding='utf-8')
        expected[name] = {
            'heads': heads,
            'maxAbsDifference': [float(np.max(np.abs(g - r))) for g, r in zip(weights, reference)],
            'rowSumsMaxError': float(max(np.max(np.abs(g.sum(axis=1) - 1)) for g in weights)),
        }
    (OUT / 'expected.json').write_text(json.dumps(expected, indent=1) + '\n', encoding='utf-8')
    print(f'wrote {", ".join(notes)} and expected.json to {OUT}')


if __name__ == '__main__':
    torch.set_num_threads(1)
    main()
