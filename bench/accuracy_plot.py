#!/usr/bin/env python3
"""Figure 1 of the m-Cubes paper (section 5.1) from `mcubes-bench accuracy --csv` output.

Usage: python3 bench/accuracy_plot.py [--planned-seeds N] [--newer-wins] [--summary FILE]
                                      runs.csv [runs2.csv ...] outdir/

The run CSVs (one study split over several invocations, e.g. levels 1-3 in one session and 4-6 in
another) are merged and checked as by bench/accuracy_summary.py (same options); --summary also
writes the per-level summary recomputed from the merged runs.

One PNG per integrand (outdir/accuracy_<integrand>.png): x = -log10(requested rel. tolerance),
y = achieved true relative error |estimate - exact| / |exact| of the runs that claimed convergence
(log axis), one box per tolerance level (box: quartiles, line: median, whiskers: minimum and
maximum, open circles: outliers beyond 1.5 IQR from the box), and the requested tolerance as an
orange point per level. The deepest level reached (the last level with at least half of the runs
converged before the first failed level) is marked by a dashed vertical line; a failed level's box
is drawn in red, and levels after the ladder's stop (run in a split session) in grey. Levels
without a converged run show only the orange point.
Exit status: 0 on success, 1 on bad input files, 2 on bad arguments or if matplotlib is not importable.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_summary as acc  # noqa: E402  (the merge and the ladder rule, shared with accuracy_depth.py)


def quartiles(s):
    """First and third quartile of a sorted list, as the box of the plot (index rule, no interpolation)."""
    n = len(s)
    return s[int(0.25 * (n - 1))], s[int(math.ceil(0.75 * (n - 1)))]


def main(argv):
    ap = argparse.ArgumentParser(description="Figure-1 style box plots of merged accuracy run CSVs.")
    acc.add_run_arguments(ap)
    ap.add_argument("outdir", help="folder for accuracy_<integrand>.png (created if missing)")
    ap.add_argument("--summary", help="also write the per-level summary CSV of the merged runs here")
    args = ap.parse_args(argv[1:])
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("accuracy_plot.py: matplotlib is not importable; install it (Debian: apt-get install "
              "python3-matplotlib, or pip install matplotlib), or run /usr/bin/python3", file=sys.stderr)
        return 2

    merged = acc.load_runs(ap, args, "accuracy_plot.py")
    if merged is None:
        return 1
    rows = acc.summarise(merged, args.planned_seeds)
    if args.summary:
        acc.write_summary(rows, args.summary)
    os.makedirs(args.outdir, exist_ok=True)

    for name in acc.integrand_order({n for n, _ in merged}):
        levels = [r for r in rows if r["integrand"] == name]  # ascending level = descending tolerance
        xs = [-math.log10(r["tolerance"]) for r in levels]
        tols = [r["tolerance"] for r in levels]
        width = 0.35 * (min(b - a for a, b in zip(xs, xs[1:])) if len(xs) > 1 else 0.7)
        fig, ax = plt.subplots(figsize=(6.4, 4.8))
        floor = 1e-17  # a run that hit the exact value to the last bit: drawn at the floor of the log axis
        for x, r in zip(xs, levels):
            ys = sorted(max(run["true_rel_error"], floor) for run in merged[(name, r["level"])]
                        if run["status"] == "converged")
            if not ys:
                continue
            colour = {"FAILED": "tab:red", "after_stop": "grey"}.get(r["ladder"], "tab:blue")
            # whiskers min..max as in the paper; outliers (beyond 1.5 IQR) drawn on top as points
            ax.boxplot([ys], positions=[x], widths=width, whis=(0, 100), showfliers=False, manage_ticks=False,
                       medianprops={"color": colour}, boxprops={"color": colour}, whiskerprops={"color": colour},
                       capprops={"color": colour})
            q1, q3 = quartiles(ys)
            lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
            out = [v for v in ys if v < lo or v > hi]
            if out:
                ax.plot([x] * len(out), out, "o", mfc="none", mec="black", ms=4)
        ax.plot(xs, tols, "o", color="tab:orange", ms=7, label="requested tolerance", zorder=3)
        deepest = [x for x, r in zip(xs, levels) if r["ladder"] == "deepest"]
        if deepest:
            ended = any(r["ladder"] == "FAILED" for r in levels)
            ax.axvline(deepest[0], color="tab:green", ls="--", lw=1, alpha=0.7, zorder=0,
                       label="deepest level reached" if ended else "deepest level so far (no level failed yet)")
        # legend entries for the box colours that occur (proxy lines: boxplot draws no labelled artist)
        for state, colour, label in (("FAILED", "tab:red", "failed level (< half converged)"),
                                     ("after_stop", "grey", "after the ladder's stop")):
            if any(r["ladder"] == state and r["converged"] for r in levels):
                ax.plot([], [], "s", mfc="none", mec=colour, label=label)
        ax.set_yscale("log")
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{x:.2f}" for x in xs])
        ax.set_xlabel(r"$-\log_{10}(\tau_{rel})$ (requested)")
        ax.set_ylabel("true relative error of converged runs")
        counts = ", ".join(f"{r['converged']}/{r['runs']}" for r in levels)
        ax.set_title(f"{name} ({levels[0]['d']}-D): m-Cubes accuracy\nconverged/runs per level: {counts}", fontsize=9)
        ax.grid(True, which="major", axis="y", alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
        fig.tight_layout()
        out = os.path.join(args.outdir, f"accuracy_{name}.png")
        fig.savefig(out, dpi=120)
        plt.close(fig)
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
