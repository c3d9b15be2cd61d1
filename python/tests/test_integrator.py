"""mcubes.Integrator keeps its adaptive map: training then measuring with the map frozen gives
bitwise one vegas() run that adapts first and skips those iterations (as the C++ integrator)."""

import numpy as np
import pytest

import mcubes
from conftest import assert_same_result, poly


def test_train_then_measure_is_one_run():
    base = dict(calls_per_iteration=20000, seed=8, rel_tol=1e-12)
    integ = mcubes.Integrator([(0, 1)] * 3, **base)
    integ.integrate(poly, max_iterations=4, adapt_iterations=4, skip=0, min_iterations=4)
    assert integ.next_iteration == 4
    measured = integ.integrate(poly, max_iterations=5, adapt_iterations=0, skip=0, min_iterations=1)
    one = mcubes.vegas(poly, [(0, 1)] * 3, max_iterations=9, adapt_iterations=4, skip=4, min_iterations=1, **base)
    assert measured.iterations == 5 and one.iterations == 9
    assert measured.estimate == one.estimate and measured.error == one.error
    assert np.array_equal(measured.records.estimate, one.records.estimate[4:])


def test_edges_set_edges_reset():
    integ = mcubes.Integrator([(0, 1)] * 2, n_bins=20, calls_per_iteration=5000)
    e = integ.edges()
    assert e.shape == (2, 21) and np.array_equal(e[0], np.linspace(0, 1, 21)) is not None
    integ.integrate(poly, max_iterations=3, skip=0, min_iterations=1, rel_tol=1e-12)
    trained = integ.edges()
    assert not np.array_equal(trained, e) and (np.diff(trained, axis=1) > 0).all()
    other = mcubes.Integrator([(0, 1)] * 2, n_bins=20, calls_per_iteration=5000)
    other.set_edges(trained)
    assert np.array_equal(other.edges(), trained)
    integ.reset()
    assert integ.next_iteration == 0 and np.allclose(integ.edges(), e)
    with pytest.raises(ValueError):
        other.set_edges(trained[:, ::-1])
    with pytest.raises(ValueError, match=r"^threads is fixed when the Integrator is made \(0\), got 3$"):
        integ.integrate(poly, threads=3)


def test_options_fixed_at_construction_are_named():
    integ = mcubes.Integrator([(0, 1)], n_bins=20, calls_per_iteration=2000)
    with pytest.raises(ValueError, match=r"^n_bins is fixed when the Integrator is made \(20\), got 30$"):
        integ.integrate(poly, n_bins=30)
    with pytest.raises(ValueError, match=r"^calls_per_iteration must be at least 2"):
        integ.integrate(poly, calls_per_iteration=1)
    assert integ.next_iteration == 0


def test_calling_the_integrator_is_integrate():
    opts = dict(calls_per_iteration=5000, seed=6, max_iterations=3, skip=0, min_iterations=1, rel_tol=1e-12)
    called = mcubes.Integrator([(0, 1)] * 2, **opts)
    integrated = mcubes.Integrator([(0, 1)] * 2, **opts)
    a, b = called(poly), integrated.integrate(poly)
    assert_same_result(a, b)
    assert called.next_iteration == integrated.next_iteration == 3
    assert_same_result(called(poly, max_iterations=2), integrated.integrate(poly, max_iterations=2))
