#!/usr/bin/python3
"""Jupyter notebooks with real outputs, and PyTorch's answer for each (test/fixtures/notebooks/,
examples/12-notebook.ipynb).

Each notebook's code cells are run here in order in one namespace, as a kernel runs them: what a
cell prints becomes its stdout stream output and the value of its last line, if it is an
expression, its execute_result with repr() as text/plain — so the array reprs the notebook
reader must understand (numpy's `array([[...]], dtype=float32)` with wrapped rows, `print` of a
numpy array, torch's `tensor([[...]])`) are numpy's and torch's own, not typed by hand. Sources
and outputs are stored as nbformat 4 writes them: lists of lines.

The reference (`NAME.expected.json`) holds every attention matrix as the notebook's namespace
held it and the attention output PyTorch computes from them (float64).

Run: /usr/bin/python3 scripts/gen_notebooks.py
"""
import ast
import contextlib
import io
import json
import os

import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
FIXTURES = os.path.join(ROOT, 'test', 'fixtures', 'notebooks')

# W_K of the spanning notebook lives only in a Markdown cell (LaTeX), not in its code.
SPANNING_W_K = [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]


def latex(name, rows):
    body = r' \\ '.join(' & '.join(f'{x:g}' for x in row) for row in rows)
    return f'$$ {name} = \\begin{{bmatrix}} {body} \\end{{bmatrix}} $$'


NOTEBOOKS = {
    'spanning': {
        'cells': [
            ('markdown', '# One problem over four cells\n\n<!-- attention: name="spanning" -->\nThe input comes first.'),
            ('code', 'import numpy as np\n\nX = np.array([[1.0, 0.0, 1.0, 0.0],\n              [0.0, 2.0, 0.0, 2.0],\n              [1.0, 1.0, 1.0, 1.0]])'),
            ('markdown', 'The key projection, written as LaTeX:\n\n' + latex('W_K', SPANNING_W_K)),
            ('code', 'W_Q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])'),
            ('code', 'W_V = np.eye(4)[:, :2] * 2\nW_V'),
        ],
        'roles': {'X': 'X', 'W_Q': 'W_Q', 'W_K': SPANNING_W_K, 'W_V': 'W_V'},
    },
    'outputs': {
        'cells': [
            ('code', 'import numpy as np\nimport torch'),
            ('code', 'X = (np.arange(24, dtype=np.float32).reshape(3, 8) - 12) / 8\nX'),
            ('code', 'W_Q = torch.arange(16, dtype=torch.float32).reshape(8, 2) / 16\nprint(W_Q)'),
            ('code', 'W_K = np.ones((8, 2)) / 4\nW_V = torch.tile(torch.eye(2, dtype=torch.float64), (4, 1))\nprint(W_K)\nprint(W_V)'),
            ('code', 'causal = torch.tril(torch.ones(3, 3, dtype=torch.bool))\nprint("mask =", causal.numpy())'),
            ('code', 'E_long = np.linspace(0, 1, 2000).reshape(1000, 2)\nE_long'),
        ],
        'roles': {'X': 'X', 'W_Q': 'W_Q', 'W_K': 'W_K', 'W_V': 'W_V', 'mask': 'causal'},
    },
}

EXAMPLE = {
    'cells': [
        ('markdown', '# Attention in a notebook\n\n'
         'Attention Lens reads a notebook cell by cell, in order: `X` below, the projections in the '
         'cells after it, and arrays a cell *printed* (`W_V` is drawn at random, so its numbers '
         'exist only in the output under its cell). Together they form one attention problem: '
         'use **Run attention** above `X`.'),
        ('code', 'import numpy as np\n\n# attention: name="notebook"\n'
         'X = np.array([[1.0, 0.0, 1.0, 0.0],\n              [0.0, 2.0, 0.0, 2.0],\n              [1.0, 1.0, 1.0, 1.0]])'),
        ('markdown', 'The query and key projections, $d_{model} = 4$ and $d_k = 2$:'),
        ('code', 'W_Q = np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=float)\n'
         'W_K = np.array([[0, 1], [1, 0], [0, 1], [1, 0]], dtype=float)'),
        ('markdown', 'The value projection, drawn at random; Attention Lens reads the printed array:'),
        ('code', 'rng = np.random.default_rng(7)\nW_V = rng.integers(-2, 3, size=(4, 2)).astype(float)\nW_V'),
        ('markdown', "numpy's own answer, to compare with the panel's output:"),
        ('code', 'def softmax(s):\n    e = np.exp(s - s.max(axis=1, keepdims=True))\n    return e / e.sum(axis=1, keepdims=True)\n\n'
         'Q, K, V = X @ W_Q, X @ W_K, X @ W_V\nA = softmax(Q @ K.T / np.sqrt(K.shape[1]))\nprint(A @ V)'),
    ],
    'roles': {'X': 'X', 'W_Q': 'W_Q', 'W_K': 'W_K', 'W_V': 'W_V'},
    # An edit the editor tests make in cell 4 (index 3), and what PyTorch computes after it.
    'edit': (3, 'W_Q = np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=float)\n'
                'W_K = np.array([[1, 0], [0, 1], [0, 1], [1, 0]], dtype=float)'),
}


