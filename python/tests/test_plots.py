"""The plots (mcubes.plots, matplotlib): what they draw, from a Result, an Integrator and a report."""

import json

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import mcubes  # noqa: E402
from mcubes import plots  # noqa: E402
from conftest import poly, poly_exact  # noqa: E402


def _run():
    return mcubes.vegas(poly, [(0, 1)] * 3, calls_per_iteration=20000, max_iterations=8, adapt_iterations=5,
                        skip=2, rel_tol=1e-12, seed=5)


def test_convergence_draws_every_iteration_and_the_average():
    r = _run()
    ax = plots.plot_convergence(r, exact=poly_exact(3))
    acc = np.asarray(r.records.accumulated)
    bars = {c.get_label(): c.lines[0] for c in ax.containers}  # the error bars' data lines
    assert len(bars["iteration (accumulated)"].get_xdata()) == int(acc.sum())
    assert len(bars["iteration (not accumulated)"].get_xdata()) == int((~acc).sum())
    assert np.array_equal(bars["iteration (accumulated)"].get_ydata(), np.asarray(r.records.estimate)[acc])
    average = [line for line in ax.get_lines() if line.get_label() == "weighted average"][0]
    assert np.array_equal(average.get_ydata(), np.asarray(r.records.weighted_estimate)[acc])
    assert any(line.get_label() == "exact" for line in ax.get_lines())
    assert len(ax.collections) >= 1  # the one-sigma band
    chi2 = [line for line in ax.chi2_axes.get_lines() if line.get_label() == "chi2/dof (right axis)"][0]
    second = np.flatnonzero(acc)[1]  # chi2/dof from the second accumulated iteration on
    assert np.array_equal(chi2.get_ydata(), np.asarray(r.records.chi2_dof)[second:])
    assert "chi2" in ax.chi2_axes.get_ylabel()
    assert len(r.plot().containers) == 2  # the method draws the same
    assert mcubes.plot_convergence is plots.plot_convergence and mcubes.plot_map is plots.plot_map


def test_convergence_from_a_command_report(tmp_path):
    report = {"integrand": {"name": "f4"}, "exact": 0.5, "result_text": "0.50(1)", "status": "converged",
              "iterations": [{"index": 0, "estimate": 0.6, "error": 0.1, "weighted_estimate": None,
                              "weighted_error": None, "accumulated": False},
                             {"index": 1, "estimate": 0.52, "error": 0.02, "weighted_estimate": 0.52,
                              "weighted_error": 0.02, "accumulated": True},
                             {"index": 2, "estimate": 0.49, "error": 0.02, "weighted_estimate": 0.505,
                              "weighted_error": 0.014, "accumulated": True}]}
    ax = plots.plot_convergence(report)
    average = [line for line in ax.get_lines() if line.get_label() == "weighted average"][0]
    assert list(average.get_xdata()) == [2, 3]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    out = tmp_path / "r.png"
    assert plots.main([str(path), "--out", str(out)]) == 0
    assert out.stat().st_size > 1000
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"estimate": 1}))
    assert plots.main([str(bad), "--out", str(out)]) == 2
    with pytest.raises(ValueError, match="iterations"):
        plots.plot_convergence({"estimate": 1})


def test_map_grid_and_density():
    integ = mcubes.Integrator([(0, 1)] * 2, calls_per_iteration=20000, n_bins=50)
    integ.integrate(lambda x: np.exp(-50 * ((x[:, 0] - 0.3) ** 2 + (x[:, 1] - 0.6) ** 2)), max_iterations=5,
                    adapt_iterations=5, skip=0, min_iterations=5, rel_tol=1e-12)
    e = integ.edges()
    ax = integ.plot_map()
    vertical, horizontal = ax.collections[0], ax.collections[1]
    assert len(vertical.get_segments()) == 51 and len(horizontal.get_segments()) == 51
    assert np.allclose([s[0][0] for s in vertical.get_segments()], e[0])
    assert np.allclose([s[0][1] for s in horizontal.get_segments()], e[1])
    ax = plots.plot_map(e, axes=(0,))
    heights = ax.patches[0].get_data().values
    assert np.allclose(heights, 1 / 50 / np.diff(e[0]))
    assert heights.max() > 2 * heights.min()  # the map crowds its bins near the peak
    uniform = np.tile(np.linspace(0, 1, 11), (3, 1))
    assert np.allclose(plots.plot_map(uniform, axes=(2,)).patches[0].get_data().values, 1)
    with pytest.raises(ValueError, match="axes"):
        plots.plot_map(uniform, axes=(0, 3))
    with pytest.raises(ValueError, match="shape"):
        plots.plot_map(np.zeros(4))
