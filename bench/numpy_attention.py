"""numpy's side of `npm run bench`: the same attention on the same inputs, every n×n step kept.

Started by bench/run.ts as a child process (Debian's python3-numpy through /usr/bin/python3,
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed from its environment so OpenBLAS picks its own
kernel). Reads one JSON command per line on stdin and answers one JSON line each:
  {"op": "blas"}                                   → which BLAS numpy actually loaded
  {"op": "load", "case": name, "kind": "sdpa"|"mha", "dtype": ..., "heads": h, "dir": path}
  {"op": "run", "case": name}                      → {"ms": wall time of one forward pass,
                                                      "cpu_ms": CPU time of all its threads}
Inputs are float64 little-endian files written by run.ts, converted once to the case's dtype.
"""
import ctypes
import json
import sys
import time

import numpy as np

cases = {}


def blas():
    """The BLAS library mapped into this process, and what OpenBLAS says about itself."""
    with open("/proc/self/maps") as maps:
        libs = sorted({line.split()[-1] for line in maps if "blas" in line.lower() and "/" in line})
    info = {"numpy": np.__version__, "libraries": libs}
    for lib in libs:
        try:
            handle = ctypes.CDLL(lib)
            config = handle.openblas_get_config
            config.restype = ctypes.c_char_p
            core = handle.openblas_get_corename
            core.restype = ctypes.c_char_p
            info.update(openblas=config().decode(), kernel=core().decode(), threads=handle.openblas_get_num_threads())
            break
        except (OSError, AttributeError):
            continue
    return info


def read(path, rows, cols, dtype):
    return np.fromfile(path, dtype="<f8").reshape(rows, cols).astype(dtype)


def head(q, k, v, scale):
    """scores, scaled, weights (row softmax, max subtracted) and output of one head."""
    scores = q @ k.T
    scaled = scores * scale
    weights = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return scores, scaled, weights, weights @ v


def run(case):
    if case["kind"] == "sdpa":
        return head(case["Q"], case["K"], case["V"], case["scale"])
    X, h = case["X"], case["heads"]
    Q, K, V = X @ case["WQ"], X @ case["WK"], X @ case["WV"]
    width = Q.shape[1] // h
    heads = [head(Q[:, i * width:(i + 1) * width], K[:, i * width:(i + 1) * width],
                  V[:, i * width:(i + 1) * width], case["scale"]) for i in range(h)]
    return heads, np.concatenate([out for *_, out in heads], axis=1) @ case["WO"]


def load(command):
    dtype = np.float32 if command["dtype"] == "float32" else np.float64
    case = {"kind": command["kind"], "heads": command.get("heads", 1)}
    for name, (rows, cols) in command["shapes"].items():
        case[name] = read(f"{command['dir']}/{name}.f64", rows, cols, dtype)
    width = (case["Q"] if command["kind"] == "sdpa" else case["WQ"]).shape[1] // case["heads"]
    case["scale"] = dtype(1 / np.sqrt(width))
    cases[command["case"]] = case
    return {"loaded": command["case"]}


for line in sys.stdin:
    command = json.loads(line)
    if command["op"] == "blas":
        answer = blas()
    elif command["op"] == "load":
        answer = load(command)
    else:
        started, cpu = time.perf_counter(), time.process_time()
        result = run(cases[command["case"]])
        answer = {"ms": (time.perf_counter() - started) * 1000, "cpu_ms": (time.process_time() - cpu) * 1000}
        del result
    print(json.dumps(answer), flush=True)
