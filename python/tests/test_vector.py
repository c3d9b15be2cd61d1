"""Vector-valued NumPy callables: mcubes.vegas_vector (C++ mcubes::vegas_vector on the CPU backend)."""

import numpy as np
import pytest

import mcubes
from conftest import SIGMA_TOLERANCE, assert_same_result, poly, poly_exact, same_bits


def three(x):
    """f0 = 1 + x0 x1 (exact 1.25 on [0, 1]^2), f1 = x0 (0.5), f2 = 2 f0 (2.5: linearly dependent on f0)."""
    f0 = 1 + x[:, 0] * x[:, 1]
    return np.stack([f0, x[:, 0], 2 * f0], axis=1)


EXACT = np.array([1.25, 0.5, 2.5])


def test_one_component_is_the_scalar_run_bitwise(small_vegas):
    scalar = mcubes.vegas(poly, [(0, 1)] * 3, **small_vegas)
    vector = mcubes.vegas_vector(lambda x: poly(x)[:, None], [(0, 1)] * 3, **small_vegas)
    assert vector.components == 1
    assert same_bits(vector.estimate[0], scalar.estimate) and same_bits(vector.error[0], scalar.error)
    assert vector.iterations == scalar.iterations and vector.n_eval == scalar.n_eval
    assert same_bits(vector.records.estimate, scalar.records.estimate)
    assert same_bits(vector.iteration_estimates[:, 0], scalar.records.estimate)
    assert abs(scalar.estimate - poly_exact(3)) <= SIGMA_TOLERANCE * scalar.error


def test_components_within_sigma_covariance_and_thread_invariance(small_vegas):
    opts = dict(small_vegas, calls_per_iteration=100000, max_iterations=10)
    r = mcubes.vegas_vector(three, [(0, 1)] * 2, threads=1, **opts)
    assert r.components == 3 and r.estimate.shape == (3,) and r.covariance.shape == (3, 3)
    assert r.iteration_estimates.shape == (r.iterations, 3) and r.iteration_covariances.shape == (r.iterations, 3, 3)
    assert np.all(np.abs(r.estimate - EXACT) <= SIGMA_TOLERANCE * r.error)
    # f2 = 2 f0 on every sample: the estimates and the covariance follow exactly (up to rounding)
    assert r.estimate[2] == pytest.approx(2 * r.estimate[0], rel=1e-13)
    assert r.covariance[0, 2] == pytest.approx(2 * r.covariance[0, 0], rel=1e-9)
    assert np.allclose(r.covariance, r.covariance.T, rtol=0, atol=0)
    for threads in (2, 3):
        t = mcubes.vegas_vector(three, [(0, 1)] * 2, threads=threads, **opts)
        assert same_bits(t.estimate, r.estimate) and same_bits(t.covariance, r.covariance)
        assert same_bits(t.chi2_dof_vector, r.chi2_dof_vector)
    assert "component 2" in r.summary() and str(r).startswith("[")


def test_vector_callables_sample_vegas_plus_by_default():
    """The default stratification (VEGAS+, allocated by component 0) for vector-valued NumPy callables:
    within sigma, the counts move between iterations, the same bits for any thread count."""
    opts = dict(calls_per_iteration=100000, max_iterations=10, adapt_iterations=5, rel_tol=1e-12, seed=4)
    r = mcubes.vegas_vector(three, [(0, 1)] * 2, threads=1, **opts)
    assert r.stratification == "adaptive"
    assert np.all(np.abs(r.estimate - EXACT) <= SIGMA_TOLERANCE * r.error)
    assert len(set(r.records.n_eval.tolist())) > 1  # the allocation changed the counts
    t = mcubes.vegas_vector(three, [(0, 1)] * 2, threads=3, **opts)
    assert same_bits(t.estimate, r.estimate) and same_bits(t.covariance, r.covariance)
    u = mcubes.vegas_vector(three, [(0, 1)] * 2, stratification="uniform", **opts)
    assert u.stratification == "uniform" and len(set(u.records.n_eval.tolist())) == 1


def test_components_are_found_from_one_call_and_checked(small_vegas):
    r = mcubes.vegas_vector(three, [(0, 1)] * 2, components=3, **small_vegas)
    s = mcubes.vegas_vector(three, [(0, 1)] * 2, **small_vegas)
    assert same_bits(r.estimate, s.estimate)
    with pytest.raises(ValueError, match="shape"):
        mcubes.vegas_vector(three, [(0, 1)] * 2, components=2, **small_vegas)
    with pytest.raises(ValueError, match="shape"):
        mcubes.vegas_vector(poly, [(0, 1)] * 2, **small_vegas)
    with pytest.raises(ValueError, match="components"):
        mcubes.vegas_vector(lambda x: np.zeros((x.shape[0], 65)), [(0, 1)] * 2, **small_vegas)
    with pytest.raises(NotImplementedError):
        mcubes.vegas_vector(three, [(0, 1)] * 2, backend="cuda")


def test_non_finite_component_names_the_point(small_vegas):
    def bad(x):
        v = three(x)
        v[x[:, 1] > 0.95, 1] = np.inf
        return v

    with pytest.raises(mcubes.NonFiniteIntegrand) as e:
        mcubes.vegas_vector(bad, [(0, 1)] * 2, **small_vegas)
    assert e.value.point[1] > 0.95


def test_callback_stops_the_run(small_vegas):
    r = mcubes.vegas_vector(three, [(0, 1)] * 2, callback=lambda info: info["index"] >= 1, **small_vegas)
    assert r.status == "interrupted" and r.iterations == 2


def powers(n):
    """f_i = x0^i (1 + x1) for i < n: exact 1.5 / (i + 1) on [0, 1]^2."""
    def f(x):
        return x[:, :1] ** np.arange(n)[None, :] * (1 + x[:, 1:2])
    return f


@pytest.mark.parametrize("n", [11, 64])
def test_up_to_64_components_run_in_a_wider_instantiation(small_vegas, n):
    opts = dict(small_vegas, calls_per_iteration=20000, max_iterations=6)
    r = mcubes.vegas_vector(powers(n), [(0, 1)] * 2, **opts)
    assert mcubes.max_components == 64
    assert r.components == n and r.estimate.shape == (n,) and r.covariance.shape == (n, n)
    assert r.iteration_covariances.shape == (r.iterations, n, n)
    exact = 1.5 / (np.arange(n) + 1)
    assert np.all(np.abs(r.estimate - exact) <= SIGMA_TOLERANCE * r.error), (r.estimate - exact) / r.error
    assert np.all(np.isfinite(r.covariance)) and r.dof_vector > 0
    # n < 16 runs in the width-16 instantiation, its other columns 0: the first n components are those
    # of the 16-component run of the same first columns, bit for bit (every iteration run: rel_tol 1e-12)
    if n < 16:
        full = dict(opts, rel_tol=1e-12)
        a = mcubes.vegas_vector(powers(n), [(0, 1)] * 2, **full)
        b = mcubes.vegas_vector(powers(16), [(0, 1)] * 2, **full)
        assert a.iterations == b.iterations == 6
        assert same_bits(a.estimate, b.estimate[:n]) and same_bits(a.covariance, b.covariance[:n, :n])
