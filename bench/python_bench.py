#!/usr/bin/env python3
"""The Python module's benchmark: the paper's f4, exp(-625 sum (x_i - 1/2)^2) in 8-D, as a NumPy
callable integrated by mcubes.vegas (the CPU backend's array path), printed with the estimate, its
error and evaluations per second of wall time. bin/array-bench (bench/array_bench.cpp) runs the same
options with the C++ functor, for the side-by-side figure (bench/results/2026-11-24-cpu-python.md).

    PYTHONPATH=build/python python3 bench/python_bench.py [--calls 1e7] [--iterations 10] [--threads 0]
        [--stratification adaptive|uniform]

With --gpu torch (or cupy): the same f4 as a PyTorch (CuPy) function on the CUDA backend (GPU
callables), then, side by side, the C++ f4 functor on the GPU (the suite's f4 compiled at run time,
mcubes.suite.f4(8) with backend='cuda'; its compilation is not timed). Each is run once untimed
first (the framework's and the module's start-up), then timed --repeat times (the median printed).
"""

import argparse
import time

import numpy as np

import mcubes

MINUS_625 = np.full(8, -625.0)


def f4(x):
    """exp(-625 sum (x_i - 1/2)^2) for x of shape (n, 8): a few NumPy passes, no Python loop."""
    d = x - 0.5
    np.square(d, out=d)
    s = d @ MINUS_625
    return np.exp(s, out=s)


def f4_torch(torch):
    w = None

    def f(x):
        nonlocal w
        if w is None:
            w = torch.full((8,), -625.0, dtype=torch.float64, device=x.device)
        d = x - 0.5
        d.square_()
        return (d @ w).exp_()
    return f


def f4_cupy(cp):
    w = cp.full(8, -625.0)

    def f(x):
        d = x - 0.5
        cp.square(d, out=d)
        s = d @ w
        return cp.exp(s, out=s)
    return f


def gpu(a, opts):
    import importlib
    xp = importlib.import_module(a.gpu)
    f = f4_torch(xp) if a.gpu == "torch" else f4_cupy(xp)
    sync = (lambda: xp.cuda.synchronize()) if a.gpu == "torch" else (lambda: xp.cuda.Device().synchronize())
    opts = dict(opts, backend="cuda")
    del opts["threads"]
    exact = mcubes.suite.f4(8).exact
    for label, g, extra in ((f"f4 8-D {a.gpu} callable", f, dict(array_module=a.gpu)),
                            ("f4 8-D C++ functor (suite f4, compiled at run time)", mcubes.suite.f4(8), {})):
        mcubes.vegas(g, [(0, 1)] * 8, **opts, **extra)  # untimed: start-up, compilation
        times = []
        for _ in range(a.repeat):
            sync()
            t0 = time.perf_counter()
            r = mcubes.vegas(g, [(0, 1)] * 8, **opts, **extra)
            sync()
            times.append(time.perf_counter() - t0)
        s = sorted(times)[len(times) // 2]
        print(f"{label}: {r.estimate:.6e} +- {r.error:.2e} (exact {exact:.6e}, pull {(r.estimate - exact) / r.error:+.2f})"
              f"  n_eval {r.n_eval}  median {s:.4f} s of {[round(t, 4) for t in times]}  "
              f"{r.n_eval / s / 1e9:.3f} G evaluations/s  ({opts})", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=float, default=1e7, help="calls per iteration (default 1e7)")
    ap.add_argument("--iterations", type=int, default=10, help="iterations, half of them adapting (default 10)")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads, 0 = all (default)")
    ap.add_argument("--gpu", choices=["torch", "cupy"], help="a PyTorch or CuPy callable on the CUDA backend")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs on the GPU (default 5)")
    ap.add_argument("--stratification", choices=["adaptive", "uniform"], default="adaptive",
                    help="adaptive (VEGAS+, the default) or uniform (m-Cubes)")
    a = ap.parse_args()
    opts = dict(calls_per_iteration=int(a.calls), max_iterations=a.iterations, adapt_iterations=a.iterations // 2,
                skip=0, min_iterations=a.iterations, rel_tol=1e-12, threads=a.threads, stratification=a.stratification)
    if a.gpu:
        return gpu(a, opts)
    f4(np.random.default_rng(1).random((1000, 8)))  # warm-up of NumPy's code paths
    t0 = time.perf_counter()
    r = mcubes.vegas(f4, [(0, 1)] * 8, **opts)
    s = time.perf_counter() - t0
    exact = mcubes.suite.f4(8).exact
    print(f"f4 8-D NumPy callable: {r.estimate:.6e} +- {r.error:.2e} (exact {exact:.6e}, pull "
          f"{(r.estimate - exact) / r.error:+.2f})  n_eval {r.n_eval}  {s:.3f} s  "
          f"{r.n_eval / s / 1e6:.2f} M evaluations/s  (threads {a.threads}, {opts})")


if __name__ == "__main__":
    main()
