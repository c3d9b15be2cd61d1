"""Checkpoints from Python: checkpoint= and resume= continue a run bitwise, an Integrator pickles and
continues bitwise, save()/load() through a file, refusals of another problem or a damaged file, and
Ctrl-C raising mcubes.Interrupted with the completed iterations (which a resume continues)."""

import os
import pickle
import shutil
import signal
import threading
import time

import numpy as np
import pytest

import mcubes
from conftest import assert_same_result, poly, same_bits

BASE = dict(calls_per_iteration=20000, seed=12, rel_tol=1e-12, max_iterations=8, adapt_iterations=5, skip=2,
            min_iterations=2)


def stop_after(k):
    return lambda info: info["index"] + 1 >= k


def test_a_stopped_run_resumed_from_its_checkpoint_has_the_uninterrupted_bits(tmp_path):
    whole = mcubes.vegas(poly, [(0, 1)] * 3, threads=2, **BASE)
    assert whole.iterations == 8
    for k in (1, 3, 6):
        path = tmp_path / f"run{k}.ckpt"
        part = mcubes.vegas(poly, [(0, 1)] * 3, threads=2, checkpoint=path, callback=stop_after(k), **BASE)
        assert part.status == "interrupted" and part.iterations == k
        info = mcubes.read_checkpoint(path)
        assert info["completed_iterations"] == k and info["integrand"] == "python conftest.poly"
        assert info["options"]["calls_per_iteration"] == 20000 and info["lower"] == [0, 0, 0]
        resumed = mcubes.vegas(poly, [(0, 1)] * 3, threads=1, checkpoint=path, resume=True, **BASE)
        assert_same_result(resumed, whole)
        # a resume of the finished run's checkpoint ends at once with the same bits
        assert_same_result(mcubes.vegas(poly, [(0, 1)] * 3, threads=3, resume=path, **BASE), whole)


def test_resume_true_without_a_file_starts_the_run(tmp_path):
    path = tmp_path / "fresh.ckpt"
    r = mcubes.vegas(poly, [(0, 1)] * 2, checkpoint=path, resume=True, **BASE)
    assert_same_result(r, mcubes.vegas(poly, [(0, 1)] * 2, **BASE))
    assert path.exists() and mcubes.read_checkpoint(path)["completed_iterations"] == 8
    with pytest.raises(ValueError, match="resume=True continues from the checkpoint= file"):
        mcubes.vegas(poly, [(0, 1)] * 2, resume=True, **BASE)
    with pytest.raises(FileNotFoundError):
        mcubes.vegas(poly, [(0, 1)] * 2, resume=tmp_path / "missing.ckpt", **BASE)


def test_another_problem_or_a_damaged_file_is_refused(tmp_path):
    path = tmp_path / "r.ckpt"
    mcubes.vegas(poly, [(0, 1)] * 3, checkpoint=path, callback=stop_after(3), **BASE)
    with pytest.raises(ValueError, match="integrand 'python conftest.poly', not 'python test_checkpoint.other'"):
        mcubes.vegas(poly, [(0, 1)] * 3, resume=path, tag="python test_checkpoint.other", **BASE)
    with pytest.raises(ValueError, match="axis 2"):
        mcubes.vegas(poly, [(0, 1), (0, 1), (0, 2)], resume=path, **BASE)
    with pytest.raises(ValueError, match="dimension 3, not 2"):
        mcubes.vegas(poly, [(0, 1)] * 2, resume=path, **BASE)
    with pytest.raises(ValueError, match="calls_per_iteration is 20000, not 30000"):
        mcubes.vegas(poly, [(0, 1)] * 3, resume=path, **dict(BASE, calls_per_iteration=30000))
    # what only moves the end may change: a longer run continues the shorter one's iterations
    longer = mcubes.vegas(poly, [(0, 1)] * 3, resume=path, **dict(BASE, max_iterations=11))
    assert_same_result(longer, mcubes.vegas(poly, [(0, 1)] * 3, **dict(BASE, max_iterations=11)))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    damaged = tmp_path / "damaged.ckpt"
    damaged.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="checksum"):
        mcubes.vegas(poly, [(0, 1)] * 3, resume=damaged, **BASE)
    damaged.write_bytes(path.read_bytes()[:40])
    with pytest.raises(ValueError, match="checksum|truncated"):
        mcubes.read_checkpoint(damaged)


