"""Same seed, same bits: a NumPy callable gives bitwise the result of the C++ library's one-point
functor computing the same values (mcubes._mcubes.reference runs python/src/reference.cpp), on
every run and for any number of threads, on every method."""

import numpy as np
import pytest

import mcubes
from conftest import assert_same_result, poly


def reference(method, d, options, n=0):
    return mcubes.Result(mcubes._mcubes.reference(method, "poly", [0.0] * d, [1.0] * d, options, n))


@pytest.mark.parametrize("stratification", ["uniform", "adaptive"])
@pytest.mark.parametrize("d", [1, 3, 8])
def test_vegas_bitwise_the_cpp_functor(d, stratification, small_vegas):
    small_vegas = dict(small_vegas, stratification=stratification)
    ref = reference("vegas", d, dict(small_vegas, threads=1))
    assert ref.iterations == small_vegas["max_iterations"]
    for threads in (1, 2, 3):
        assert_same_result(ref, mcubes.vegas(poly, [(0, 1)] * d, threads=threads, **small_vegas))


def test_vegas_many_points_per_call_and_chunks_of_many_sub_cubes():
    opts = dict(calls_per_iteration=3_000_000, max_iterations=2, adapt_iterations=1, skip=0, min_iterations=1,
                rel_tol=1e-12, seed=9, stratification="uniform")
    calls = []

    def counted(x):
        calls.append(x.shape[0])
        return poly(x)

    assert_same_result(reference("vegas", 1, opts), mcubes.vegas(counted, [(0, 1)], **opts))
    assert min(calls) >= 1000 and max(calls) <= 32768  # slices of thousands of points, at most 32768


def test_repeated_runs_same_bits_other_seed_other_bits(small_vegas):
    a = mcubes.vegas(poly, [(0, 1)] * 3, **small_vegas)
    assert_same_result(a, mcubes.vegas(poly, [(0, 1)] * 3, **small_vegas))
    b = mcubes.vegas(poly, [(0, 1)] * 3, **dict(small_vegas, seed=4))
    assert a.estimate != b.estimate


def test_plain_mc_and_midpoint_bitwise():
    for threads in (1, 2):
        opts = dict(samples=300001, seed=6, threads=threads)
        assert_same_result(reference("plain_mc", 3, dict(opts, threads=1)), mcubes.plain_mc(poly, [(0, 1)] * 3, **opts))
        assert_same_result(reference("midpoint", 3, {"threads": 1}, 35),
                           mcubes.midpoint(poly, [(0, 1)] * 3, 35, threads=threads))


def test_points_are_a_read_only_copy():
    kept = []

    def f(x):
        assert x.dtype == np.float64 and x.ndim == 2 and x.shape[1] == 2 and x.flags.c_contiguous
        assert not x.flags.writeable
        kept.append(x)
        return np.ones(x.shape[0])

    mcubes.vegas(f, [(0, 1)] * 2, calls_per_iteration=5000, max_iterations=2, skip=0, min_iterations=1, rel_tol=1e-12)
    assert len(kept) >= 2 and not np.array_equal(kept[0], kept[-1])  # each call its own array
    assert all(((k >= 0) & (k <= 1)).all() for k in kept)


def poly_with_constant(x, c):
    """poly with its constant 0.01 replaced by c (python/src/reference.cpp, poly_with_constant)."""
    s = np.ones(x.shape[0])
    for i in range(x.shape[1]):
        y = x[:, i]
        z = 1 - y
        s = s + (i + 1) * y * y * z * z * z
    x0 = x[:, 0]
    return s * (7 * x0 * x0 * x0 * x0 + c)


def test_parameter_scan_bitwise_the_cpp_batch(small_vegas):
    constants = [0.01, 0.5, 2.0]
    ref = [mcubes.Result(d) for d in mcubes._mcubes.reference_batch([0.0] * 3, [1.0] * 3, constants, small_vegas)]
    got = mcubes.vegas_batch(poly_with_constant, [(0, 1)] * 3, constants, **small_vegas)
    assert len(got) == 3 and len({r.seed for r in got}) == 3
    for a, b in zip(ref, got):
        assert_same_result(a, b)


def test_a_numpy_callable_samples_vegas_plus_by_default_and_says_so():
    """NumPy callables (array integrands) sample the default VEGAS+ stratification, in calls of thousands
    of points, bitwise the C++ one-point functor's run, and the result's options say so."""
    opts = dict(calls_per_iteration=20000, max_iterations=4, skip=0, min_iterations=1, rel_tol=1e-12, seed=8)
    calls = []

    def counted(x):
        calls.append(x.shape[0])
        return poly(x)

    r = mcubes.vegas(counted, [(0, 1)] * 3, **opts)
    assert r.stratification == "adaptive"
    assert_same_result(reference("vegas", 3, opts), r)
    assert max(calls) >= 1000
