#!/usr/bin/python3
"""Reference products for the native LinearBackend (test/fixtures/native/linear.json).

Each case is C = A B (+ bias) of float32 inputs, B stored [k, n] (GPT-2's Conv1D) or [n, k]
(nn.Linear's weight): torch.nn.functional.linear computes the nn.Linear layout, numpy float64 the
other, and the two must agree before anything is written. The expected values are float64 products
of the float32 inputs; the tests allow float32 rounding of a k-long sum.

Run: /usr/bin/python3 scripts/gen_native_fixtures.py
"""
import json
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'test', 'fixtures', 'native', 'linear.json')

# (m, k, n, B transposed, bias): odd sizes (edges of every blocking) and a GPT-2-wide product.
CASES = [(5, 7, 3, False, True), (4, 6, 9, True, False), (1, 1, 1, False, False), (2, 768, 5, True, True), (3, 16, 768, False, True)]


def case(rng, m, k, n, transposed, with_bias):
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    w = rng.uniform(-1, 1, (k, n)).astype(np.float32)  # [k, n]
    bias = rng.uniform(-1, 1, n).astype(np.float32) if with_bias else None
    expected = a.astype(np.float64) @ w.astype(np.float64) + (bias.astype(np.float64) if with_bias else 0)
    # PyTorch's own layout: F.linear(a, weight [n, k], bias) in float64.
    torch_bias = torch.from_numpy(bias.astype(np.float64)) if with_bias else None
    by_torch = torch.nn.functional.linear(torch.from_numpy(a.astype(np.float64)), torch.from_numpy(w.T.astype(np.float64).copy()), torch_bias).numpy()
    assert np.max(np.abs(by_torch - expected)) < 1e-12, 'numpy and torch disagree'
    b = w.T.copy() if transposed else w
    return {
        'm': m, 'k': k, 'n': n, 'bTransposed': transposed,
        'a': a.ravel().tolist(), 'b': b.ravel().tolist(),
        'bias': bias.tolist() if with_bias else None,
        'expected': expected.ravel().tolist(),
    }


def main():
    rng = np.random.default_rng(28)
    cases = [case(rng, *spec) for spec in CASES]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, 'w') as f:
        json.dump({'generator': 'scripts/gen_native_fixtures.py', 'cases': cases}, f)
    print(f'{OUT}: {len(cases)} cases')


if __name__ == '__main__':
    main()
