#!/usr/bin/python3
"""Reference values for the head analyses (src/core/heads/): numpy implementations of every
definition of issue 27 — the six head scores, attention rollout, attention flow (a plain
Edmonds–Karp max-flow over the layer graph), and the Jensen–Shannon comparison — run on stacks of
attention with planted heads:
  layer 0: a previous-token head, a sink (first-token) head, a causal head of random weights;
  layer 1: an induction head (on a sequence that repeats itself), a duplicate-token head, a
           non-causal head of random weights.
Each case is written twice: float64 weights, and the same weights rounded to float32 (the
expected values are then computed in float64 from the rounded numbers, so 1e-9 holds for both).
A second stack of the same shape (other random weights) is what the comparison compares against;
its B − A of one head is also pooled as the compare view draws it (each block's entry of largest
|B − A|, the first in row-major order on ties).
Small edge cases check the nulls: one token (no previous token), no ids, no repeated token. Two
21-token stacks (causal, and causal but for one head) reach the WebAssembly kernels' partial quads
and panels and their lower-triangular product over several 16-row blocks.

Also the kernels' own references (src/core/heads/kernels.ts): −a·ln a over a sweep of a (float64
from 1e-300 to 1, float32 from 1e-44 to 1, both sides of the kernel's √2/2 split), products of
21 x 21 rollout factors, lower triangular and dense, and the divergence of three pairs of heads of
37 queries × 43 keys (no multiple of a SIMD width) per row, in each dtype: causal-like rows against
full ones, rows masked in both, exact zeros on one side only, weights down to the dtype's smallest,
one-hot rows (ln 2), and equal rows (0).

Writes test/fixtures/heads/references.json and kernels.json (a few tens of kB each).
Run: /usr/bin/python3 scripts/gen_head_references.py
"""
import json
from collections import deque
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / 'test' / 'fixtures' / 'heads'
SCORES = ['previous_token', 'duplicate_token', 'induction', 'first_token', 'entropy', 'local']


# ---- the definitions ---------------------------------------------------------------------------

def mean_or_none(values):
    return float(np.mean(values)) if len(values) > 0 else None


def head_scores(a, ids):
    """The six scores of one head a [n × n]; ids may be None (then the token scores are None)."""
    n = a.shape[0]
    scores = {
        'previous_token': mean_or_none([a[i, i - 1] for i in range(1, n)]),
        'first_token': mean_or_none([a[i, 0] for i in range(n)]),
        'entropy': mean_or_none([-sum(x * np.log(x) for x in a[i] if x > 0) for i in range(n)]),
        'local': mean_or_none([sum(a[i, j] for j in range(n) if abs(i - j) <= 2) for i in range(n)]),
        'duplicate_token': None,
        'induction': None,
    }
    if ids is not None:
        duplicate, induction = [], []
        for i in range(n):
            dup = [j for j in range(i) if ids[j] == ids[i]]
            ind = [j for j in range(1, i) if ids[j - 1] == ids[i]]
            if dup:
                duplicate.append(sum(a[i, j] for j in dup))
            if ind:
                induction.append(sum(a[i, j] for j in ind))
        scores['duplicate_token'] = mean_or_none(duplicate)
        scores['induction'] = mean_or_none(induction)
    return scores


def augmented(stack):
    """Â_l = 0.5·mean_h(A_l) + 0.5·I, rows renormalised; stack [L, H, n, n]."""
    n = stack.shape[-1]
    a = 0.5 * stack.mean(axis=1) + 0.5 * np.eye(n)[None]
    return a / a.sum(axis=-1, keepdims=True)


def rollout(stack):
    layers = augmented(stack)
    r = layers[0]
    for a in layers[1:]:
        r = a @ r
    return r


