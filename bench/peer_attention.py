"""The peers of `npm run bench`: the same attention on the same inputs in numpy or PyTorch.

Started by bench/run.ts as a child process (/usr/bin/python3: Debian's python3-numpy,
python3-torch and python3-threadpoolctl), one per peer:
  peer_attention.py numpy            numpy, outputs preallocated (`np.matmul(..., out=)`, softmax in place)
  peer_attention.py numpy-as-loaded  numpy written plainly (every step allocates), as loaded
  peer_attention.py torch            PyTorch: scaled_dot_product_attention where the version has
                                     it (2.0+), else the same steps in torch; nn.MultiheadAttention
                                     for mha
  peer_attention.py ... --threads N  BLAS (and torch) threads
run.ts chooses the OpenBLAS kernel with OPENBLAS_CORETYPE in this process's environment (numpy and
torch both call the system's OpenBLAS here); `blas` reports what actually runs.
Reads one JSON command per line on stdin and answers one JSON line each:
  {"op": "blas"}                  → numpy/torch versions, BLAS libraries and kernel (threadpoolctl)
  {"op": "gemm", "dtype": d, "n": n, "repeats": r} → GFLOP/s of the fastest of r n×n·n×n products
                                                        into a preallocated output
  {"op": "load", "case": name, "kind": "sdpa"|"mha", "dtype": ..., "heads": h, "dir": path, "shapes": {...}}
  {"op": "run", "case": name}     → {"ms": wall time of one forward pass, "cpu_ms": CPU time of all its threads}
Inputs are float64 little-endian files written by run.ts, converted once to the case's dtype.
Every peer keeps what the fast path keeps where its API allows: scores, scaled scores, weights and
output of every head (nn.MultiheadAttention: the weights of every head and the output).
"""
import json
import sys
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

PEER = sys.argv[1]
THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else None
if THREADS:
    threadpool_limits(THREADS)
if PEER == "torch":
    import torch

    if THREADS:
        torch.set_num_threads(THREADS)
    torch.set_grad_enabled(False)


def blas():
    """What runs: the BLAS (and OpenMP) libraries loaded, their kernel and thread counts."""
    info = {"peer": PEER, "numpy": np.__version__, "libraries": threadpool_info()}
    if PEER == "torch":
        info.update(torch=torch.__version__, torch_threads=torch.get_num_threads(),
                    sdpa=hasattr(torch.nn.functional, "scaled_dot_product_attention"))
    openblas = [lib for lib in info["libraries"] if lib.get("internal_api") == "openblas"]
    if openblas:
        info.update(openblas=openblas[0]["version"], kernel=openblas[0]["architecture"], threads=openblas[0]["num_threads"])
    return info


def gemm(command):
    """The machine's product speed through this peer's BLAS: the fastest of the repeats (the
    kernel's capability; other work on the machine only ever slows a run down)."""
    dtype = np.float32 if command["dtype"] == "float32" else np.float64
    n = command["n"]
    a = np.random.default_rng(1).standard_normal((n, n)).astype(dtype)
    b = np.random.default_rng(2).standard_normal((n, n)).astype(dtype)
    c = np.empty((n, n), dtype)
    if PEER == "torch":
        a, b, c = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(c)
    product = (lambda: torch.matmul(a, b, out=c)) if PEER == "torch" else (lambda: np.matmul(a, b, out=c))
    times = []
    for _ in range(command["repeats"]):
        started = time.perf_counter()
        product()
        times.append(time.perf_counter() - started)
    return {"gflops": 2 * n ** 3 / min(times) / 1e9}


def head_as_loaded(q, k, v, scale):
    """scores, scaled, weights (row softmax, max subtracted) and output of one head."""
    scores = q @ k.T
    scaled = scores * scale
    weights = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return scores, scaled, weights, weights @ v


def numpy_as_loaded(case):
    if case["kind"] == "sdpa":
        return lambda: head_as_loaded(case["Q"], case["K"], case["V"], case["scale"])
    X, h, scale = case["X"], case["heads"], case["scale"]

    def run():
        Q, K, V = X @ case["WQ"], X @ case["WK"], X @ case["WV"]
        w = Q.shape[1] // h
        heads = [head_as_loaded(Q[:, i * w:(i + 1) * w], K[:, i * w:(i + 1) * w], V[:, i * w:(i + 1) * w], scale)
                 for i in range(h)]
        return heads, np.concatenate([out for *_, out in heads], axis=1) @ case["WO"]

    return run


