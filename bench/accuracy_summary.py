#!/usr/bin/env python3
"""Merge the run CSVs of an accuracy study (`mcubes-bench accuracy --csv`) and summarise them.

Usage: python3 bench/accuracy_summary.py [--summary FILE] [--merged FILE] [--planned-seeds N]
                                         [--newer-wins] runs.csv [runs2.csv ...]

The study can be split over several invocations (levels with --first-level/--levels, seeds with
--first-seed/--seeds). This script reads any number of their run CSVs (same columns), merges them
and recomputes the per-level summary from the merged runs, with the same columns and flags as the
summary `mcubes-bench accuracy --summary` writes, plus three: `level` (1..9), `ladder` and `note`.

Merging rules:
  * a run is identified by (integrand, level, seed). The same run in two files with identical
    results is kept once; with different results (e.g. two builds that round differently) the
    files conflict, since a level would otherwise mix two versions of the code.
  * all runs of one (integrand, level) must share calls_per_iteration and max_iterations (the rule's
    settings); files that disagree (e.g. levels run under an older rule) conflict.
  * a conflict is an error, unless --newer-wins: then that level keeps only the runs of the file
    given last that has it, and the dropped runs are reported on stderr. Levels without a conflict
    are merged from all files (e.g. a level's seeds split over two files).

Ladder (the paper's stop rule, "until failing to achieve the tolerance", across the split): with
P = max(--planned-seeds, runs of the level) seeds planned per level (default 100), a level is
  ok          if at least half of P converged,
  FAILED      if fewer than half of P can converge even when every missing seed would
              (so a level ended by --fail-fast after 51 failures of 100 is decided),
  incomplete  otherwise (too few runs to decide, e.g. an interrupted command).
Walking the levels 1, 2, ... of an integrand, the first FAILED level ends its ladder: later levels
(run in a split session before the failure was known) are marked `after_stop` and do not count.
The deepest `ok` level before the stop is marked `deepest`: the depth reached. Levels missing from
the data, or incomplete, before the deepest are named in `note` (the depth then rests on them not
failing).

Prints the summary table; exit status 0, 1 on bad input files, 2 on bad arguments (message on stderr).
"""
import argparse
import csv
import math
import os
import statistics
import sys

RUN_COLUMNS = ["integrand", "d", "tolerance", "seed", "estimate", "error", "exact", "true_rel_error", "chi2_dof",
               "iterations", "n_eval", "status", "seconds", "calls_per_iteration", "max_iterations"]
SUMMARY_COLUMNS = ["integrand", "d", "level", "tolerance", "calls_per_iteration", "max_iterations", "runs", "converged",
                   "median_true_rel_error", "max_true_rel_error", "frac_within_tol", "frac_within_2sigma",
                   "max_ratio_to_tol", "median_seconds", "flag", "ladder", "note"]
MAX_LEVEL = 9
# Integrand order of the study's default list (others follow alphabetically).
ORDER = ["f2", "f3", "f4", "f5", "f6", "fA", "fB", "f1"]


class InputError(Exception):
    """Bad input: a message for the user."""


def level_of(tol):
    """Ladder level 1..9 of a relative tolerance 1e-3 / 5^(level-1)."""
    k = math.log(1e-3 / tol) / math.log(5.0)
    level = int(round(k)) + 1
    if abs(k - round(k)) > 1e-6 or not 1 <= level <= MAX_LEVEL:
        raise InputError(f"tolerance {tol!r} is not on the ladder 1e-3 / 5^k, k = 0..{MAX_LEVEL - 1}")
    return level


def tolerance_of(level):
    """The tolerance of a level, by repeated division as mcubes-bench computes it."""
    tol = 1e-3
    for _ in range(level - 1):
        tol /= 5
    return tol


def merge_level(sources):
    """Merges the runs of one (integrand, level) from several files: [(path, {seed: run})].

    Returns ({seed: run}, conflict): conflict is None, or a message when the files disagree on the
    level's settings (calls_per_iteration, max_iterations: runs of different rules) or give one seed
    different results (runs of different builds). A seed with identical results is kept once.
    """
    settings = {}
    for path, seeds in sources:
        for r in seeds.values():
            settings.setdefault((r["calls_per_iteration"], r["max_iterations"]), set()).add(path)
    if len(settings) > 1:
        desc = "; ".join(f"calls {c} x {m} iterations in {', '.join(sorted(ps))}"
                         for (c, m), ps in sorted(settings.items()))
        return {}, f"runs with different settings ({desc}): runs of different rules"
    runs = {}
    for path, seeds in sources:
        for seed, run in seeds.items():
            old = runs.get(seed)
            if old is None:
                runs[seed] = run
            elif any(old[c] != run[c] for c in ("estimate", "error", "iterations", "n_eval", "status")):
                return {}, f"seed {seed} has different results in {old['file']} and {path} (different builds?)"
    return runs, None


