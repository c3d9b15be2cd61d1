"""Weighted samples of a trained Integrator (sample, random_batch; core/weighted_sample.hpp): a weighted
histogram of a derived quantity against its exact distribution (chi-square at fixed seeds), the integral
as the weighted sum, batches bitwise the whole sample, and the errors."""

import math

import numpy as np
import pytest

import mcubes

MU, SIGMA = np.array([0.3, 0.6]), np.array([0.06, 0.1])


def _norm(j):
    s = SIGMA[j] * math.sqrt(2)
    return 0.5 * (math.erf((1 - MU[j]) / s) - math.erf(-MU[j] / s))


def gaussians(x):
    """A product of two Gaussians on [0,1]^2, normalised to 1 over the square."""
    t = (x - MU) / SIGMA
    return np.prod(np.exp(-0.5 * t * t) / (SIGMA * math.sqrt(2 * math.pi)), axis=1) / (_norm(0) * _norm(1))


def _cdf0(a):
    return 0.5 * math.erfc((MU[0] - a) / (SIGMA[0] * math.sqrt(2)))


def _trained(stratification):
    integ = mcubes.Integrator([(0, 1)] * 2, calls_per_iteration=20000, seed=5, stratification=stratification)
    integ(gaussians, max_iterations=5, adapt_iterations=5, skip=0, min_iterations=5)
    return integ


@pytest.mark.parametrize("stratification", ["uniform", "adaptive"])
def test_weighted_histogram_matches_the_exact_distribution(stratification):
    integ = _trained(stratification)
    chi2, dof = 0.0, 0
    edges = np.linspace(0, 1, 21)
    exact = np.array([(_cdf0(b) - _cdf0(a)) / _norm(0) for a, b in zip(edges[:-1], edges[1:])])
    for seed in (1, 2, 3):
        x, w = integ.sample(100000, seed=seed)
        assert x.shape == (100000, 2) and w.shape == (100000,)
        z = w * gaussians(x)
        assert abs(z.sum() - 1) < 5 * math.sqrt((z * z).sum())
        h, _ = np.histogram(x[:, 0], bins=edges, weights=z)
        h2, _ = np.histogram(x[:, 0], bins=edges, weights=z * z)
        var = h2 - h * h / len(z)  # the unstratified bound of each bin's variance
        keep = exact > 1e-6
        chi2 += float(((h - exact)[keep] ** 2 / var[keep]).sum())
        dof += int(keep.sum())
    # The bound overestimates the stratified variance, so chi2 falls below dof; a wrong weight rises far above.
    assert chi2 < dof + 5 * math.sqrt(2 * dof), (chi2, dof)


def test_batches_are_bitwise_the_whole_sample_and_seeds_differ():
    integ = _trained("adaptive")
    x, w = integ.sample(10007, seed=3)
    parts = list(integ.random_batch(10007, seed=3, batch_size=1000))
    assert len(parts) == 11
    assert np.array_equal(np.concatenate([p[0] for p in parts]), x)
    assert np.array_equal(np.concatenate([p[1] for p in parts]), w)
    x2, _ = integ.sample(10007, seed=4)
    assert not np.array_equal(x, x2)
    default = list(integ.random_batch(batch_size=1 << 30))  # n = calls_per_iteration, seed = the integrator's
    assert len(default) == 1 and default[0][1].shape == (20000,)
    assert np.array_equal(default[0][0], integ.sample(20000)[0])


def test_bad_arguments():
    integ = mcubes.Integrator([(0, 1)] * 2)
    with pytest.raises(ValueError, match="at least 1"):
        integ.sample(0)
    with pytest.raises(TypeError, match="integer"):
        integ.sample(1.5)
    with pytest.raises(ValueError, match="batch_size"):
        next(integ.random_batch(10, batch_size=0))
    x, w = integ.sample(50)  # untrained: plain stratified points, weights summing to the volume
    assert np.isclose(w.sum(), 1.0, rtol=0, atol=1e-12)
