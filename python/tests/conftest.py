"""Shared integrands and constants of the Python module's tests (pytest; python3-pytest)."""

import numpy as np
import pytest

import mcubes

#: A converged estimate must lie within this many reported standard deviations of the exact value.
SIGMA_TOLERANCE = 5.0


def poly(x):
    """1 + sum_i (i + 1) y^2 (1 - y)^3 (y = x_i), times 7 x_0^4 + 0.01: the same IEEE operations, in the
    same order, as the C++ reference functor (python/src/reference.cpp), so the results agree bitwise.
    Only indexing and arithmetic: x may be a NumPy array, a PyTorch tensor or a CuPy array."""
    s = x[:, 0] * 0 + 1  # ones, of x's kind and device
    for i in range(x.shape[1]):
        y = x[:, i]
        z = 1 - y
        s = s + (i + 1) * y * y * z * z * z
    x0 = x[:, 0]
    return s * (7 * x0 * x0 * x0 * x0 + 0.01)


def poly_exact(d):
    """The integral of poly over [0, 1]^d: int y^2 (1-y)^3 = 1/60, int x^6 (1-x)^3 = 1/840."""
    return (7 / 5 + 0.01) * (1 + sum((i + 1) / 60 for i in range(1, d))) + 7 / 840 + 0.01 / 60


def same_bits(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def assert_same_result(a, b):
    """Every number of two results, bit for bit (records included)."""
    for k in ("estimate", "error", "chi2_dof", "q"):
        assert same_bits(getattr(a, k), getattr(b, k)), f"{k}: {getattr(a, k)!r} vs {getattr(b, k)!r}"
    assert (a.status, a.iterations, a.n_eval, a.seed) == (b.status, b.iterations, b.n_eval, b.seed)
    for k in ("estimate", "error", "weighted_estimate", "weighted_error"):
        assert same_bits(a.records[k], b.records[k]), f"records.{k}"
    assert np.array_equal(a.records.n_nonzero, b.records.n_nonzero)


@pytest.fixture
def small_vegas():
    """Options of a short Vegas run (every iteration runs: rel_tol unreachable), on the uniform grid (the
    tests that need VEGAS+ ask for it)."""
    return dict(calls_per_iteration=20000, max_iterations=6, adapt_iterations=3, skip=1, min_iterations=1,
                rel_tol=1e-12, seed=3, stratification="uniform")


def has_cuda_device():
    import os
    return os.path.exists("/dev/nvidia0")