def read_runs(paths, newer_wins=False, log=sys.stderr):
    """Reads and merges run CSVs. Returns {(integrand, level): [run dict, ...]} sorted by seed.

    A run dict has the CSV's fields converted (floats, ints) plus `level` and `file`.
    Raises InputError on bad files, conflicting duplicates or mixed settings (see the module doc).
    """
    per_file = []  # [(path, {(name, level): {seed: run}})]
    for path in paths:
        try:
            fh = open(path, newline="")
        except OSError as e:
            raise InputError(f"cannot read {path}: {e.strerror}")
        with fh:
            reader = csv.DictReader(fh)
            missing = [c for c in RUN_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise InputError(f"{path}: not an accuracy run CSV (missing columns: {', '.join(missing)})")
            levels = {}
            for line, row in enumerate(reader, start=2):
                try:
                    run = {
                        "integrand": row["integrand"], "d": int(row["d"]), "tolerance": float(row["tolerance"]),
                        "seed": int(row["seed"]), "estimate": float(row["estimate"]), "error": float(row["error"]),
                        "exact": float(row["exact"]), "true_rel_error": float(row["true_rel_error"]),
                        "chi2_dof": float(row["chi2_dof"]), "iterations": int(row["iterations"]),
                        "n_eval": int(row["n_eval"]), "status": row["status"], "seconds": float(row["seconds"]),
                        "calls_per_iteration": int(row["calls_per_iteration"]),
                        "max_iterations": int(row["max_iterations"]), "file": path,
                    }
                    run["level"] = level_of(run["tolerance"])
                except (TypeError, ValueError) as e:
                    raise InputError(f"{path}:{line}: bad value ({e})")
                except InputError as e:
                    raise InputError(f"{path}:{line}: {e}")
                if run["status"] not in ("converged", "not_converged", "not_resolved"):
                    raise InputError(f"{path}:{line}: unknown status {run['status']!r}")
                seeds = levels.setdefault((run["integrand"], run["level"]), {})
                if run["seed"] in seeds:
                    raise InputError(f"{path}:{line}: seed {run['seed']} of {run['integrand']} level {run['level']} "
                                     f"appears twice in the same file")
                seeds[run["seed"]] = run
            per_file.append((path, levels))

    merged = {}
    for key in sorted({k for _, levels in per_file for k in levels}):
        sources = [(path, levels[key]) for path, levels in per_file if key in levels]
        runs, conflict = merge_level(sources)
        if conflict:
            if not newer_wins:
                raise InputError(f"{key[0]} level {key[1]}: {conflict}. Give only one of the files, or --newer-wins "
                                 f"to keep, for such a level, the runs of the file given last")
            last_path, last_seeds = sources[-1]
            runs, own = merge_level([sources[-1]])
            if own:
                raise InputError(f"{key[0]} level {key[1]}: {last_path} itself: {own}")
            for p, seeds in sources[:-1]:
                print(f"accuracy_summary: {key[0]} level {key[1]}: dropped {len(seeds)} run(s) of {p} "
                      f"({conflict}; --newer-wins keeps {last_path})", file=log)
        merged[key] = [runs[s] for s in sorted(runs)]
    return merged


def integrand_order(names):
    """The study's order of integrands: ORDER first, others alphabetically."""
    return sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def summarise(merged, planned_seeds=100):
    """Per-level summary rows (dicts with SUMMARY_COLUMNS) from read_runs() output, in study order."""
    rows = []
    names = integrand_order({name for name, _ in merged})
    for name in names:
        levels = sorted(level for n, level in merged if n == name)
        stopped = False
        gaps = []  # levels missing or incomplete before the current one
        name_rows = []
        for level in range(1, max(levels) + 1):
            runs = merged.get((name, level))
            if runs is None:
                if not stopped:
                    gaps.append(f"level {level} not run")
                continue
            tol = runs[0]["tolerance"]
            conv = [r for r in runs if r["status"] == "converged"]
            n, c = len(runs), len(conv)
            planned = max(planned_seeds, n)
            rel = [r["true_rel_error"] for r in conv]
            nan = float("nan")
            within_2s = sum(abs(r["estimate"] - r["exact"]) <= 2 * r["error"] for r in conv)
            row = {
                "integrand": name, "d": runs[0]["d"], "level": level, "tolerance": tol,
                "calls_per_iteration": runs[0]["calls_per_iteration"], "max_iterations": runs[0]["max_iterations"],
                "runs": n, "converged": c,
                "median_true_rel_error": statistics.median(rel) if c else nan,
                "max_true_rel_error": max(rel) if c else nan,
                "frac_within_tol": sum(v <= tol for v in rel) / c if c else nan,
                "frac_within_2sigma": within_2s / c if c else nan,
                "max_ratio_to_tol": max(rel) / tol if c else nan,
                "median_seconds": statistics.median(r["seconds"] for r in runs),
                "note": "",
            }
            if 2 * c >= planned:
                state = "ok"
            elif 2 * (c + planned - n) < planned:
                state = "FAILED"
            else:
                state = "incomplete"
            flags = []
            if c and row["frac_within_2sigma"] < 0.9:
                flags.append("2SIGMA<0.9")
            if c and row["max_ratio_to_tol"] > 10:
                flags.append("ERR>10TOL")
            if state == "FAILED":
                flags.append("FAILED")
            if state == "incomplete":
                flags.append("INCOMPLETE")
            row["flag"] = ";".join(flags)
            if stopped:
                row["ladder"] = "after_stop"
            else:
                row["ladder"] = state
                if state == "FAILED":
                    stopped = True
                elif state == "incomplete":
                    gaps.append(f"level {level} incomplete ({n} of {planned} runs)")
            row["_gaps"] = list(gaps)
            name_rows.append(row)
        ok = [r for r in name_rows if r["ladder"] == "ok"]
        if ok:
            deepest = ok[-1]
            deepest["ladder"] = "deepest"
            before = [g for g in deepest["_gaps"]]
            if before:
                deepest["note"] = "depth assumes " + ", ".join(before) + " would not fail"
        for r in name_rows:
            del r["_gaps"]
        rows.extend(name_rows)
    return rows


def fmt(v):
    """CSV formatting: floats with 17 significant digits (as mcubes-bench), NaN as 'nan'."""
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.17g}"
    return str(v)


