#!/usr/bin/env python3
"""Projected cost of the accuracy study's levels, from the plan and from measured runs.

Usage:
  mcubes-bench accuracy --dry-run --csv plan.csv [--max-evals E ...]     (the rule's settings)
  python3 bench/accuracy_project.py --plan plan.csv [--seeds 100] [--rate 25e9] [--rate-3d 50e9]
                                    [--overhead 2.5e-4] [--no-fail-fast] runs.csv [runs2.csv ...]

A planning aid, not a measurement: for every (integrand, level) of the plan it predicts how many
iterations the median run needs, whether it converges within the level's max_iterations, and the
GPU time of one run and of `--seeds` runs, and prints a markdown table per integrand.

Model (documented in bench/README-accuracy.md, "Cost projection"):
  * per-iteration relative error sigma1(N) at N calls per iteration, measured from the runs: the
    median over converged runs of (error / |estimate|) * sqrt(accumulated iterations), accumulated
    = iterations - skip; for each integrand, log-linear between the measured calls values, and
    sigma1 ~ N^-1/2 (plain Monte Carlo, no further gain from stratification or the map) beyond
    them: conservative for integrands whose error fell faster than N^-1/2 in the data.
  * the median run needs skip + max(min_iterations, ceil((sigma1 / rel_tol)^2)) iterations and
    converges if that is at most max_iterations; otherwise it runs max_iterations (failed level).
  * one iteration takes overhead + N / rate seconds (rate: --rate for d >= 4, --rate-3d for
    d <= 3; overhead: host work and launches per iteration, 0.25 ms measured on the H100 for small
    problems, bench/results/2026-11-22-h100-run*.md).
  * a failed level costs 51 runs of `--seeds` 100 when run with --fail-fast (default assumption;
    --no-fail-fast: all seeds).
  * where the runs contain the same (integrand, level) at the same settings, the measured median
    seconds per run replace the prediction (column `src` = measured), unless --model-times.
The `bound` column is the hard limit: seeds x max_evaluations / rate + seeds x max_iterations x
overhead, what the level costs if every run spends its whole budget.
Exit status: 0, 1 on bad input files, 2 on bad arguments.
"""
import argparse
import csv
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_summary as acc  # noqa: E402

PLAN_COLUMNS = ["integrand", "d", "level", "tolerance", "calls_per_iteration", "max_iterations", "max_evaluations", "skip",
                "min_iterations", "adapt_iterations"]


