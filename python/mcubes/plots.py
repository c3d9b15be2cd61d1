"""Plots of a run with matplotlib: the convergence of the iterations and the adaptive map.

plot_convergence(result) draws each iteration's estimate with its error bar and the weighted average
with its one-sigma band after each iteration (and the exact value, when given), with the chi2/dof of
the average on a right-hand axis; plot_map(integrator)
draws the map's grid on two axes, as vegas's ``integ.map.show_grid()``, or the sampling density along
one axis. Both take an Axes to draw into (a new figure otherwise) and return it; matplotlib is
imported only when a plot is made. From the shell, ``python3 -m mcubes.plots REPORT.json [--exact X]
[--out FILE] [--map-out FILE]`` draws the convergence of a ``mcubes integrate --json`` report (and its
map, written with ``--json-map``); ``mcubes plot REPORT.json`` runs this file (it needs NumPy and
matplotlib only, not the native module).
"""

import argparse
import json
import math
import sys

import numpy as np


def _axes(ax):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt
    return plt.figure().add_subplot()


def _records(result):
    """index, estimate, error, weighted estimate and error, accumulated, chi2/dof: arrays, from a Result
    or from the dict of a `mcubes integrate --json` report (its "iterations" list; null or absent is
    NaN)."""
    if isinstance(result, dict):
        its = result.get("iterations")
        if not isinstance(its, list):
            raise ValueError("plot_convergence: the report has no 'iterations' list (a `mcubes integrate --json` report?)")

        def col(k, dtype=float):
            return np.array([np.nan if it.get(k) is None else it[k] for it in its], dtype=dtype)

        return (col("index", int), col("estimate"), col("error"), col("weighted_estimate"), col("weighted_error"),
                np.array([bool(it.get("accumulated")) for it in its]), col("chi2_dof"))
    r = result.records
    return (np.asarray(r.index, dtype=int), np.asarray(r.estimate, dtype=float), np.asarray(r.error, dtype=float),
            np.asarray(r.weighted_estimate, dtype=float), np.asarray(r.weighted_error, dtype=float),
            np.asarray(r.accumulated, dtype=bool), np.asarray(r.chi2_dof, dtype=float))


def plot_convergence(result, *, exact=None, ax=None):
    """Draws the iterations of `result` (a Result of vegas(), Integrator.integrate() or a vector
    run's component 0; or the dict of a `mcubes integrate --json` report): each iteration's estimate
    with its error bar (filled markers: accumulated into the result; hollow: skipped, all zero or
    underflow), the weighted average after each iteration with its one-sigma band, `exact` as a
    dashed line when given, and the chi2/dof of the average after each iteration (from the second
    accumulated one) as grey steps on a right-hand axis (`ax.chi2_axes`), with chi2/dof = 1 dotted.
    x: the iteration number (1-based). Returns the matplotlib Axes. Raises ValueError for a report
    without iterations."""
    index, est, err, west, werr, acc, chi2 = _records(result)
    own_figure = ax is None
    ax = _axes(ax)
    n = index + 1
    ax.errorbar(n[acc], est[acc], yerr=err[acc], fmt="o", ms=4, capsize=2, label="iteration (accumulated)")
    if (~acc).any():
        ax.errorbar(n[~acc], est[~acc], yerr=err[~acc], fmt="o", ms=4, capsize=2, mfc="none",
                    label="iteration (not accumulated)")
    ok = np.isfinite(west) & np.isfinite(werr)
    if ok.any():
        ax.plot(n[ok], west[ok], "-", lw=1.5, label="weighted average")
        ax.fill_between(n[ok], (west - werr)[ok], (west + werr)[ok], alpha=0.25, lw=0, label="average +- 1 sigma")
    if exact is not None:
        ax.axhline(float(exact), ls="--", lw=1, color="k", label="exact")
    ax.set_xlabel("iteration")
    ax.set_ylabel("estimate")
    handles, labels = ax.get_legend_handles_labels()
    ax.chi2_axes = None
    has_chi2 = np.isfinite(chi2) & acc & np.isfinite(west)
    if np.count_nonzero(has_chi2) >= 2:  # chi2/dof of the average: from the second accumulated iteration
        first = np.flatnonzero(has_chi2)[1]
        right = ax.twinx()
        right.step(n[first:][has_chi2[first:]], chi2[first:][has_chi2[first:]], where="mid", color="0.45", lw=1,
                   label="chi2/dof (right axis)")
        right.axhline(1.0, ls=":", lw=1, color="0.45")
        right.set_ylabel("chi2/dof of the average", color="0.35")
        right.set_ylim(bottom=0)
        ax.chi2_axes = right
        h2, l2 = right.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    ax.legend(handles, labels, loc="best", fontsize="small")
    if own_figure:
        ax.figure.tight_layout()  # both axes' labels inside the figure
    return ax


