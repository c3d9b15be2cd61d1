#!/usr/bin/env python3
"""Figure 1 of the m-Cubes paper (section 5.1) from `mcubes-bench accuracy --csv` output.

Usage: python3 bench/accuracy_plot.py results.csv outdir/

One PNG per integrand (outdir/accuracy_<integrand>.png): x = -log10(requested rel. tolerance),
y = achieved true relative error |estimate - exact| / |exact| of the runs that claimed convergence
(log axis), one box per tolerance level (box: quartiles, line: median, whiskers: minimum and
maximum, points: outliers beyond 1.5 IQR from the box), and the requested tolerance as an orange
point per level. Levels without a converged run show only the orange point.
Exit status: 0 on success, 1 on bad input, 2 if matplotlib is not importable.
"""
import csv
import math
import os
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 1
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("accuracy_plot.py: matplotlib is not importable; install it (Debian: apt-get install "
              "python3-matplotlib, or pip install matplotlib)", file=sys.stderr)
        return 2

    path, outdir = argv[1], argv[2]
    # integrand -> (d, {tolerance: [true_rel_error of converged runs]})
    data = {}
    order = []
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            name = row["integrand"]
            if name not in data:
                data[name] = (int(row["d"]), {})
                order.append(name)
            tol = float(row["tolerance"])
            levels = data[name][1]
            levels.setdefault(tol, [])
            if row["status"] == "converged":
                levels[tol].append(float(row["true_rel_error"]))
    if not data:
        print(f"accuracy_plot.py: no runs in {path}", file=sys.stderr)
        return 1
    os.makedirs(outdir, exist_ok=True)

    for name in order:
        d, levels = data[name]
        tols = sorted(levels, reverse=True)  # 1e-3 first: x increases to the right
        xs = [-math.log10(t) for t in tols]
        width = 0.35 * (min(b - a for a, b in zip(xs, xs[1:])) if len(xs) > 1 else 1.0)
        fig, ax = plt.subplots(figsize=(6.4, 4.8))
        floor = 1e-17  # a run that hit the exact value to the last bit: drawn at the floor of the log axis
        box_x, box_y = [], []
        for x, t in zip(xs, tols):
            ys = [max(v, floor) for v in levels[t]]
            if ys:
                box_x.append(x)
                box_y.append(ys)
        if box_y:
            # whiskers min..max as in the paper; outliers (beyond 1.5 IQR) drawn on top as points
            ax.boxplot(box_y, positions=box_x, widths=width, whis=(0, 100), showfliers=False,
                       manage_ticks=False, medianprops={"color": "tab:blue"})
            for x, ys in zip(box_x, box_y):
                s = sorted(ys)
                n = len(s)
                q1, q3 = s[int(0.25 * (n - 1))], s[int(math.ceil(0.75 * (n - 1)))]
                lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
                out = [v for v in s if v < lo or v > hi]
                if out:
                    ax.plot([x] * len(out), out, "o", mfc="none", mec="black", ms=4)
        ax.plot(xs, tols, "o", color="tab:orange", ms=7, label="requested tolerance", zorder=3)
        ax.set_yscale("log")
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{x:.2f}" for x in xs])
        ax.set_xlabel(r"$-\log_{10}(\tau_{rel})$ (requested)")
        ax.set_ylabel("true relative error of converged runs")
        counts = ", ".join(str(len(levels[t])) for t in tols)
        ax.set_title(f"{name} ({d}-D): m-Cubes accuracy (converged runs per level: {counts})", fontsize=9)
        ax.grid(True, which="major", axis="y", alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
        fig.tight_layout()
        out = os.path.join(outdir, f"accuracy_{name}.png")
        fig.savefig(out, dpi=120)
        plt.close(fig)
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