def max_flow(capacity, source, sink):
    """Edmonds–Karp on a dense capacity matrix."""
    residual = capacity.copy()
    total = 0.0
    while True:
        parent = {source: None}
        queue = deque([source])
        while queue and sink not in parent:
            v = queue.popleft()
            for w in np.nonzero(residual[v] > 1e-12)[0]:
                if w not in parent:
                    parent[w] = v
                    queue.append(w)
        if sink not in parent:
            return total
        path, w = [], sink
        while parent[w] is not None:
            path.append((parent[w], w))
            w = parent[w]
        pushed = min(residual[v, w] for v, w in path)
        for v, w in path:
            residual[v, w] -= pushed
            residual[w, v] += pushed
        total += pushed


def attention_flow(stack):
    """Nodes (l, i), l = 0…L; edge (l+1, i) → (l, j) of capacity Â_l[i][j]; rows normalised."""
    layers = augmented(stack)
    count, n = layers.shape[0], layers.shape[-1]
    capacity = np.zeros(((count + 1) * n, (count + 1) * n))
    for l in range(count):
        capacity[(l + 1) * n:(l + 2) * n, l * n:(l + 1) * n] = layers[l]
    flow = np.array([[max_flow(capacity, count * n + i, j) for j in range(n)] for i in range(n)])
    return flow / flow.sum(axis=1, keepdims=True)


def jsd_rows(a, b):
    """Mean over rows of ½KL(a‖m) + ½KL(b‖m), m = (a+b)/2, nats, 0·ln 0 = 0."""
    m = (a + b) / 2
    with np.errstate(divide='ignore', invalid='ignore'):
        ka = np.where(a > 0, a * np.log(a / m), 0.0).sum(axis=1)
        kb = np.where(b > 0, b * np.log(b / m), 0.0).sum(axis=1)
    return float(np.mean(0.5 * ka + 0.5 * kb))


