"""Evaluates the debug reader's Python expressions the way debugpy does (eval in a frame's
namespace) on numpy arrays and torch tensors built here, and prints, as JSON: each answer, the
reference values (numpy's tolist(), as float64), and whether evaluating changed anything — the
namespace's names, an array's numbers or flags, a tensor's grad, or printed a character.
Input on stdin: {"describe": EXPR, "reads": {NAME: EXPR}}."""
import contextlib
import io
import json
import sys

import numpy as np
import torch

rng = np.random.default_rng(11)
values = {
    "f8": rng.standard_normal((3, 4)),
    "f4_fortran": np.asfortranarray(rng.standard_normal((4, 3)).astype(np.float32)),
    "f8_big_endian": rng.standard_normal((2, 3)).astype(">f8"),
    "f2": rng.standard_normal((2, 2)).astype(np.float16),
    "i8": np.arange(-3, 3, dtype=np.int64).reshape(2, 3),
    "u1": np.arange(6, dtype=np.uint8).reshape(3, 2),
    "mask": np.tril(np.ones((3, 3), dtype=bool)),
    "row": np.linspace(-1, 1, 5),
    "sliced": rng.standard_normal((6, 6))[::2, 1::2],
    "grad": torch.randn(3, 4, generator=torch.Generator().manual_seed(5), requires_grad=True),
    "batch": torch.randn(1, 1, 2, 3, generator=torch.Generator().manual_seed(6)),
    "transposed": torch.randn(3, 2, generator=torch.Generator().manual_seed(7)).t(),
    "bf16": torch.randn(2, 2, generator=torch.Generator().manual_seed(8)).to(torch.bfloat16),
    "nested": [[1.5, float("-inf")], [float("nan"), 2]],
    "ragged": [[1, 2], [3]],
    "words": [["a", "b"]],
    "text": "not an array",
    "meta": torch.empty(2, 2, device="meta"),
    "cube": np.zeros((2, 3, 4)),
    "scalar": np.float64(3.0),
    "objects": np.array([[1, "a"]], dtype=object),
    # torch's attention weights: (batch 1, heads, queries, keys), as nn.MultiheadAttention returns them
    "large": np.asfortranarray(rng.standard_normal((257, 300)).astype(np.float32)),
    "large_tensor": torch.randn(300, 257, generator=torch.Generator().manual_seed(10)).t().requires_grad_(),
    "attn_weights": torch.softmax(torch.randn(1, 2, 3, 4, generator=torch.Generator().manual_seed(9)), dim=-1).requires_grad_(),
}


def reference(value):
    if isinstance(value, torch.Tensor):
        if value.device.type != "cpu":
            return None
        value = value.detach().float().numpy() if value.dtype == torch.bfloat16 else value.detach().numpy()
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return np.asarray(value, dtype=np.float64).reshape(-1).tolist()
    return None


def snapshot():
    state = {}
    for name, value in values.items():
        if isinstance(value, torch.Tensor):
            state[name] = (value.requires_grad, value.grad is None, value.dtype, tuple(value.shape), value.is_contiguous())
        elif isinstance(value, np.ndarray):
            state[name] = (value.dtype.str, value.flags.c_contiguous, value.tobytes())
        else:
            state[name] = repr(value)
    return state


request = json.load(sys.stdin)
namespace = dict(values)
names_before = sorted(namespace)
state_before = snapshot()
printed = io.StringIO()
answers = {}
with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
    answers["describe"] = eval(request["describe"], namespace)
    for name, expression in request["reads"].items():
        try:
            answers[name] = eval(expression, namespace)
        except Exception as error:  # what debugpy would answer
            answers[name] = "%s(%r)" % (type(error).__name__, str(error))
namespace.pop("__builtins__", None)
json.dump(
    {
        "answers": answers,
        "reference": {name: reference(value) for name, value in values.items()},
        "unchanged": sorted(namespace) == names_before and snapshot() == state_before,
        "printed": printed.getvalue(),
    },
    sys.stdout,
)
