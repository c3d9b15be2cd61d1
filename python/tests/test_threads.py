"""mcubes.Integrator runs one call at a time: a call from another thread while a run is in progress
raises RuntimeError at once (no wait, no race on the map); the integrator is usable again when the
run ends, normally or with an exception. Deterministic: the first run's integrand blocks on an Event
until the other thread has made its calls."""

import threading

import numpy as np
import pytest

import mcubes
from conftest import assert_same_result, poly

OPTS = dict(calls_per_iteration=4000, max_iterations=3, skip=0, min_iterations=1, rel_tol=1e-12, seed=4, threads=1)


def run_blocked(integ, inside):
    """Runs integ.integrate on a thread whose integrand blocks at its first call until inside() (the
    calls of this thread while that run is in progress) returns. Returns the run's Result or
    exception."""
    entered, release = threading.Event(), threading.Event()
    out = {}

    def f(x):
        if not entered.is_set():
            entered.set()
            assert release.wait(60), "the test thread never released the run"
        return poly(x)

    def target():
        try:
            out["result"] = integ.integrate(f)
        except BaseException as e:  # noqa: B036 (handed to the test thread)
            out["error"] = e

    t = threading.Thread(target=target)
    t.start()
    try:
        assert entered.wait(60), "the run never called its integrand"
        inside()
    finally:
        release.set()
        t.join(60)
    assert not t.is_alive()
    return out


@pytest.mark.parametrize("call", [
    lambda integ: integ.integrate(poly),
    lambda integ: integ.edges(),
    lambda integ: integ.set_edges(np.linspace(0, 1, 501)[None, :].repeat(2, axis=0)),
    lambda integ: integ.reset(),
    lambda integ: integ.next_iteration,
], ids=["integrate", "edges", "set_edges", "reset", "next_iteration"])
def test_second_thread_gets_runtime_error(call):
    integ = mcubes.Integrator([(0, 1)] * 2, **OPTS)
    errors = []

    def inside():
        with pytest.raises(RuntimeError, match="in use by another thread") as e:
            call(integ)
        errors.append(e.value)

    out = run_blocked(integ, inside)
    assert len(errors) == 1 and "error" not in out
    # the blocked run was not disturbed: the same bits as an undisturbed run
    assert_same_result(out["result"], mcubes.Integrator([(0, 1)] * 2, **OPTS).integrate(poly))
    # and the integrator is free again
    assert integ.next_iteration == 3
    integ.integrate(poly)
    assert integ.next_iteration == 6


def test_usable_again_after_a_failed_run():
    integ = mcubes.Integrator([(0, 1)], **OPTS)
    with pytest.raises(ZeroDivisionError):
        integ.integrate(lambda x: 1 / 0)
    assert integ.integrate(poly).iterations == 3


def test_integrand_calling_its_own_integrator_is_refused():
    """A call from the running integrand (another thread of the run, or the run's own) is refused
    too, rather than deadlocking or changing the map mid-run."""
    integ = mcubes.Integrator([(0, 1)], **OPTS)

    def f(x):
        integ.edges()
        return poly(x)

    with pytest.raises(RuntimeError, match="in use by another thread"):
        integ.integrate(f)
    assert integ.integrate(poly).iterations == 3


def test_separate_integrators_run_concurrently():
    """One Integrator per thread: runs overlap and each gives the bits of a run alone."""
    alone = mcubes.Integrator([(0, 1)] * 2, **OPTS).integrate(poly)
    a, b = mcubes.Integrator([(0, 1)] * 2, **OPTS), mcubes.Integrator([(0, 1)] * 2, **OPTS)
    results = {}

    def inside():
        results["b"] = b.integrate(poly)  # while a's run is blocked

    out = run_blocked(a, inside)
    assert_same_result(results["b"], alone)
    assert_same_result(out["result"], alone)