def pooled_difference(a, b, block):
    """B − A in blocks of block × block entries (the last partial): per block, the entry of largest
    |B − A| (first in row-major order), as its difference, A's and B's weights, and flat index."""
    d = b - a
    rows, cols = -(-d.shape[0] // block), -(-d.shape[1] // block)
    out = {'difference': [], 'a': [], 'b': [], 'at': []}
    for r in range(rows):
        for c in range(cols):
            part = np.abs(d[r * block:(r + 1) * block, c * block:(c + 1) * block])
            i, j = np.unravel_index(int(np.argmax(part)), part.shape)
            i, j = r * block + i, c * block + j
            out['difference'].append(float(d[i, j]))
            out['a'].append(float(a[i, j]))
            out['b'].append(float(b[i, j]))
            out['at'].append(int(i * d.shape[1] + j))
    return out


# ---- planted stacks ----------------------------------------------------------------------------

def softmax_rows(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def causal_softmax(s):
    n = s.shape[0]
    return softmax_rows(np.where(np.tril(np.ones((n, n))) > 0, s, -np.inf))


def planted_stack(rng, ids):
    n = len(ids)
    noise = lambda: rng.normal(0.0, 0.5, (n, n))
    previous = noise()
    previous[np.arange(1, n), np.arange(n - 1)] += 6.0
    sink = noise()
    sink[:, 0] += 5.0
    induction = noise()
    duplicate = noise()
    for i in range(n):
        for j in range(1, i):
            if ids[j - 1] == ids[i]:
                induction[i, j] += 6.0
        for j in range(i):
            if ids[j] == ids[i]:
                duplicate[i, j] += 6.0
    return np.array([
        [causal_softmax(previous), causal_softmax(sink), causal_softmax(noise())],
        [causal_softmax(induction), causal_softmax(duplicate), softmax_rows(noise())],
    ])


def random_stack(rng, layers, heads, n):
    return np.array([[causal_softmax(rng.normal(0.0, 1.5, (n, n))) for _ in range(heads)] for _ in range(layers)])


def expected(stack, ids, other=None, flow=False):
    out = {
        'scores': {name: [[head_scores(stack[l, h], ids)[name] for h in range(stack.shape[1])] for l in range(stack.shape[0])] for name in SCORES},
        'rollout': rollout(stack).tolist(),
    }
    if flow:
        out['flow'] = attention_flow(stack).tolist()
    if other is not None:
        out['divergence'] = [[jsd_rows(stack[l, h], other[l, h]) for h in range(stack.shape[1])] for l in range(stack.shape[0])]
        out['difference_1_0'] = (other[1, 0] - stack[1, 0]).tolist()
        out['difference_1_0_blocks_of_4'] = pooled_difference(stack[1, 0], other[1, 0], 4)
    return out


def case(name, stack, ids, dtype, other=None, flow=False):
    stack = stack.astype(dtype).astype(np.float64)
    if other is not None:
        other = other.astype(dtype).astype(np.float64)
    return {
        'name': name,
        'dtype': np.dtype(dtype).name,
        'ids': ids,
        'weights': stack.tolist(),
        **({'other': other.tolist()} if other is not None else {}),
        'expected': expected(stack, ids, other, flow),
    }


def main():
    rng = np.random.default_rng(27)
    half = [5, 9, 2, 7, 5, 3]  # one repeat inside the first half, so duplicate and induction differ
    ids = [0] + half + half
    stack = planted_stack(rng, ids)
    other = random_stack(rng, *stack.shape[:3])
    cases = [
        case('planted', stack, ids, np.float64, other, flow=True),
        case('planted-float32', stack, ids, np.float32, other),
        case('no-ids', stack, None, np.float64),
        case('no-repeat', random_stack(rng, 1, 2, 6), [4, 1, 8, 6, 2, 3], np.float64),
        case('one-token', np.ones((2, 1, 1, 1)), [7], np.float64),
        case('flow-bidirectional', np.array([[softmax_rows(rng.normal(0.0, 1.0, (5, 5))) for _ in range(2)] for _ in range(3)]), None, np.float64, flow=True),
    ]
    ids21 = [int(i) for i in rng.integers(0, 6, 21)]
    mixed = random_stack(rng, 3, 2, 21)
    mixed[1, 1] = softmax_rows(rng.normal(0.0, 1.5, (21, 21)))
    cases += [
        case('causal-21', random_stack(rng, 3, 2, 21), ids21, np.float32),
        case('mixed-21', mixed, ids21, np.float64),
    ]
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / 'references.json').write_text(json.dumps({'generator': 'scripts/gen_head_references.py', 'cases': cases}) + '\n')
    print(f'wrote {OUT / "references.json"}: {len(cases)} cases')
    kernels = kernel_references(rng)
    (OUT / 'kernels.json').write_text(json.dumps({'generator': 'scripts/gen_head_references.py', **kernels}) + '\n')
    print(f'wrote {OUT / "kernels.json"}: {len(kernels["entropy"]["float64"]["a"])} + {len(kernels["entropy"]["float32"]["a"])} values, {len(kernels["products"])} products, '
          f'{len(kernels["divergence"]["float64"]["a"])} pairs of heads')


def neg_a_log_a(a):
    """−a·ln a in float64, 0 at 0."""
    a = np.asarray(a, dtype=np.float64)
    return np.where(a > 0, -a * np.log(np.where(a > 0, a, 1.0)), 0.0)


def kernel_references(rng):
    split = np.sqrt(0.5)
    around = lambda x, dtype: [float(np.nextafter(dtype(x), dtype(0)) if k < 0 else np.nextafter(dtype(x), dtype(2)) if k > 0 else dtype(x)) for k in (-1, 0, 1)]
    f64 = np.concatenate([np.logspace(-300, 0, 1200), rng.uniform(0.0, 1.0, 300), around(split, np.float64), around(1.0, np.float64)[:2],
                          2.0 ** -np.arange(0, 1000, 37), [0.0]])
    f32 = np.concatenate([np.logspace(-44, 0, 1200).astype(np.float32), rng.uniform(0.0, 1.0, 300).astype(np.float32),
                          np.array(around(split, np.float32) + around(1.0, np.float32)[:2], dtype=np.float32), [np.float32(0)]]).astype(np.float64)
    n = 21
    lower = lambda: np.tril(rng.uniform(0.0, 1.0, (n, n)))
    dense = lambda: rng.uniform(0.0, 1.0, (n, n))
    products = []
    for name, a, b in [('lower', lower(), lower()), ('dense', dense(), dense())]:
        products.append({'name': name, 'n': n, 'a': a.tolist(), 'b': b.tolist(), 'product': (a @ b).tolist()})
    return {
        'entropy': {'float64': {'a': f64.tolist(), 'expected': neg_a_log_a(f64).tolist()},
                    'float32': {'a': f32.tolist(), 'expected': neg_a_log_a(f32).tolist()}},
        'products': products,
        'divergence': divergence_references(rng),
    }


def jsd_per_row(a, b):
    """Per row ½KL(a‖m) + ½KL(b‖m), m = (a+b)/2, nats, 0·ln 0 = 0 (jsd_rows without the mean)."""
    m = (a + b) / 2
    with np.errstate(divide='ignore', invalid='ignore'):
        ka = np.where(a > 0, a * np.log(a / m), 0.0).sum(axis=1)
        kb = np.where(b > 0, b * np.log(b / m), 0.0).sum(axis=1)
    return 0.5 * ka + 0.5 * kb


def divergence_references(rng, queries=37, keys=43, heads=3):
    """Pairs of heads [heads, queries, keys] (A and B) and their divergence per row, per dtype."""
    def rows(scores, keep):
        e = np.where(keep, np.exp(scores - scores.max(axis=1, keepdims=True)), 0.0)
        return e / e.sum(axis=1, keepdims=True)
    j, i = np.meshgrid(np.arange(keys), np.arange(queries))
    ones = np.ones((queries, keys), dtype=bool)
    a, b = np.zeros((heads, queries, keys)), np.zeros((heads, queries, keys))
    # Head 0: rows ending at a diagonal (their zero tails skipped) against full rows.
    a[0], b[0] = rows(rng.normal(0, 2, (queries, keys)), j <= i + 6), rows(rng.normal(0, 2, (queries, keys)), ones)
    # Head 1: exact zeros scattered on one side, the other, or both.
    a[1] = rows(rng.normal(0, 2, (queries, keys)), rng.uniform(size=(queries, keys)) > 0.3)
    b[1] = rows(rng.normal(0, 2, (queries, keys)), rng.uniform(size=(queries, keys)) > 0.3)
    # Head 2: B equal to A but in some rows, where it moves a little; one-hot rows apart.
    a[2] = rows(rng.normal(0, 3, (queries, keys)), j <= i)
    b[2] = a[2]
    moved = [3, 10, 11, 30]
    b[2, moved] = rows(np.log(np.maximum(a[2, moved], 1e-300)) + rng.normal(0, 0.01, (len(moved), keys)), a[2, moved] > 0)
    a[2, 20], b[2, 20] = np.eye(keys)[4], np.eye(keys)[41]
    # Rows masked in both (all zero), and rows with a weight at the dtype's smallest against a large one.
    a[:, [7, 36]] = b[:, [7, 36]] = 0.0
    out = {}
    for dtype, tiny in [(np.float64, 1e-300), (np.float32, 1e-44)]:
        x, y = a.copy(), b.copy()
        x[1, 15] = 0.0
        x[1, 15, [0, 40]] = [1.0 - tiny, tiny]
        y[1, 15] = 0.0
        y[1, 15, [0, 40, 41]] = [0.5, 0.25, 0.25]
        x, y = x.astype(dtype).astype(np.float64), y.astype(dtype).astype(np.float64)
        per_row = np.array([jsd_per_row(x[h], y[h]) for h in range(heads)])
        out[np.dtype(dtype).name] = {'a': x.tolist(), 'b': y.tolist(), 'rows': per_row.tolist(), 'means': per_row.mean(axis=1).tolist()}
    return out


if __name__ == '__main__':
    main()
