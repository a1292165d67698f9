"""Reference values for the end-to-end tests: what the panel must show for the examples the e2e
tests open, computed with numpy (float64) from the matrices in the example files themselves.

Run with Debian's python3 (`/usr/bin/python3 scripts/gen_e2e_expected.py`); writes
test/e2e/expected.json, which is committed so that the tests themselves need no Python.
Only the plain multi-head case is handled (no mask, default 1/sqrt(d_k) scale, heads split
column-wise as PyTorch's nn.MultiheadAttention does): the examples the e2e tests use; and the
sliding-window example (causal, window 3, one sink), whose mask is written here from its rule.
"""
import ast
import json
import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ['01-worked-example.md', '04-multi-head.md']


def read_example(path):
    """The `NAME = [[…]]` Python literals and the `heads=` option of one example file."""
    text = path.read_text(encoding='utf-8')
    values = {}
    for match in re.finditer(r'^(\w+) = (\[.*?\])\s*$', text, re.MULTILINE | re.DOTALL):
        values[match.group(1)] = ast.literal_eval(match.group(2))
    heads = re.search(r'heads=(\d+)', text)
    return values, int(heads.group(1)) if heads else 1


def attention(values, heads):
    x = np.array(values['X'], dtype=np.float64)
    wq, wk, wv = (np.array(values[name], dtype=np.float64) for name in ('W_Q', 'W_K', 'W_V'))
    result = []
    for q, k, v in zip(*(np.split(x @ w, heads, axis=1) for w in (wq, wk, wv))):
        scores = q @ k.T
        scaled = scores / np.sqrt(q.shape[1])
        exp = np.exp(scaled - scaled.max(axis=1, keepdims=True))
        weights = exp / exp.sum(axis=1, keepdims=True)
        result.append({'scores': scores.tolist(), 'scaled': scaled.tolist(), 'weights': weights.tolist()})
    return result


def sliding_window(values, window, sinks):
    """Causal attention where query i sees keys i - window < j <= i and the first `sinks` keys."""
    x = np.array(values['X'], dtype=np.float64)
    q, k, v = (x @ np.array(values[name], dtype=np.float64) for name in ('W_Q', 'W_K', 'W_V'))
    n = x.shape[0]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    visible = (j <= i) & ((i - j < window) | (j < sinks))
    scaled = np.where(visible, q @ k.T / np.sqrt(q.shape[1]), -np.inf)
    exp = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    weights = exp / exp.sum(axis=1, keepdims=True)
    return {'visible': visible.astype(int).tolist(), 'weights': weights.tolist(), 'output': (weights @ v).tolist()}


def main():
    expected = {}
    for name in EXAMPLES:
        values, heads = read_example(ROOT / 'examples' / name)
        expected[name] = {'tokens': values.get('tokens'), 'heads': attention(values, heads)}
    values, _ = read_example(ROOT / 'examples' / '09-sliding-window.md')
    expected['09-sliding-window.md'] = sliding_window(values, window=3, sinks=1)
    out = ROOT / 'test' / 'e2e' / 'expected.json'
    out.write_text(json.dumps(expected, indent=1) + '\n', encoding='utf-8')
    print(f'wrote {out.relative_to(ROOT)}')


if __name__ == '__main__':
    main()
