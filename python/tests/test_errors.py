"""Errors: bad input is a ValueError with the library's message (unknown options a TypeError), a
non-finite value a NonFiniteIntegrand carrying the point, an overflow a NumericalError, the
callable's own exceptions propagate, Ctrl-C stops a run with KeyboardInterrupt."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import mcubes
from conftest import poly


def test_bad_region_and_options_are_value_errors():
    with pytest.raises(ValueError, match="lower bound must be below upper bound on axis 1"):
        mcubes.vegas(poly, [(0, 1), (2, 1)])
    with pytest.raises(ValueError, match="region must be a sequence of"):
        mcubes.vegas(poly, [0, 1])
    with pytest.raises(ValueError, match="rel_tol must be a finite non-negative number"):
        mcubes.vegas(poly, [(0, 1)], rel_tol=-1)
    with pytest.raises(ValueError, match="n_bins must be in"):
        mcubes.vegas(poly, [(0, 1)], n_bins=1)
    with pytest.raises(ValueError, match="backend must be"):
        mcubes.vegas(poly, [(0, 1)], backend="tpu")
    with pytest.raises(ValueError, match=f"1 to {mcubes.max_dim} dimensions"):
        mcubes.vegas(poly, [(0, 1)] * (mcubes.max_dim + 1))
    with pytest.raises(ValueError, match="at least 2 samples"):
        mcubes.plain_mc(poly, [(0, 1)], samples=1)
    with pytest.raises(ValueError, match="at most 2\\^52"):
        mcubes.midpoint(poly, [(0, 1)] * 4, 10 ** 5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'tolerance'"):
        mcubes.vegas(poly, [(0, 1)], tolerance=1e-3)
    with pytest.raises(TypeError, match="must be a callable"):
        mcubes.vegas(42, [(0, 1)])


def test_wrong_result_shape_or_type():
    with pytest.raises(ValueError, match=r"shape \(\d+,\)"):
        mcubes.vegas(lambda x: x, [(0, 1)] * 2)
    with pytest.raises((TypeError, ValueError)):
        mcubes.vegas(lambda x: ["a"] * x.shape[0], [(0, 1)])


@pytest.mark.parametrize("threads", [1, 2])
def test_non_finite_names_the_point(threads):
    def f(x):
        return np.where(x[:, 0] > 0.75, np.nan, 1.0)

    with pytest.raises(mcubes.NonFiniteIntegrand) as e:
        mcubes.vegas(f, [(0, 1)] * 3, threads=threads)
    assert isinstance(e.value, ArithmeticError)
    assert e.value.point.shape == (3,) and e.value.point[0] > 0.75
    assert np.isnan(e.value.value) and e.value.iteration == 0
    assert "integrand returned nan at x = (" in str(e.value)
    with pytest.raises(mcubes.NonFiniteIntegrand) as p:
        mcubes.plain_mc(f, [(0, 1)] * 3, threads=threads)
    assert p.value.point[0] > 0.75
    with pytest.raises(mcubes.NonFiniteIntegrand):
        mcubes.midpoint(lambda x: np.where(x[:, 0] == 0.5, np.inf, 1.0), [(0, 1)], 3)  # the middle point


def test_overflow_is_a_numerical_error():
    with pytest.raises(mcubes.NumericalError) as e:
        mcubes.vegas(lambda x: np.full(x.shape[0], 1e300), [(0, 1)] * 2)
    assert e.value.point.shape == (2,) and e.value.value == 1e300


@pytest.mark.parametrize("threads", [1, 2])
def test_exceptions_of_the_callable_propagate(threads):
    def f(x):
        raise ZeroDivisionError("from the integrand")

    with pytest.raises(ZeroDivisionError, match="from the integrand"):
        mcubes.vegas(f, [(0, 1)] * 2, threads=threads)
    with pytest.raises(ZeroDivisionError):
        mcubes.plain_mc(f, [(0, 1)] * 2, threads=threads)
    with pytest.raises(ZeroDivisionError):
        mcubes.midpoint(f, [(0, 1)] * 2, 30, threads=threads)


def test_callables_on_cuda_outside_vegas_and_without_a_framework():
    """GPU callables run with vegas only; without the module's CUDA backend, or without PyTorch/CuPy,
    vegas says so (tests/test_gpu.py runs them where a device is present)."""
    with pytest.raises(NotImplementedError, match="vegas only"):
        mcubes.plain_mc(poly, [(0, 1)], backend="cuda")
    with pytest.raises(NotImplementedError, match="vegas only"):
        mcubes.midpoint(poly, [(0, 1)], 10, backend="cuda")
    if not mcubes._mcubes.has_cuda_callables:
        with pytest.raises(RuntimeError, match="no CUDA backend"):
            mcubes.Integrator([(0, 1)], backend="cuda")
        with pytest.raises(RuntimeError, match="no CUDA backend"):
            mcubes.vegas(poly, [(0, 1)], backend="cuda")
        return
    with pytest.raises(ValueError, match="array_module must be 'torch' or 'cupy'"):
        mcubes.vegas(poly, [(0, 1)], backend="cuda", array_module="jax")
    import sys
    if "torch" not in sys.modules and "cupy" not in sys.modules:
        with pytest.raises(ValueError, match="needs PyTorch or CuPy"):
            mcubes.vegas(poly, [(0, 1)], backend="cuda")


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_stops_the_run(threads):
    def slow(x):
        time.sleep(0.001)
        return poly(x)

    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            mcubes.vegas(slow, [(0, 1)] * 2, calls_per_iteration=50000, max_iterations=100000, min_iterations=1,
                         rel_tol=1e-15, threads=threads)
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 30


COMPLEX_RETURNS = [
    pytest.param(lambda x: poly(x) + 1j, id="complex128"),
    pytest.param(lambda x: (poly(x) + 0j).astype(np.complex64), id="complex64"),
    pytest.param(lambda x: [complex(v) for v in poly(x)], id="list-of-complex"),
]


@pytest.mark.parametrize("f", COMPLEX_RETURNS)
@pytest.mark.parametrize("method", ["vegas", "plain_mc", "midpoint", "Integrator"])
def test_complex_values_are_refused(f, method):
    """A complex result is a TypeError naming its type, not its real part (even with a zero
    imaginary part: the integrand computes something else than what is integrated)."""
    call = {"vegas": lambda: mcubes.vegas(f, [(0, 1)] * 2, calls_per_iteration=2000),
            "plain_mc": lambda: mcubes.plain_mc(f, [(0, 1)] * 2, samples=2000),
            "midpoint": lambda: mcubes.midpoint(f, [(0, 1)] * 2, 9),
            "Integrator": lambda: mcubes.Integrator([(0, 1)] * 2, calls_per_iteration=2000).integrate(f)}[method]
    with pytest.raises(TypeError, match=r"must return real values \(float64\), got complex values: (ndarray|list) "
                                        r"of dtype complex(64|128)"):
        call()


@pytest.mark.parametrize("components", [None, 2])
def test_complex_values_of_a_vector_integrand_are_refused(components):
    def f(x):
        v = poly(x)
        return np.stack([v, v * 1j], axis=1)

    with pytest.raises(TypeError, match="got complex values: ndarray of dtype complex128"):
        mcubes.vegas_vector(f, [(0, 1)] * 2, components=components, calls_per_iteration=2000)


def test_string_values_are_refused_and_real_kinds_taken():
    with pytest.raises(TypeError, match="must return real values .*of dtype <U"):
        mcubes.vegas(lambda x: np.full(x.shape[0], "1.5"), [(0, 1)], calls_per_iteration=2000)
    # booleans (an indicator function), integers and float32 are real values
    opts = dict(calls_per_iteration=4000, max_iterations=3, skip=0, min_iterations=1, rel_tol=1e-12, seed=2)
    ind = mcubes.vegas(lambda x: (x * x).sum(axis=1) < 1, [(0, 1)] * 2, **opts)
    same = mcubes.vegas(lambda x: ((x * x).sum(axis=1) < 1).astype(np.float64), [(0, 1)] * 2, **opts)
    assert ind.estimate == same.estimate and abs(ind.estimate - np.pi / 4) < 5 * ind.error
    ones = mcubes.vegas(lambda x: np.ones(x.shape[0], dtype=np.int32), [(0, 1)], **opts)
    assert ones.estimate == mcubes.vegas(lambda x: np.ones(x.shape[0]), [(0, 1)], **opts).estimate
    assert abs(ones.estimate - 1) <= 5 * ones.error


def batch_poly(x, p):
    return poly(x) * p


BATCH = dict(calls_per_iteration=2000, max_iterations=2, skip=0, min_iterations=1, rel_tol=1e-12, seed=9)


def test_failing_batch_member_names_index_and_parameter():
    """As the C++ batch_error ("integral k: ..."): the failure of integral k names k and params[k],
    keeps its type and attributes."""
    def f(x, p):
        return np.where(x[:, 0] > 0.5, np.nan, 1.0) if p == 0.3 else batch_poly(x, p)

    with pytest.raises(mcubes.NonFiniteIntegrand) as e:
        mcubes.vegas_batch(f, [(0, 1)] * 2, [1.0, 2.0, 0.3, 4.0], **BATCH)
    assert str(e.value).startswith("integral 2 (params[2] = 0.3): integrand returned nan at x = (")
    assert e.value.integral == 2 and e.value.parameter == 0.3
    assert e.value.point.shape == (2,) and e.value.point[0] > 0.5 and e.value.iteration == 0

    # a bad result (shape, complex) of member 1
    with pytest.raises(ValueError, match=r"^integral 1 \(params\[1\] = \{'a': 2\}\): the integrand must return an "
                                         r"array of shape"):
        mcubes.vegas_batch(lambda x, p: x if p["a"] == 2 else poly(x), [(0, 1)] * 2, [{"a": 1}, {"a": 2}], **BATCH)
    with pytest.raises(TypeError, match=r"^integral 0 \(params\[0\] = 1j\): the integrand must return real values"):
        mcubes.vegas_batch(lambda x, p: poly(x) * p, [(0, 1)], [1j, 2], **BATCH)


def test_exception_of_a_batch_integrand_propagates_with_a_note():
    class Failure(Exception):
        pass

    def f(x, p):
        if p == "b":
            raise Failure("from the integrand")
        return poly(x)

    with pytest.raises(Failure, match="^from the integrand$") as e:
        mcubes.vegas_batch(f, [(0, 1)], ["a", "b"], **BATCH)
    assert e.value.integral == 1 and e.value.parameter == "b"
    if hasattr(e.value, "add_note"):
        assert e.value.__notes__ == ["in vegas_batch's integral 1 (params[1] = 'b')"]


def test_batch_options_are_checked_before_any_integral():
    calls = []

    def f(x, p):
        calls.append(p)
        return poly(x)

    with pytest.raises(ValueError, match=r"^seed must be an integer in \[0, 2\^64 - 1\]"):
        mcubes.vegas_batch(f, [(0, 1)], [1, 2], seed=2 ** 64)
    with pytest.raises(TypeError, match="^calls_per_iteration must be an integer, got str '1e5'$"):
        mcubes.vegas_batch(f, [(0, 1)], [1, 2], calls_per_iteration="1e5")
    assert calls == []
