"""GPU callables: PyTorch and CuPy functions evaluated on the device (backend='cuda').

Skipped without a CUDA device, without the module's CUDA backend, or without the framework. The
points reach the callable through the CUDA Array Interface (no copy); the CUDA code of the module is
built with --fmad=false, so a GPU callable computing the same IEEE operations as a NumPy one gives
the CPU run's bits.
"""

import math

import numpy as np
import pytest

import mcubes
from conftest import SIGMA_TOLERANCE, assert_same_result, has_cuda_device, poly, poly_exact

pytestmark = pytest.mark.skipif(not (has_cuda_device() and mcubes._mcubes.has_cuda_callables),
                                reason="no CUDA device, or this build of mcubes has no CUDA backend")


def _framework(name):
    return pytest.importorskip(name)


@pytest.mark.parametrize("stratification", ["uniform", "adaptive"])
@pytest.mark.parametrize("module", ["torch", "cupy"])
def test_bitwise_the_numpy_run_on_the_cpu(module, stratification, small_vegas):
    """Either stratification (VEGAS+: the GPU slices cut by the sub-cubes' counts)."""
    xp = _framework(module)
    small_vegas = dict(small_vegas, stratification=stratification)
    for d in (1, 3, 8):
        cpu = mcubes.vegas(poly, [(0, 1)] * d, **small_vegas)
        gpu = mcubes.vegas(poly, [(0, 1)] * d, backend="cuda", array_module=module, **small_vegas)
        assert gpu.backend == "cuda" and gpu.stratification == stratification
        assert_same_result(cpu, gpu)


@pytest.mark.parametrize("stratification", ["uniform", "adaptive"])
def test_slices_and_block_sizes_never_change_the_bits(stratification, small_vegas):
    torch = _framework("torch")
    small_vegas = dict(small_vegas, stratification=stratification)
    f = poly
    ref = mcubes.vegas(f, [(0, 1)] * 3, backend="cuda", **small_vegas)
    calls = []

    def counted(x):
        calls.append(x.shape[0])
        return f(x)

    for tpb, points in ((32, 1), (256, 3000), (1024, 0)):
        calls.clear()
        r = mcubes.vegas(counted, [(0, 1)] * 3, backend="cuda", cuda_threads_per_block=tpb,
                         cuda_array_points=points, **small_vegas)
        assert_same_result(ref, r)
        assert r.n_eval <= sum(calls) < 1.1 * r.n_eval  # every sample once (and the bin-scale probe's)
        if points == 3000:
            assert len(calls) > 2 * r.iterations  # several calls per iteration


def test_known_integral_within_sigma_and_points_on_the_device():
    torch = _framework("torch")
    seen = {}

    def peak(x):
        seen["type"], seen["device"], seen["dtype"] = type(x), x.device, x.dtype
        return torch.exp(-200 * ((x - 0.4) ** 2).sum(dim=1))

    r = mcubes.vegas(peak, [(0, 1)] * 4, backend="cuda", calls_per_iteration=10**6, rel_tol=1e-4, seed=11)
    g = math.sqrt(math.pi / 200) / 2 * (math.erf(0.6 * math.sqrt(200)) + math.erf(0.4 * math.sqrt(200)))
    assert abs(r.estimate - g ** 4) <= SIGMA_TOLERANCE * r.error
    assert r.converged
    assert seen["type"] is torch.Tensor and seen["device"].type == "cuda" and seen["dtype"] == torch.float64


def test_float32_and_column_results_are_taken(small_vegas):
    """A float32 column (n, 1) is taken as the float64 vector of the same values: the same bits."""
    torch = _framework("torch")

    def steps(x):  # floor(4 x0) in 0..7, exact in float32; its integral over [0, 2]^2 is 14
        return torch.floor(4 * x[:, 0])

    ref = mcubes.vegas(steps, [(0, 2)] * 2, backend="cuda", **small_vegas)
    col32 = mcubes.vegas(lambda x: steps(x)[:, None].to(torch.float32), [(0, 2)] * 2, backend="cuda", **small_vegas)
    assert_same_result(ref, col32)
    assert abs(ref.estimate - 14) <= SIGMA_TOLERANCE * ref.error


