#!/usr/bin/python3
"""The hand-built 2-layer attention-only transformer of examples/13-induction-head.md, whose
layer-0 previous-token head and layer-1 head compose into an induction head by construction.

Residual stream (d_model = 3V + P): [ token one-hot (V) | position one-hot (P) | previous token (V) | output (V) ].
- Layer 0, head 0 (previous token): query = c·pos(i), key = c·pos(j + 1), so only j = i − 1 scores
  c²; its value copies the token one-hot and W_O writes it into the "previous token" block.
- Layer 1, head 1 (induction): query = c·token(i), key = c·previous(j), so it scores c² exactly
  where t_{j−1} = t_i — the token after an earlier copy of the current one; it writes that
  token into the output block (what the model would predict).
- Layer 0 head 1 and layer 1 head 0 have zero queries and keys (uniform causal attention) and
  write nothing: the probe must tell the induction head from them.
c is chosen so that a match scores 16 after the engine's 1/√d_k scaling.

Writes examples/13-induction-head.json (the weights) and test/fixtures/heads/induction-example.json
(numpy's forward on a fixed sequence: every head's attention, for the unit test).
Run: /usr/bin/python3 scripts/gen_induction_example.py
"""
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
VOCABULARY = 24  # id 0 is BOS
POSITIONS = 72   # BOS + 2·35 tokens at most: the probe's default R = 32 fits
GAP = 16.0       # a match's scaled score above the rest


def blocks():
    token = np.arange(VOCABULARY)
    position = VOCABULARY + np.arange(POSITIONS)
    previous = VOCABULARY + POSITIONS + np.arange(VOCABULARY)
    output = 2 * VOCABULARY + POSITIONS + np.arange(VOCABULARY)
    return token, position, previous, output, 3 * VOCABULARY + POSITIONS


def model():
    token, position, previous, output, width = blocks()
    c0 = np.sqrt(GAP * np.sqrt(POSITIONS))
    c1 = np.sqrt(GAP * np.sqrt(VOCABULARY))
    zero = lambda cols: np.zeros((width, cols))

    q_prev, k_prev, v_copy = zero(POSITIONS), zero(POSITIONS), zero(VOCABULARY)
    q_prev[position, np.arange(POSITIONS)] = c0
    k_prev[position[:-1], np.arange(1, POSITIONS)] = c0  # key of position j sits where query j + 1 looks
    v_copy[token, np.arange(VOCABULARY)] = 1.0
    out0 = np.zeros((2 * VOCABULARY, width))
    out0[np.arange(VOCABULARY), previous] = 1.0  # head 0 writes the previous token; head 1 nothing

    q_ind, k_ind = zero(VOCABULARY), zero(VOCABULARY)
    q_ind[token, np.arange(VOCABULARY)] = c1
    k_ind[previous, np.arange(VOCABULARY)] = c1
    out1 = np.zeros((2 * VOCABULARY, width))
    out1[VOCABULARY + np.arange(VOCABULARY), output] = 1.0  # head 1 writes the token it found

    embedding = np.zeros((VOCABULARY, width))
    embedding[np.arange(VOCABULARY), token] = 1.0
    positional = np.zeros((POSITIONS, width))
    positional[np.arange(POSITIONS), position] = 1.0
    return {
        'bos': 0,
        'token_embedding': embedding,
        'position_embedding': positional,
        'layers': [
            {'to_query': [q_prev, zero(POSITIONS)], 'to_key': [k_prev, zero(POSITIONS)], 'to_value': [v_copy, v_copy], 'to_stream': out0},
            {'to_query': [zero(VOCABULARY), q_ind], 'to_key': [zero(VOCABULARY), k_ind], 'to_value': [v_copy, v_copy], 'to_stream': out1},
        ],
    }


def forward(weights, ids):
    """numpy float64: the residual stream through each layer, every head's causal attention kept."""
    n = len(ids)
    x = weights['token_embedding'][ids] + weights['position_embedding'][:n]
    maps = []
    for layer in weights['layers']:
        outputs, layer_maps = [], []
        for wq, wk, wv in zip(layer['to_query'], layer['to_key'], layer['to_value']):
            s = (x @ wq) @ (x @ wk).T / np.sqrt(wq.shape[1])
            s = np.where(np.tril(np.ones((n, n))) > 0, s, -np.inf)
            a = np.exp(s - s.max(axis=1, keepdims=True))
            a /= a.sum(axis=1, keepdims=True)
            layer_maps.append(a)
            outputs.append(a @ (x @ wv))
        x = x + np.concatenate(outputs, axis=1) @ layer['to_stream']
        maps.append(layer_maps)
    return np.array(maps)


def as_json(value):
    if isinstance(value, np.ndarray):
        return [[0 if x == 0 else float(x) for x in row] for row in value]
    if isinstance(value, list):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value


def main():
    weights = model()
    example = {
        'description': 'A 2-layer attention-only transformer built by hand: layer 0 head 0 attends to the previous token and '
                       'writes it into the residual stream; layer 1 head 1 matches the current token against that, so it '
                       'attends to the token after an earlier copy of the current one: an induction head. '
                       'Written by scripts/gen_induction_example.py; read by examples/13-induction-head.md.',
        **as_json(weights),
    }
    (ROOT / 'examples' / '13-induction-head.json').write_text(json.dumps(example, separators=(',', ':')) + '\n')
    ids = [0, 5, 9, 2, 7, 5, 3, 5, 9, 2, 7, 5, 3]
    fixture = {'generator': 'scripts/gen_induction_example.py', 'ids': ids, 'attention': forward(weights, ids).tolist()}
    (ROOT / 'test' / 'fixtures' / 'heads' / 'induction-example.json').write_text(json.dumps(fixture) + '\n')
    print('wrote examples/13-induction-head.json and test/fixtures/heads/induction-example.json')


if __name__ == '__main__':
    main()
