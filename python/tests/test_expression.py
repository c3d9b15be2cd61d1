"""Expression strings, compiled at run time by the library (include/mcubes/jit.hpp, the system C++
compiler); skipped when this build has no run-time compilation or no compiler is installed."""

import shutil

import pytest

import mcubes
from conftest import SIGMA_TOLERANCE, has_cuda_device, poly_exact

needs_jit = pytest.mark.skipif(not mcubes._mcubes.has_jit, reason="this build has no run-time compilation")
needs_cxx = pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None, reason="no C++ compiler")


@needs_jit
@needs_cxx
def test_expression_vegas_plain_mc_midpoint():
    text = "(1 + 2*x[1]*x[1]*(1-x[1])*(1-x[1])*(1-x[1]) + x[0]*x[0]*(1-x[0])*(1-x[0])*(1-x[0])) * (7*x[0]*x[0]*x[0]*x[0] + 0.01)"
    r = mcubes.vegas(text, [(0, 1)] * 2, rel_tol=1e-4, seed=2)
    assert r.converged and abs(r.estimate - poly_exact(2)) <= SIGMA_TOLERANCE * r.error
    p = mcubes.plain_mc("x[0] * x[1]", [(0, 1)] * 2, samples=100000)
    assert abs(p.estimate - 0.25) <= SIGMA_TOLERANCE * p.error
    m = mcubes.midpoint("x[0] * x[0]", [(0, 1)], 999)
    assert abs(m.estimate - 1 / 3) <= SIGMA_TOLERANCE * m.error + 1e-15


@needs_jit
@needs_cxx
def test_expression_errors():
    with pytest.raises(ValueError):  # a compile error names the text
        mcubes.vegas("x[0] +* 2", [(0, 1)])
    with pytest.raises(mcubes.NonFiniteIntegrand):
        mcubes.vegas("x[0] > 0.5 ? 1.0/0.0 : 1.0", [(0, 1)])


def test_expression_without_jit_is_not_implemented(monkeypatch):
    monkeypatch.setattr(mcubes._mcubes, "has_jit", False)
    with pytest.raises(NotImplementedError, match="jit"):
        mcubes.vegas("x[0]", [(0, 1)])


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
@needs_jit
def test_expression_on_the_gpu():
    s = mcubes.suite.f4(4)
    r = mcubes.vegas(s, s.region, backend="cuda", rel_tol=1e-3)
    assert r.backend == "cuda" and abs(r.estimate - s.exact) <= SIGMA_TOLERANCE * r.error


@pytest.mark.skipif(not has_cuda_device(), reason="no CUDA device")
@needs_jit
def test_an_expression_on_several_devices_has_the_bits_of_one():
    # devices=[0, 0]: two streams of device 0 stand for two GPUs (the same split and exchanges)
    s = mcubes.suite.f4(4)
    opts = dict(backend="cuda", rel_tol=1e-12, max_iterations=6, calls_per_iteration=200000, seed=3)
    one = mcubes.vegas(s, s.region, **opts)
    two = mcubes.vegas(s, s.region, devices=[0, 0], **opts)
    assert two.estimate == one.estimate and two.error == one.error
    assert list(two.records.estimate) == list(one.records.estimate)


@needs_jit
def test_an_expression_on_the_cpu_refuses_several_devices():
    with pytest.raises(ValueError, match="devices"):
        mcubes.vegas("x[0]", [(0, 1)], backend="cpu", devices=[0, 1], calls_per_iteration=2000)
