#!/usr/bin/env python3
"""Deepest tolerance level reached per integrand, next to the paper's and REFERENCE.md's figures.

Usage: python3 bench/accuracy_depth.py [--out FILE] [--planned-seeds N] [--newer-wins]
                                       runs.csv [runs2.csv ...]

Reads the run CSVs of `mcubes-bench accuracy --csv` (one study split over several invocations is
merged and checked as by bench/accuracy_summary.py, same options) and writes a markdown table (to
stdout, or --out): per integrand, the deepest ladder level reached (the last level with at least
half of the planned seeds converged before the first failed level; see accuracy_summary.py), its
tolerance and digits = -log10(tolerance), runs and converged runs there, the median and maximum
true relative error of the converged runs, the fractions within the tolerance and within 2 sigma,
what happened at the next level, and side by side what the m-Cubes paper (shared/seeds/001) and
shared/REFERENCE.md state for that integrand. The statements are quoted below the table; the paper
text gives no per-integrand depth for Figure 1 (the figure is an image), and REFERENCE.md has only
runs at rel_tol 1e-3.
Exit status: 0, 1 on bad input files, 2 on bad arguments.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_summary as acc  # noqa: E402

# What the paper (shared/seeds/001, section 5) states per integrand, short form for the table; the
# sources are quoted in SOURCES. Figure 1 of the paper is an image: the text does not say which
# levels it shows for each integrand.
PAPER = {
    "f1": "not reported: excluded from the plots [P2]",
    "f2": "Fig. 1 (levels not in text) [P1]; run to >= 'five digits' [P3]",
    "f3": "Fig. 1 (levels not in text) [P1]; run to >= 'five digits' [P3]",
    "f4": "Fig. 1 (levels not in text) [P1]; run to >= 'five digits' [P3]",
    "f5": "Fig. 1 (levels not in text) [P1]; run to >= 'five digits' [P3]",
    "f6": "Fig. 1 (levels not in text) [P1]; no number in the text",
    "fA": "only rel_tol 1e-3, <= 10 iterations: error estimate 1.19551 on -49.27284 (2.4%), "
          "not 1e-3 [P4]",
    "fB": "only rel_tol 1e-3, <= 15 iterations: 1.00008 +- 0.00005 (5e-5), reached 1e-3 [P4]",
}
# shared/REFERENCE.md section 1, table: the reference m-Cubes code on the same H100, epsrel 1e-3
# only, median of 5 runs (iterations, true relative error). f1 is not in it.
REFERENCE = {
    "f1": "not in the table",
    "f2": "1e-3 only: converged, 11 it., true rel. err. 1.2e-5",
    "f3": "1e-3 only: converged, 5 it., 4.6e-6",
    "f4": "1e-3 only: converged, 7 it., 1.1e-3 (above the tolerance)",
    "f5": "1e-3 only: converged, 6 it., 1.8e-4",
    "f6": "1e-3 only: converged, 6 it., 2.3e-4",
    "fA": "1e-3 only: not converged in 10 it., 1.5e-3",
    "fB": "1e-3 only: converged, 11 it., 1.6e-4",
}
SOURCES = """\
Sources (shared/seeds/001 = the m-Cubes paper, text form; its figures are images, not in the text):

* [P1] Section 5.1: "We start evaluating all integrands with a τrel of 10^-3. Upon each successful
  execution, we divide τrel by five until either surpassing the minimum value of 10^-9 (maximum
  accuracy) or failing to achieve the required error tolerance." and "we display multiple 100-run
  sets of results on each different level of precision for each integrand" (Figure 1; the suite of
  eqs. 1-6, f1 excluded by [P2]). Which levels Figure 1 shows for each integrand is only in the
  figure, not in the text.
  (Issue 5 reads the figure as reaching 5-7 digits for f2-f6; that reading cannot be checked
  against the text here.)
* [P2] Section 5.1: "We also do not report results on f1,d in our plots, as no Vegas variant could
  evaluate it to the satisfactory precision levels." (The dimension is not given; mcubes runs f1 in
  3-D.)
* [P3] Section 5.2 (Figure 2, timing comparison with gVegas): "for some integrands (f4,8, f5,8, f3,3,
  f2,6), the three, four, and five digits of precision runs display similar execution time", so
  these four were run at least to "five digits" (-log10 τrel ≈ 5; on the ladder, level 4 = 8e-6 is
  5.1 digits). Nothing comparable is said of f6.
