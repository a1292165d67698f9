#!/usr/bin/python3
"""numpy's side of bench/linear.ts: C = A B into a preallocated C, float32, for each product given
as JSON on stdin ({"shapes": [[m, k, n], ...], "repeats": R, "threads": T}); prints the median and
fastest milliseconds of each, and the BLAS kernel that ran (threadpoolctl). The kernel is
OpenBLAS's choice unless OPENBLAS_CORETYPE says otherwise."""
import json
import sys
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

command = json.loads(sys.stdin.read())
rng = np.random.default_rng(1)
results = []
with threadpool_limits(command["threads"]):
    for m, k, n in command["shapes"]:
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        c = np.empty((m, n), np.float32)
        np.matmul(a, b, out=c)  # warm-up
        times = []
        for _ in range(command["repeats"]):
            started = time.perf_counter()
            np.matmul(a, b, out=c)
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        results.append({"median_ms": times[len(times) // 2], "min_ms": times[0]})
    openblas = [lib for lib in threadpool_info() if lib.get("internal_api") == "openblas"]
print(json.dumps({"numpy": np.__version__, "kernel": openblas[0]["architecture"] if openblas else None, "results": results}))
