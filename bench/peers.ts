// The compute peers' set-up, shared by every bench that times numpy or PyTorch computing. Debian's
// numpy and PyTorch link libblas.so.3, which is the reference BLAS until OpenBLAS is installed: a
// 512×768 · 768×3072 float32 product took PyTorch 413 ms on it against 15 ms on OpenBLAS, and a
// GPT-2-small forward at 512 tokens 20.4 s against 0.9 s. And OpenBLAS misreads some CPUs (0.3.21
// takes Emerald Rapids for a Prescott: 65 against ~300 GFLOP/s with SkylakeX), so the kernel it
// picks by itself is only one candidate.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ensureDebianPackages } from '../scripts/lib/system.mjs';

/** The Debian packages of the peers; threadpoolctl says which OpenBLAS kernel runs. */
const PEER_PACKAGES = ['python3-numpy', 'libopenblas0-pthread', 'python3-threadpoolctl', 'python3-torch'];

/** Installs the peers' packages on Debian (apt-get as root; otherwise an error naming the command, as `npm test` does). */
export function ensurePeers(): void {
  if (existsSync('/etc/debian_version')) ensureDebianPackages(PEER_PACKAGES);
}

/** OpenBLAS's x86-64 kernels with AVX2 or AVX-512 GEMM (OPENBLAS_CORETYPE); undefined: its own choice. */
export const OPENBLAS_CANDIDATES = process.arch === 'x64' ? [undefined, 'Haswell', 'Zen', 'SkylakeX', 'CooperLake', 'SapphireRapids'] : [undefined];

/** numpy's GFLOP/s on a 1024² float32 product (preallocated output, best of 5), and the BLAS that ran it (threadpoolctl). */
const PROBE = `
import json, time, numpy as np, threadpoolctl
a = np.random.default_rng(0).standard_normal((1024, 1024), dtype=np.float32)
c = np.empty_like(a)
best = min((lambda t: (np.matmul(a, a, out=c), time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(5))
blas = [(i['internal_api'], i.get('architecture')) for i in threadpoolctl.threadpool_info() if i['user_api'] == 'blas']
print(json.dumps({'gflops': 2 * 1024 ** 3 / best / 1e9, 'blas': blas[0][0] if blas else None, 'kernel': blas[0][1] if blas else None}))
`;

export interface OpenBlasKernel {
  /** This process's environment with OPENBLAS_CORETYPE set to the kernel (or unset). */
  env: NodeJS.ProcessEnv;
  name: string;
  /** numpy's float32 1024² product on it. */
  gflops: number;
}

/**
 * The fastest OpenBLAS kernel here; a kernel the CPU lacks dies of SIGILL and is skipped. Throws
 * when numpy does not run on OpenBLAS at all (PyTorch links the same libblas.so.3).
 */
export function fastestOpenBlas(): OpenBlasKernel {
  let best: OpenBlasKernel = { env: process.env, name: '(unset)', gflops: 0 };
  for (const kernel of OPENBLAS_CANDIDATES) {
    const env = { ...process.env };
    delete env.OPENBLAS_CORETYPE;
    if (kernel) env.OPENBLAS_CORETYPE = kernel;
    const probe = spawnSync('/usr/bin/python3', ['-c', PROBE], { encoding: 'utf8', env });
    if (probe.status !== 0) continue;
    const { gflops, blas, kernel: running } = JSON.parse(probe.stdout) as { gflops: number; blas: string | null; kernel: string | null };
    if (blas !== 'openblas') throw new Error(`numpy runs on ${blas ?? 'no BLAS threadpoolctl knows'}, not OpenBLAS: install libopenblas0-pthread`);
    if (gflops > best.gflops) best = { env, name: kernel ?? `(unset: ${running})`, gflops };
  }
  return best;
}