def numpy_preallocated(case):
    """Every result written into memory allocated once (as a run that replaces the last one can)."""
    dtype, h, scale = case["dtype"], case["heads"], case["scale"]
    sdpa = case["kind"] == "sdpa"
    n, m = (case["Q"].shape[0], case["K"].shape[0]) if sdpa else (case["X"].shape[0], case["X"].shape[0])
    width = case["Q"].shape[1] if sdpa else case["WQ"].shape[1] // h
    scores, scaled, weights = (np.empty((h, n, m), dtype) for _ in range(3))
    row = np.empty((n, 1), dtype)
    concat = np.empty((n, h * width), dtype)
    if not sdpa:
        Q, K, V = (np.empty((n, h * width), dtype) for _ in range(3))
        out = np.empty((n, case["WO"].shape[1]), dtype)

    def head(i, q, k, v, into):
        np.matmul(q, k.T, out=scores[i])
        np.multiply(scores[i], scale, out=scaled[i])
        np.max(scaled[i], axis=1, keepdims=True, out=row)
        np.subtract(scaled[i], row, out=weights[i])
        np.exp(weights[i], out=weights[i])
        np.sum(weights[i], axis=1, keepdims=True, out=row)
        np.divide(weights[i], row, out=weights[i])
        np.matmul(weights[i], v, out=into)

    def run():
        if sdpa:
            return head(0, case["Q"], case["K"], case["V"], concat)
        X = case["X"]
        np.matmul(X, case["WQ"], out=Q)
        np.matmul(X, case["WK"], out=K)
        np.matmul(X, case["WV"], out=V)
        for i in range(h):
            cols = slice(i * width, (i + 1) * width)
            head(i, Q[:, cols], K[:, cols], V[:, cols], concat[:, cols])
        np.matmul(concat, case["WO"], out=out)

    return run


def torch_peer(case):
    F = torch.nn.functional
    t = {name: torch.from_numpy(case[name]) for name in ("Q", "K", "V", "X", "WQ", "WK", "WV", "WO") if name in case}
    if case["kind"] == "mha":
        dm, h = case["WQ"].shape[0], case["heads"]
        # Biases (zero) kept: torch 1.13's fused inference path fails without them (qkv_bias None).
        mha = torch.nn.MultiheadAttention(dm, h, batch_first=True, dtype=t["X"].dtype)
        torch.nn.init.zeros_(mha.in_proj_bias)
        torch.nn.init.zeros_(mha.out_proj.bias)
        mha.in_proj_weight.copy_(torch.cat([t["WQ"].T, t["WK"].T, t["WV"].T]))  # torch computes x·Wᵀ
        mha.out_proj.weight.copy_(t["WO"].T)
        mha.eval()
        x = t["X"].unsqueeze(0)
        return lambda: mha(x, x, x, need_weights=True, average_attn_weights=False)
    q, k, v, scale = t["Q"], t["K"], t["V"], float(case["scale"])
    if hasattr(F, "scaled_dot_product_attention"):  # torch 2.0+: its fused kernel (output only)
        return lambda: F.scaled_dot_product_attention(q[None], k[None], v[None])
    n, m = q.shape[0], k.shape[0]
    scores, scaled = torch.empty((n, m), dtype=q.dtype), torch.empty((n, m), dtype=q.dtype)
    out = torch.empty((n, v.shape[1]), dtype=q.dtype)

    def run():
        torch.matmul(q, k.T, out=scores)
        torch.mul(scores, scale, out=scaled)
        weights = torch.softmax(scaled, dim=1)
        torch.matmul(weights, v, out=out)
        return weights

    return run


IMPLEMENTATIONS = {"numpy": numpy_preallocated, "numpy-as-loaded": numpy_as_loaded, "torch": torch_peer}
runs = {}


def load(command):
    dtype = np.float32 if command["dtype"] == "float32" else np.float64
    case = {"kind": command["kind"], "heads": command.get("heads", 1), "dtype": dtype}
    for name, (rows, cols) in command["shapes"].items():
        case[name] = np.fromfile(f"{command['dir']}/{name}.f64", dtype="<f8").reshape(rows, cols).astype(dtype)
    width = (case["Q"] if command["kind"] == "sdpa" else case["WQ"]).shape[1] // case["heads"]
    case["scale"] = dtype(1 / np.sqrt(width))
    runs[command["case"]] = IMPLEMENTATIONS[PEER](case)
    return {"loaded": command["case"]}


for line in sys.stdin:
    command = json.loads(line)
    if command["op"] == "blas":
        answer = blas()
    elif command["op"] == "gemm":
        answer = gemm(command)
    elif command["op"] == "load":
        answer = load(command)
    else:
        started, cpu = time.perf_counter(), time.process_time()
        result = runs[command["case"]]()
        answer = {"ms": (time.perf_counter() - started) * 1000, "cpu_ms": (time.process_time() - cpu) * 1000}
        del result
    print(json.dumps(answer), flush=True)