def write_summary(rows, path):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(SUMMARY_COLUMNS)
        for r in rows:
            w.writerow([fmt(r[c]) for c in SUMMARY_COLUMNS])


def write_merged(merged, path):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(RUN_COLUMNS)
        for key in sorted(merged, key=lambda k: (integrand_order({n for n, _ in merged}).index(k[0]), k[1])):
            for r in merged[key]:
                w.writerow([fmt(r[c]) for c in RUN_COLUMNS])


def print_table(rows, out=sys.stdout):
    print("int  d lvl       tol      calls  titr | runs conv | med.rel   max.rel   | <=tol  <=2sig max.r/tol | "
          "med. time | ladder", file=out)
    for r in rows:
        # FAILED / INCOMPLETE are already the ladder column
        flags = ";".join(f for f in r["flag"].split(";") if f and f not in ("FAILED", "INCOMPLETE"))

        def g(v, spec):
            return format(v, spec) if not (isinstance(v, float) and math.isnan(v)) else format("nan", spec[:-3] + "s")
        print(f"{r['integrand']:<3} {r['d']:2d} {r['level']:3d} {r['tolerance']:9.3g} {r['calls_per_iteration']:10.3g} "
              f"{r['max_iterations']:5d} | {r['runs']:4d} {r['converged']:4d} | {g(r['median_true_rel_error'], '9.3g')} "
              f"{g(r['max_true_rel_error'], '9.3g')} | {g(r['frac_within_tol'], '6.2f')} "
              f"{g(r['frac_within_2sigma'], '6.2f')} {g(r['max_ratio_to_tol'], '8.3g')} | {r['median_seconds']:8.3f}s | "
              f"{r['ladder']}{'  ' + flags if flags else ''}{'  (' + r['note'] + ')' if r['note'] else ''}",
              file=out)


def add_run_arguments(ap):
    """The arguments every accuracy script shares: run CSVs, --planned-seeds, --newer-wins."""
    ap.add_argument("csv", nargs="+", help="run CSVs of mcubes-bench accuracy --csv")
    ap.add_argument("--planned-seeds", type=int, default=100, help="seeds planned per level (default 100)")
    ap.add_argument("--newer-wins", action="store_true",
                    help="where files conflict on a level (settings or a seed's results), keep the file given last")


def load_runs(ap, args, prog):
    """Checks the shared arguments and merges the run CSVs; prints one line naming `prog` and
    returns None on bad input or no runs."""
    if args.planned_seeds < 1:
        ap.error("--planned-seeds must be at least 1")
    try:
        merged = read_runs(args.csv, args.newer_wins)
    except InputError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return None
    if not merged:
        print(f"{prog}: no runs in " + ", ".join(args.csv), file=sys.stderr)
        return None
    return merged


def run(main):
    """Runs a script's main(argv) and exits with its status; output piped into e.g. head is not an error."""
    try:
        sys.exit(main(sys.argv))
    except BrokenPipeError:
        sys.stdout = open(os.devnull, "w")
        sys.exit(0)


def main(argv):
    ap = argparse.ArgumentParser(description="Merge accuracy run CSVs and recompute the per-level summary.")
    add_run_arguments(ap)
    ap.add_argument("--summary", help="write the per-level summary CSV here")
    ap.add_argument("--merged", help="write the merged runs (one CSV, same columns) here")
    args = ap.parse_args(argv[1:])
    merged = load_runs(ap, args, "accuracy_summary.py")
    if merged is None:
        return 1
    rows = summarise(merged, args.planned_seeds)
    if args.summary:
        write_summary(rows, args.summary)
    if args.merged:
        write_merged(merged, args.merged)
    try:
        print_table(rows)
    except BrokenPipeError:  # e.g. piped into head: not an error
        sys.stdout = open(os.devnull, "w")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