def lines(text):
    """nbformat's multiline string: a list of lines, each but the last ending in a newline."""
    return text.splitlines(keepends=True)


def run(cells):
    """Runs the code cells in one namespace; returns the nbformat cells and the namespace."""
    namespace = {}
    count = 0
    notebook_cells = []
    for index, (kind, source) in enumerate(cells):
        cell_id = f'cell-{index + 1}'
        if kind == 'markdown':
            notebook_cells.append({'cell_type': 'markdown', 'id': cell_id, 'metadata': {}, 'source': lines(source)})
            continue
        count += 1
        tree = ast.parse(source)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            exec(compile(tree, '<cell>', 'exec'), namespace)
            value = eval(compile(ast.Expression(last.value), '<cell>', 'eval'), namespace) if last else None
        outputs = []
        if stdout.getvalue():
            outputs.append({'output_type': 'stream', 'name': 'stdout', 'text': lines(stdout.getvalue())})
        if value is not None:
            outputs.append({'output_type': 'execute_result', 'execution_count': count, 'metadata': {},
                            'data': {'text/plain': lines(repr(value))}})
        notebook_cells.append({'cell_type': 'code', 'id': cell_id, 'execution_count': count, 'metadata': {},
                               'outputs': outputs, 'source': lines(source)})
    return notebook_cells, namespace


def as_float64(value):
    if isinstance(value, torch.Tensor):
        value = value.numpy()
    return np.asarray(value, dtype=np.float64)


def reference(namespace, roles):
    """The matrices as the notebook held them and PyTorch's attention output from them."""
    matrices = {role: as_float64(namespace[source] if isinstance(source, str) else source) for role, source in roles.items()}
    X = torch.from_numpy(matrices['X'])
    q, k, v = (X @ torch.from_numpy(matrices[w]) for w in ('W_Q', 'W_K', 'W_V'))
    scores = q @ k.T / k.shape[1] ** 0.5
    if 'mask' in matrices:  # boolean, True = may attend (scaled_dot_product_attention's convention)
        scores = scores.masked_fill(torch.from_numpy(matrices['mask'] == 0), float('-inf'))
    weights = torch.softmax(scores, dim=1)
    return {'matrices': {role: m.tolist() for role, m in matrices.items()}, 'weights': weights.tolist(), 'output': (weights @ v).tolist()}


def notebook(cells):
    return {
        'cells': cells,
        'metadata': {
            'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'},
            'language_info': {'name': 'python'},
        },
        'nbformat': 4,
        'nbformat_minor': 5,
    }


def write_json(path, value):
    with open(path, 'w') as f:
        json.dump(value, f, indent=1)
        f.write('\n')


def main():
    os.makedirs(FIXTURES, exist_ok=True)
    named = {**NOTEBOOKS, 'example': EXAMPLE}
    for name, spec in named.items():
        cells, namespace = run(spec['cells'])
        target = os.path.join(ROOT, 'examples', '12-notebook.ipynb') if name == 'example' else os.path.join(FIXTURES, f'{name}.ipynb')
        write_json(target, notebook(cells))
        expected = reference(namespace, spec['roles'])
        if 'edit' in spec:
            index, source = spec['edit']
            edited = [(kind, source if k == index else text) for k, (kind, text) in enumerate(spec['cells'])]
            expected['edit'] = {'cell': index, 'source': source, **reference(run(edited)[1], spec['roles'])}
        write_json(os.path.join(FIXTURES, f'{name}.expected.json'), expected)
        print(f'wrote {os.path.relpath(target, ROOT)}')


if __name__ == '__main__':
    main()