def test_a_pickled_integrator_continues_bitwise():
    integ = mcubes.Integrator([(0, 1)] * 3, calls_per_iteration=20000, seed=5, rel_tol=1e-12, threads=2)
    integ.integrate(poly, max_iterations=4, adapt_iterations=4, skip=0, min_iterations=4)
    copy = pickle.loads(pickle.dumps(integ))
    assert copy.next_iteration == integ.next_iteration == 4
    assert np.array_equal(copy.edges(), integ.edges())
    measure = dict(max_iterations=3, adapt_iterations=1, skip=0, min_iterations=1)
    assert_same_result(copy.integrate(poly, **measure), integ.integrate(poly, **measure))
    assert np.array_equal(copy.edges(), integ.edges())


def test_save_and_load_through_a_file(tmp_path):
    integ = mcubes.Integrator([(0, 1)] * 2, calls_per_iteration=10000, seed=3, rel_tol=1e-12)
    integ.integrate(poly, max_iterations=3, adapt_iterations=3, skip=0, min_iterations=3)
    path = tmp_path / "trained.ckpt"
    integ.save(path)
    loaded = mcubes.Integrator.load(path, threads=1)
    assert loaded.next_iteration == 3 and np.array_equal(loaded.edges(), integ.edges())
    measure = dict(max_iterations=2, adapt_iterations=0, skip=0, min_iterations=1)
    assert_same_result(loaded.integrate(poly, **measure), integ.integrate(poly, **measure))
    with pytest.raises(ValueError, match="not 'other'"):
        mcubes.Integrator.load(path, tag="other")


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_raises_interrupted_with_the_completed_iterations_and_a_resume_continues(tmp_path, threads):
    def slow(x):
        time.sleep(0.002)
        return poly(x)

    opts = dict(calls_per_iteration=50000, max_iterations=100000, min_iterations=1, rel_tol=1e-15, threads=threads,
                seed=9)
    path = tmp_path / "interrupted.ckpt"
    timer = threading.Timer(0.7, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(mcubes.Interrupted) as caught:
            mcubes.vegas(slow, [(0, 1)] * 2, checkpoint=path, **opts)
    finally:
        timer.cancel()
    part = caught.value.result
    assert isinstance(caught.value, KeyboardInterrupt) and part.status == "interrupted"
    k = part.iterations
    assert mcubes.read_checkpoint(path)["completed_iterations"] == k
    # continued to k + 2 iterations: the bits of a run of k + 2 iterations never stopped
    end = dict(opts, max_iterations=k + 2)
    resumed = mcubes.vegas(slow, [(0, 1)] * 2, checkpoint=path, resume=True, **end)
    assert resumed.iterations == k + 2
    assert_same_result(resumed, mcubes.vegas(slow, [(0, 1)] * 2, **end))


def test_ctrl_c_in_a_vector_run_raises_interrupted_with_its_iterations():
    def slow2(x):
        time.sleep(0.002)
        v = poly(x)
        return np.stack([v, 2 * v], axis=1)

    timer = threading.Timer(0.7, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(mcubes.Interrupted) as caught:
            mcubes.vegas_vector(slow2, [(0, 1)] * 2, calls_per_iteration=50000, max_iterations=100000,
                                min_iterations=1, rel_tol=1e-15, threads=2)
    finally:
        timer.cancel()
    r = caught.value.result
    assert isinstance(r, mcubes.VectorResult) and r.status == "interrupted"
    assert len(r.records.estimate) == r.iterations


needs_jit = pytest.mark.skipif(not mcubes._mcubes.has_jit, reason="this build has no run-time compilation")
needs_cxx = pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None, reason="no C++ compiler")


@needs_jit
@needs_cxx
def test_an_expression_run_stopped_then_resumed_has_the_uninterrupted_bits(tmp_path):
    text = "exp(-20 * (x[0] - 0.3) * (x[0] - 0.3)) * (1 + x[1] * x[2])"
    whole = mcubes.vegas(text, [(0, 1)] * 3, threads=2, **BASE)
    assert whole.iterations == 8
    path = tmp_path / "expr.ckpt"
    part = mcubes.vegas(text, [(0, 1)] * 3, threads=1, checkpoint=path, callback=stop_after(3), **BASE)
    assert part.status == "interrupted" and part.iterations == 3
    info = mcubes.read_checkpoint(path)
    assert info["integrand"] == "expr " + text and info["completed_iterations"] == 3
    assert_same_result(mcubes.vegas(text, [(0, 1)] * 3, threads=3, checkpoint=path, resume=True, **BASE), whole)
    with pytest.raises(ValueError, match="integrand 'expr exp"):
        mcubes.vegas("x[0] * x[1] * x[2]", [(0, 1)] * 3, resume=path, **BASE)
    with pytest.raises(ValueError, match="tag= names a callable"):
        mcubes.vegas(text, [(0, 1)] * 3, checkpoint=path, tag="mine", **BASE)


def assert_same_vector(a, b):
    """Every number of two VectorResults, bit for bit (the iterations' estimates and covariances too)."""
    for k in ("estimate", "error", "covariance", "chi2_dof", "iteration_estimates", "iteration_covariances"):
        assert same_bits(getattr(a, k), getattr(b, k)), k
    assert same_bits(a.chi2_dof_vector, b.chi2_dof_vector) and (a.status, a.iterations) == (b.status, b.iterations)


def moments(x):
    v = poly(x)
    return np.stack([v, v * x[:, 0], v * (x[:, 1] - 0.3)], axis=1)


def test_a_vector_run_stopped_then_resumed_has_the_uninterrupted_bits(tmp_path):
    whole = mcubes.vegas_vector(moments, [(0, 1)] * 3, threads=2, **BASE)
    assert whole.iterations == 8
    for k in (1, 4):
        path = tmp_path / f"vector{k}.ckpt"
        part = mcubes.vegas_vector(moments, [(0, 1)] * 3, threads=1, checkpoint=path, callback=stop_after(k), **BASE)
        assert part.status == "interrupted" and part.iterations == k
        info = mcubes.read_checkpoint(path)
        assert info["completed_iterations"] == k and info["integrand"] == "python test_checkpoint.moments"
        resumed = mcubes.vegas_vector(moments, [(0, 1)] * 3, threads=3, checkpoint=path, resume=True, **BASE)
        assert_same_vector(resumed, whole)
    # a scalar run's checkpoint is not a vector run's, nor the reverse
    scalar = tmp_path / "scalar.ckpt"
    mcubes.vegas(poly, [(0, 1)] * 3, checkpoint=scalar, callback=stop_after(2), **BASE)
    with pytest.raises(ValueError, match="of a scalar integrand, not of one of 3 components"):
        mcubes.vegas_vector(moments, [(0, 1)] * 3, resume=scalar, tag="python conftest.poly", **BASE)
    with pytest.raises(ValueError, match="vector integrand of 3 components, not of a scalar one"):
        mcubes.vegas(poly, [(0, 1)] * 3, resume=tmp_path / "vector4.ckpt", tag="python test_checkpoint.moments",
                     **BASE)


def peak(x, p):
    c, w = p
    r2 = w + ((x - c) ** 2).sum(axis=1)
    return w / r2


PEAKS = [(0.31, 1e-3), (0.5, 0.3), (0.72, 2e-2), (0.1, 5e-3)]
BATCH = dict(calls_per_iteration=10000, seed=4, rel_tol=1e-12, adapt_iterations=4, skip=1, min_iterations=1)


def assert_same_batch(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert_same_result(x, y)


def test_a_batch_continued_from_its_checkpoint_has_the_uninterrupted_bits(tmp_path):
    whole = mcubes.vegas_batch(peak, [(0, 1)] * 3, PEAKS, max_iterations=6, threads=2, **BATCH)
    path = tmp_path / "batch.ckpt"
    # (checkpoint_every: no write before the end, which then holds every integral's 3 iterations)
    short = mcubes.vegas_batch(peak, [(0, 1)] * 3, PEAKS, max_iterations=3, threads=1, checkpoint=path,
                               checkpoint_every=1000, **BATCH)
    assert [r.iterations for r in short] == [3] * 4
    info = mcubes.read_checkpoint(path)
    assert info["integrand"] == "python test_checkpoint.peak" and info["integrals"] == 4
    assert info["integrals_completed_iterations"] == [3] * 4
    # what only moves the end may change: every integral continues its 3 iterations to 6
    longer = mcubes.vegas_batch(peak, [(0, 1)] * 3, PEAKS, max_iterations=6, threads=3, checkpoint=path, resume=True,
                                **BATCH)
    assert_same_batch(longer, whole)
    for a, b in zip(longer, short):  # continued, not run again: the first 3 iterations' timings are the file's
        assert list(a.records.seconds[:3]) == list(b.records.seconds)
    assert_same_batch(mcubes.vegas_batch(peak, [(0, 1)] * 3, PEAKS, max_iterations=6, resume=path, **BATCH), whole)
    moved = list(PEAKS)
    moved[1] = (0.5, 0.31)
    with pytest.raises(ValueError, match=r"its integral 1 has the parameters \(0.5, 0.2999"):
        mcubes.vegas_batch(peak, [(0, 1)] * 3, moved, max_iterations=6, resume=path, **BATCH)
    with pytest.raises(ValueError, match="batch of 4 integrals, not 3"):
        mcubes.vegas_batch(peak, [(0, 1)] * 3, PEAKS[:3], max_iterations=6, resume=path, **BATCH)
    with pytest.raises(ValueError, match="calls_per_iteration is 10000, not 20000"):
        mcubes.vegas_batch(peak, [(0, 1)] * 3, PEAKS, max_iterations=6, resume=path,
                           **dict(BATCH, calls_per_iteration=20000))
    with pytest.raises(ValueError, match="not of one run"):
        mcubes.vegas(poly, [(0, 1)] * 3, resume=path, tag="python test_checkpoint.peak", **BASE)
    with pytest.raises(TypeError, match=r"numeric parameters .* params\[0\] is dict"):
        mcubes.vegas_batch(lambda x, p: x[:, 0], [(0, 1)] * 3, [{"a": 1}], checkpoint=tmp_path / "d.ckpt")


def test_ctrl_c_stops_a_batch_and_a_resume_continues_it_bitwise(tmp_path):
    def slow_peak(x, p):
        time.sleep(0.01)
        return peak(x, p)

    opts = dict(BATCH, calls_per_iteration=40000, max_iterations=8, threads=2)
    params = PEAKS * 3
    path = tmp_path / "stopped.ckpt"
    timer = threading.Timer(0.7, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(mcubes.Interrupted) as caught:
            mcubes.vegas_batch(slow_peak, [(0, 1)] * 3, params, checkpoint=path, **opts)
    finally:
        timer.cancel()
    done = len(caught.value.results)
    assert done < len(params) and caught.value.result.status == "interrupted"
    resumed = mcubes.vegas_batch(slow_peak, [(0, 1)] * 3, params, checkpoint=path, resume=True, **opts)
    whole = mcubes.vegas_batch(slow_peak, [(0, 1)] * 3, params, **opts)
    assert_same_batch(resumed, whole)
    for a, b in zip(caught.value.results, whole[:done]):  # the integrals completed before the stop
        assert_same_result(a, b)