def test_errors():
    torch = _framework("torch")
    with pytest.raises(ValueError, match="shape"):
        mcubes.vegas(lambda x: x, [(0, 1)] * 2, backend="cuda", array_module="torch")
    with pytest.raises(ZeroDivisionError):
        mcubes.vegas(lambda x: 1 / 0, [(0, 1)] * 2, backend="cuda", array_module="torch")
    with pytest.raises(ValueError, match="array_module"):
        mcubes.vegas(lambda x: x[:, 0], [(0, 1)] * 2, backend="cuda", array_module="jax")
    with pytest.raises(ValueError, match="dimensions"):
        mcubes.vegas(lambda x: x[:, 0], [(0, 1)] * 17, backend="cuda", array_module="torch")
    with pytest.raises(NotImplementedError, match="vegas only"):
        mcubes.plain_mc(lambda x: x[:, 0], [(0, 1)] * 2, backend="cuda")
    with pytest.raises(ValueError, match="on cuda"):
        mcubes.vegas(lambda x: x[:, 0].cpu(), [(0, 1)] * 2, backend="cuda", array_module="torch")


def test_non_finite_value_names_the_cpu_runs_sample(small_vegas):
    torch = _framework("torch")

    def bad_cpu(x):
        return np.where(x[:, 0] < 0.02, np.nan, 1 + x[:, 0])

    def bad_gpu(x):
        return torch.where(x[:, 0] < 0.02, torch.nan, 1 + x[:, 0])

    with pytest.raises(mcubes.NonFiniteIntegrand) as cpu:
        mcubes.vegas(bad_cpu, [(0, 1)] * 2, **small_vegas)
    with pytest.raises(mcubes.NonFiniteIntegrand) as gpu:
        mcubes.vegas(bad_gpu, [(0, 1)] * 2, backend="cuda", cuda_array_points=2000, **small_vegas)
    assert gpu.value.sample_index == cpu.value.sample_index
    assert np.array_equal(gpu.value.point, cpu.value.point)
    assert math.isnan(gpu.value.value)



def test_integrator_keeps_the_map_and_is_the_cpu_integrator_bitwise():
    """Integrator(backend='cuda') with a GPU callable: training then measuring from the kept map gives
    one vegas() run's bits (as the CPU integrator), and the CPU integrator's with the NumPy poly."""
    _framework("torch")
    base = dict(calls_per_iteration=20000, seed=8, rel_tol=1e-12)
    runs = {}
    for backend in ("cpu", "cuda"):
        integ = mcubes.Integrator([(0, 1)] * 3, backend=backend, **base)
        integ.integrate(poly, max_iterations=4, adapt_iterations=4, skip=0, min_iterations=4)
        runs[backend] = (integ.integrate(poly, max_iterations=5, adapt_iterations=0, skip=0, min_iterations=1),
                         integ.edges())
    one = mcubes.vegas(poly, [(0, 1)] * 3, backend="cuda", max_iterations=9, adapt_iterations=4, skip=4,
                       min_iterations=1, **base)
    measured, edges = runs["cuda"]
    assert np.array_equal(measured.records.estimate, one.records.estimate[4:])
    assert_same_result(runs["cpu"][0], measured)
    assert np.array_equal(runs["cpu"][1], edges)
    with pytest.raises(TypeError, match="cuda_array_points"):  # fixed at construction
        mcubes.Integrator([(0, 1)] * 3, backend="cuda", **base).integrate(poly, cuda_array_points=1000)


@pytest.mark.parametrize("module", ["torch", "cupy"])
def test_complex_values_of_a_gpu_callable_are_refused(module, small_vegas):
    """As for NumPy callables: complex values are a TypeError naming their dtype, not their real part."""
    _framework(module)
    with pytest.raises(TypeError, match="must return real values.*complex"):
        mcubes.vegas(lambda x: poly(x) + 1j, [(0, 1)] * 2, backend="cuda", array_module=module, **small_vegas)
    integ = mcubes.Integrator([(0, 1)] * 2, backend="cuda", array_module=module, **small_vegas)
    with pytest.raises(TypeError, match="must return real values.*complex"):
        integ.integrate(lambda x: poly(x) * 1j)