* [P4] Section 5.2, Table 1 (comparison with ZMCintegral): fA over (0,10)^6 and fB over (-1,1)^9 at
  τrel = 10^-3 with at most 10 and 15 iterations: fA estimate -49.27284, error estimate 1.19551
  (true value -49.165073); fB 1.00008 +- 0.00005 (true value 1.0). No other tolerance is reported
  for fA or fB.
* REFERENCE.md, section 1: the public reference m-Cubes code on the same H100 with its demo
  settings (REFERENCE.md table; the same calls, iterations, adapting iterations and skip as level 1
  here), epsrel 1e-3, median of 5 runs. It has no run at a smaller tolerance, so its depth beyond
  level 1 is unmeasured.
"""


def sci(v):
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.2g}"


def depth_table(rows):
    """Markdown lines of the depth table from accuracy_summary.summarise() rows."""
    out = [
        "| integrand | d | deepest level reached | digits | conv./runs | median true rel. err. | max true rel. err. "
        "| within tol | within 2σ | next level | calls × max it. at the deepest | paper (seeds/001) | REFERENCE.md |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    notes = []
    for name in acc.integrand_order({r["integrand"] for r in rows}):
        levels = [r for r in rows if r["integrand"] == name]
        deepest = next((r for r in levels if r["ladder"] == "deepest"), None)
        if deepest:
            after = [r for r in levels if r["level"] > deepest["level"]]
            nxt = after[0] if after else None
            cells = [
                f"{deepest['level']} (rel_tol {deepest['tolerance']:.3g})",
                f"{-math.log10(deepest['tolerance']):.1f}",
                f"{deepest['converged']}/{deepest['runs']}",
                sci(deepest["median_true_rel_error"]), sci(deepest["max_true_rel_error"]),
                f"{deepest['frac_within_tol']:.2f}", f"{deepest['frac_within_2sigma']:.2f}",
            ]
            settings = f"{deepest['calls_per_iteration']:.3g} × {deepest['max_iterations']}"
            if deepest["note"]:
                notes.append(f"* {name}: {deepest['note']}.")
        else:
            first = levels[0]
            nxt = first
            cells = ["none", "–", "–", "–", "–", "–", "–"]
            settings = "–"
            if first["level"] != 1:
                notes.append(f"* {name}: no level reached; the data start at level {first['level']}.")
        if nxt is None:
            nxt_cell = "not run (ladder not ended)"
        else:
            state = {"FAILED": "failed", "incomplete": "incomplete", "after_stop": "after the stop"}.get(
                nxt["ladder"], nxt["ladder"])
            nxt_cell = f"{nxt['level']} ({nxt['tolerance']:.3g}): {state}, {nxt['converged']}/{nxt['runs']} converged"
        d = levels[0]["d"]
        out.append("| " + " | ".join([name, str(d)] + cells + [nxt_cell, settings, PAPER.get(name, "–"),
                                                                  REFERENCE.get(name, "–")]) + " |")
    return out, notes


def main(argv):
    ap = argparse.ArgumentParser(description="Markdown table of the deepest accuracy level per integrand.")
    acc.add_run_arguments(ap)
    ap.add_argument("--out", help="write the markdown here instead of stdout")
    args = ap.parse_args(argv[1:])
    merged = acc.load_runs(ap, args, "accuracy_depth.py")
    if merged is None:
        return 1
    rows = acc.summarise(merged, args.planned_seeds)
    table, notes = depth_table(rows)
    n_runs = sum(len(v) for v in merged.values())
    text = [
        "# Accuracy study: deepest tolerance level reached per integrand",
        "",
        f"From {n_runs} runs in {', '.join(os.path.basename(p) for p in args.csv)}; "
        f"{args.planned_seeds} seeds planned per level. Level k has rel_tol = 1e-3 / 5^(k-1); digits = "
        "-log10(rel_tol). The deepest level is the last one with at least half of the planned seeds "
        "converged before the first failed level (fewer than half can converge). Error statistics are over "
        "the converged runs at that level.",
        "",
    ] + table + [""]
    if notes:
        text += ["Caveats:", ""] + notes + [""]
    text += [SOURCES]
    doc = "\n".join(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(doc)
    else:
        sys.stdout.write(doc)
    return 0


if __name__ == "__main__":
    acc.run(main)