def _edges(source):
    edges = source.edges() if hasattr(source, "edges") and callable(source.edges) else source
    edges = np.asarray(edges, dtype=float)
    if edges.ndim != 2 or edges.shape[1] < 2:
        raise ValueError(f"plot_map: the map must have shape (d, n_bins + 1), got {edges.shape}")
    return edges


def plot_map(source, *, axes=(0, 1), every=1, ax=None):
    """Draws the adaptive map of `source` (an Integrator, or its edges(): an array of shape
    (d, n_bins + 1) of unit coordinates). With two axes (i, j), the grid, as vegas's
    map.show_grid(): the bin edges of axis i as vertical lines and of axis j as horizontal lines
    (every `every`-th edge; the bins crowd where the map puts its samples). With one axis (i,), the
    map's sampling density along it: 1 / (n_bins * width) per bin, a step plot (1 everywhere for a
    uniform map). Returns the matplotlib Axes. Raises ValueError for a bad axis or map shape."""
    e = _edges(source)
    d = e.shape[0]
    axes = tuple(int(a) for a in axes)
    if len(axes) not in (1, 2) or any(a < 0 or a >= d for a in axes):
        raise ValueError(f"plot_map: axes must be one or two of 0 .. {d - 1}, got {axes}")
    step = max(1, int(every))
    ax = _axes(ax)
    if len(axes) == 1:
        x = e[axes[0]]
        density = 1.0 / (len(x) - 1) / np.diff(x)
        ax.stairs(density, x)
        ax.set_xlabel(f"x[{axes[0]}] (unit coordinate)")
        ax.set_ylabel("sampling density")
        ax.set_xlim(0, 1)
        return ax
    i, j = axes
    ax.vlines(e[i][::step], 0, 1, lw=0.5)
    ax.hlines(e[j][::step], 0, 1, lw=0.5)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel(f"x[{i}] (unit coordinate)")
    ax.set_ylabel(f"x[{j}] (unit coordinate)")
    ax.set_title(f"adaptive map, {e.shape[1] - 1} bins per axis" + (f" (every {step}th edge)" if step > 1 else ""))
    return ax


def plot_map_axes(edges, *, fig=None, max_axes=8):
    """The sampling density of the map along each axis (plot_map with one axis), one panel per axis
    (the first max_axes), in a new figure (or `fig`). Returns the figure."""
    import matplotlib.pyplot as plt
    e = _edges(edges)
    k = min(e.shape[0], int(max_axes))
    cols = 2 if k > 1 else 1
    rows = (k + cols - 1) // cols
    fig = fig or plt.figure(figsize=(5.5 * cols, 2.6 * rows))
    for a in range(k):
        ax = fig.add_subplot(rows, cols, a + 1)
        plot_map(e, axes=(a,), ax=ax)
    more = f" (the first {k} of {e.shape[0]} axes)" if k < e.shape[0] else ""
    fig.suptitle(f"adaptive map: sampling density per axis, {e.shape[1] - 1} bins{more}")
    fig.tight_layout()
    return fig


def main(argv=None):
    """python3 -m mcubes.plots REPORT.json [--exact X] [--out FILE] [--map-out FILE]: the convergence of a
    run from its `mcubes integrate --json` report, shown or written to FILE (PNG, PDF, SVG: by its
    suffix); with --map-out, the map's sampling density per axis too (the report's "map", written by
    `--json-map`). The report's exact value is drawn when it has one and --exact is not given. Exit
    code 2 for a file that is not such a report, or --map-out for a report without a map."""
    p = argparse.ArgumentParser(prog="python3 -m mcubes.plots", description=main.__doc__.split("\n")[0])
    p.add_argument("report", help="a JSON report of `mcubes integrate --json FILE`")
    p.add_argument("--exact", type=float, default=None, help="the exact value, drawn as a dashed line")
    p.add_argument("--out", default=None, help="write the figure to this file instead of showing it")
    p.add_argument("--map-out", default=None, help="also write the map's sampling density per axis to this file")
    a = p.parse_args(argv)
    try:
        with open(a.report) as fh:
            report = json.load(fh)
        exact = a.exact
        if exact is None and isinstance(report.get("exact"), (int, float)) and math.isfinite(report["exact"]):
            exact = report["exact"]
        import matplotlib
        if a.out is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        ax = plot_convergence(report, exact=exact)
        name = (report.get("integrand") or {}).get("name")
        if name:
            ax.set_title(f"{name}: {report.get('result_text') or ''} ({report.get('status', '')})")
        if a.out is not None:
            ax.figure.savefig(a.out, dpi=120, bbox_inches="tight")
        if a.map_out is not None:
            m = report.get("map")
            if not isinstance(m, dict) or "edges" not in m:
                raise ValueError("the report has no map (`mcubes integrate --json FILE --json-map` writes it)")
            plot_map_axes(m["edges"]).savefig(a.map_out, dpi=120, bbox_inches="tight")
        if a.out is None:
            plt.show()
    except (OSError, ValueError, AttributeError, TypeError) as e:
        print(f"mcubes.plots: {a.report}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