def read_plan(path):
    """{(integrand, level): plan row} from `mcubes-bench accuracy --dry-run --csv`."""
    try:
        fh = open(path, newline="")
    except OSError as e:
        raise acc.InputError(f"cannot read {path}: {e.strerror}")
    plan = {}
    with fh:
        reader = csv.DictReader(fh)
        missing = [c for c in PLAN_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise acc.InputError(f"{path}: not a plan of mcubes-bench accuracy --dry-run --csv (missing: "
                                 f"{', '.join(missing)})")
        for line, row in enumerate(reader, start=2):
            try:
                p = {c: (row[c] if c == "integrand" else float(row[c]) if c == "tolerance" else int(row[c]))
                     for c in PLAN_COLUMNS}
            except ValueError as e:
                raise acc.InputError(f"{path}:{line}: bad value ({e})")
            plan[(p["integrand"], p["level"])] = p
    return plan


def sigma1_points(merged, skips):
    """{integrand: [(calls, sigma1)]} sorted by calls: per calls value, the median per-iteration
    relative error over the converged runs of all levels run with that many calls."""
    vals = {}
    for (name, _level), runs in merged.items():
        if name not in skips:
            continue
        for r in runs:
            if r["status"] == "converged" and r["estimate"] != 0:
                s1 = r["error"] / abs(r["estimate"]) * math.sqrt(max(1, r["iterations"] - skips[name]))
                vals.setdefault(name, {}).setdefault(r["calls_per_iteration"], []).append(s1)
    return {name: sorted((n, statistics.median(v)) for n, v in by_calls.items()) for name, by_calls in vals.items()}


def sigma1(points, n):
    """sigma1 at n calls: log-linear between measured points, slope -1/2 outside them."""
    if n <= points[0][0]:
        return points[0][1] * (n / points[0][0]) ** -0.5
    for (n0, s0), (n1, s1) in zip(points, points[1:]):
        if n <= n1:
            return s0 * (n / n0) ** (math.log(s1 / s0) / math.log(n1 / n0))
    n_last, s_last = points[-1]
    return s_last * (n / n_last) ** -0.5


def main(argv):
    ap = argparse.ArgumentParser(description="Projected cost of the accuracy study's levels.")
    ap.add_argument("csv", nargs="+", help="run CSVs with measured levels (mcubes-bench accuracy --csv)")
    ap.add_argument("--plan", required=True, help="plan from mcubes-bench accuracy --dry-run --csv")
    ap.add_argument("--seeds", type=int, default=100, help="runs per level (default 100)")
    ap.add_argument("--rate", type=float, default=25e9, help="evaluations/s at large calls for d >= 4 (25e9)")
    ap.add_argument("--rate-3d", type=float, default=50e9, help="evaluations/s at large calls for d <= 3 (50e9)")
    ap.add_argument("--overhead", type=float, default=2.5e-4, help="seconds per iteration besides sampling (2.5e-4)")
    ap.add_argument("--no-fail-fast", action="store_true", help="a failed level runs all seeds")
    ap.add_argument("--model-times", action="store_true",
                    help="never use measured seconds (e.g. runs of the CPU backend, used for sigma1 only)")
    ap.add_argument("--newer-wins", action="store_true", help="as in accuracy_summary.py")
    args = ap.parse_args(argv[1:])
    if args.seeds < 1 or args.rate <= 0 or args.rate_3d <= 0 or args.overhead < 0:
        ap.error("--seeds, --rate and --rate-3d must be positive, --overhead non-negative")
    try:
        plan = read_plan(args.plan)
        merged = acc.read_runs(args.csv, args.newer_wins)
    except acc.InputError as e:
        print(f"accuracy_project.py: {e}", file=sys.stderr)
        return 1
    skips = {name: p["skip"] for (name, _), p in plan.items()}
    points = sigma1_points(merged, skips)
    fail_runs = args.seeds if args.no_fail_fast else args.seeds // 2 + 1

    print(f"Projection for {args.seeds} seeds per level; rate {args.rate:.3g}/s (d >= 4), {args.rate_3d:.3g}/s "
          f"(d <= 3); {args.overhead * 1e3:.2f} ms per iteration; a failed level runs "
          f"{fail_runs} seeds{'' if args.no_fail_fast else ' (--fail-fast)'}.\n")
    for name in acc.integrand_order({n for n, _ in plan}):
        levels = sorted(level for n, level in plan if n == name)
        print(f"### {name} ({plan[(name, levels[0])]['d']}-D)\n")
        if name not in points:
            print("no measured converged runs of this integrand: no projection\n")
            continue
        print("measured sigma1 (calls: per-iteration rel. error): " +
              ", ".join(f"{n:.3g}: {s:.3g}" for n, s in points[name]) + "\n")
        print("| level | rel_tol | calls | max it. | sigma1 | needed it. | outcome | evals/run | s/run | "
              "s per level | src | bound s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        cumulative = 0.0
        for level in levels:
            p = plan[(name, level)]
            n, m, tol = p["calls_per_iteration"], p["max_iterations"], p["tolerance"]
            rate = args.rate if p["d"] >= 4 else args.rate_3d
            t_it = args.overhead + n / rate
            s1 = sigma1(points[name], n)
            need = p["skip"] + max(p["min_iterations"], math.ceil((s1 / tol) ** 2))
            ok = need <= m
            its = need if ok else m
            runs = args.seeds if ok else fail_runs
            src = "model"
            per_run = its * t_it
            measured = merged.get((name, level))
            if (not args.model_times and measured and measured[0]["calls_per_iteration"] == n and measured[0]["max_iterations"] == m):
                per_run = statistics.median(r["seconds"] for r in measured)
                src = "measured"
            level_s = per_run * runs
            cumulative += level_s
            bound = args.seeds * (p["max_evaluations"] / rate + m * args.overhead)
            outcome = "ok" if ok else "FAIL"
            if ok and need > m / 2:
                outcome = "ok (marginal)"
            print(f"| {level} | {tol:.3g} | {n:.3g} | {m} | {s1:.2g} | {need} | {outcome} | {its * n:.2g} | "
                  f"{per_run:.3f} | {level_s:.0f} | {src} | {bound:.0f} |")
            if not ok:
                break
        print(f"\nuntil the ladder ends: {cumulative:.0f} s\n")
    return 0


if __name__ == "__main__":
    acc.run(main)
