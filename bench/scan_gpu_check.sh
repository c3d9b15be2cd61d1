#!/usr/bin/env bash
# The GPU checks of `mcubes scan --backend cuda` (docs/guide.md, "From the command line: mcubes
# scan"), run on a machine with one GPU from the repository root after a CUDA build:
#   bench/scan_gpu_check.sh BUILD_DIR        (e.g. build-dev; the program is BUILD_DIR/bin/mcubes)
#  1. scan:       a scan of f4 in d = 8 on the CUDA backend: K rows in grid order, distinct seeds,
#                 every integral converged with |pull| <= MAX_PULL
#  2. reproduce:  rows of that scan (first, middle, last) run again by their JSON `reproduce`
#                 commands (`mcubes integrate ... --backend cuda --seed ...`): estimate, error and
#                 every iteration's estimate and error with the same bits, the same iterations
#  3. dim9:       --backend cuda in d = 9 refused with exit 2 (the CUDA scan has d = 1..8)
#  4. memory:     a scan beyond the free device memory refused with exit 2 before it runs
#                 (memory-device), and one beyond --max-memory (memory-host)
#  5. sigint:     SIGINT during a scan: exit 130 at the next round, every integral keeps its
#                 completed iterations (status interrupted, n_eval = iterations x evaluations per
#                 iteration), the rows and the JSON record written
# Prints PASS/FAIL (SKIP where a check has no meaning on the backend) per check and exits 1 if any
# check failed, 2 for bad usage. About 15 s on an H100.
# Environment: BACKEND (cuda; cpu runs the same checks on the CPU, without a GPU: dim9 and
# memory-device are skipped and the runs are smaller), OUT (the logs and JSON records;
# default scan-gpu-out), MAX_PULL (5), SIGINT_ROUNDS (3: rounds completed before the signal).
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR (a build with the CUDA backend; the program is BUILD_DIR/bin/mcubes)" >&2
  exit 2
fi
B=$1
MCUBES=""
for c in "$B/bin/mcubes" "$B/cli/mcubes"; do
  if [ -x "$c" ]; then MCUBES=$c; break; fi
done
if [ -z "$MCUBES" ]; then echo "no mcubes program in $B/bin or $B/cli (build the target mcubes_cli)" >&2; exit 2; fi
command -v python3 > /dev/null || { echo "python3 is needed to read the JSON records" >&2; exit 2; }
BACKEND=${BACKEND:-cuda}
case $BACKEND in cuda | cpu) ;; *) echo "BACKEND must be cuda or cpu, got '$BACKEND'" >&2; exit 2 ;; esac
OUT=${OUT:-scan-gpu-out}
mkdir -p "$OUT" || exit 2
MAX_PULL=${MAX_PULL:-5}
SIGINT_ROUNDS=${SIGINT_ROUNDS:-3}

# The sizes: on the GPU f4 in d = 8 at its paper settings; the interrupted scan has 16 integrals of
# 5e8 evaluations per iteration (about 0.3 s per round on an H100). On the CPU, smaller ones.
if [ "$BACKEND" = cuda ]; then
  SCAN=(scan f4 --dim 8 --param a=15:30:4 --param u=0.4:0.6:3 --seed 11)
  SIGINT_SCAN=(scan f4 --dim 8 --param a=20:25:4 --param u=0.45:0.55:4 --calls-per-iter 5e8)
else
  SCAN=(scan f4 --dim 4 --param a=15:30:2 --param u=0.4:0.6:3 --seed 11 --calls-per-iter 1e5)
  SIGINT_SCAN=(scan f4 --dim 4 --param u=0.4:0.6:2 --calls-per-iter 1e6 --threads 1)
fi

failed=0
report() {  # report NAME PASS|FAIL|SKIP DETAIL
  printf '%-14s %s  %s\n' "$1" "$2" "$3"
  [ "$2" = FAIL ] && failed=1
  return 0
}
# The last line of a file (a python check's verdict: "PASS ..." or "FAIL ..."), or a note that
# there is none.
last_line() { [ -s "$1" ] && tail -n 1 "$1" || echo "(no output; see $1)"; }
# PASS if the verdict line $1 starts with PASS, else FAIL (a traceback, no output).
verdict_of() { case $1 in "PASS "*) echo PASS ;; *) echo FAIL ;; esac; }
# The verdict line without its first word, or the whole line if it is no verdict.
detail_of() { case $1 in "PASS "* | "FAIL "*) echo "${1#* }" ;; *) echo "$1" ;; esac; }

echo "mcubes: $MCUBES, backend $BACKEND, logs in $OUT"
if [ "$BACKEND" = cuda ] && command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader
fi

# 1. The scan.
rm -f "$OUT"/scan.json "$OUT"/reproduce_* "$OUT"/memory.json
"$MCUBES" "${SCAN[@]}" --backend "$BACKEND" --json-iterations --json "$OUT/scan.json" > "$OUT/scan.out" 2> "$OUT/scan.err"
rc=$?
if [ $rc -ne 0 ]; then
  report scan FAIL "exit $rc (0 expected: every integral converged): $(head -c 300 "$OUT/scan.err")"
else
  python3 - "$OUT/scan.json" "$BACKEND" "$MAX_PULL" > "$OUT/scan.check" 2>&1 <<'EOF'
import json, math, sys
path, backend, max_pull = sys.argv[1], sys.argv[2], float(sys.argv[3])
j = json.load(open(path))
bad = []
grid = j["parameter_grid"]
rs = j["results"]
if j["backend"] != backend: bad.append(f"backend {j['backend']}, not {backend}")
if j["status"] != "converged": bad.append(f"status {j['status']}")
if len(rs) != grid["integrals"]: bad.append(f"{len(rs)} results for K = {grid['integrals']}")
if [r["index"] for r in rs] != list(range(len(rs))): bad.append("results not in grid order")
if len({r["seed"] for r in rs}) != len(rs): bad.append("repeated seeds")
for r in rs:
    k = r["index"]
    if r["status"] != "converged": bad.append(f"row {k}: {r['status']}")
    if not (isinstance(r["estimate"], float) and math.isfinite(r["estimate"])): bad.append(f"row {k}: estimate {r['estimate']}")
    if r["pull"] is None or abs(r["pull"]) > max_pull: bad.append(f"row {k}: pull {r['pull']}")
    if len(r["iterations"]) != r["n_iterations"]: bad.append(f"row {k}: {len(r['iterations'])} iteration records")
    if f"--backend {backend}" not in r["reproduce"]: bad.append(f"row {k}: reproduce {r['reproduce']!r}")
worst = max((abs(r["pull"]) for r in rs if r["pull"] is not None), default=float("nan"))
print(("FAIL " + "; ".join(bad[:6])) if bad else
      f"PASS K = {len(rs)}, d = {j['integrand']['dim']}, all converged, max |pull| {worst:.2f}, {j['seconds']:.3g} s")
EOF
  v=$(last_line "$OUT/scan.check")
  report scan "$(verdict_of "$v")" "$(detail_of "$v")"
fi

# 2. Rows reproduced bit for bit by their integrate commands.
if python3 -c 'import json,sys; json.load(open(sys.argv[1]))["results"][0]' "$OUT/scan.json" 2> /dev/null; then
  rows=$(python3 -c 'import json,sys; n=len(json.load(open(sys.argv[1]))["results"]); print(*sorted({0, n // 2, n - 1}))' "$OUT/scan.json")
  detail=""; verdict=PASS
  for k in $rows; do
    cmd=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]["reproduce"])' "$OUT/scan.json" "$k")
    read -r -a words <<< "$cmd"
    if [ "${words[0]:-}" != mcubes ] || [ "${words[1]:-}" != integrate ]; then
      verdict=FAIL; detail+="row $k: not an integrate command: $cmd; "; continue
    fi
    "$MCUBES" "${words[@]:1}" --json "$OUT/reproduce_$k.json" > "$OUT/reproduce_$k.out" 2> "$OUT/reproduce_$k.err"
    r=$?
    if [ $r -ne 0 ]; then verdict=FAIL; detail+="row $k: integrate exit $r; "; continue; fi
    python3 - "$OUT/scan.json" "$k" "$OUT/reproduce_$k.json" > "$OUT/reproduce_$k.check" 2>&1 <<'EOF'
import json, sys
row = json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]
one = json.load(open(sys.argv[3]))
bits = lambda x: x.hex() if isinstance(x, float) else repr(x)
bad = []
for key in ("estimate", "error"):
    if bits(row[key]) != bits(one[key]): bad.append(f"{key} {row[key]!r} vs {one[key]!r}")
for key_row, key_one in (("n_iterations", "n_iterations"), ("status", "status"), ("seed", "seed"), ("n_eval", "n_eval")):
    if row[key_row] != one[key_one]: bad.append(f"{key_row} {row[key_row]!r} vs {one[key_one]!r}")
if one["backend"] != row["reproduce"].split("--backend ")[1].split()[0]: bad.append(f"integrate ran on {one['backend']}")
its_row, its_one = row["iterations"], one["iterations"]
if len(its_row) != len(its_one): bad.append(f"{len(its_row)} vs {len(its_one)} iteration records")
for a, b in zip(its_row, its_one):
    if bits(a["estimate"]) != bits(b["estimate"]) or bits(a["error"]) != bits(b["error"]):
        bad.append(f"iteration {a['index']}: {a['estimate']!r} +- {a['error']!r} vs {b['estimate']!r} +- {b['error']!r}")
        break
print(("FAIL " + "; ".join(bad)) if bad else f"PASS {row['estimate']!r} +- {row['error']!r}, {len(its_row)} iterations")
EOF
    v=$(last_line "$OUT/reproduce_$k.check")
    [ "$(verdict_of "$v")" = PASS ] || verdict=FAIL
    detail+="row $k: $(detail_of "$v"); "
  done
  report reproduce "$verdict" "${detail%; }"
else
  report reproduce FAIL "no scan to reproduce (check 1)"
fi

# 3. d = 9 on the CUDA backend: refused with exit 2 before anything runs.
if [ "$BACKEND" = cuda ]; then
  "$MCUBES" scan f4 --dim 9 --param u=0.4:0.6:2 --backend cuda > "$OUT/dim9.out" 2> "$OUT/dim9.err"
  rc=$?
  if [ $rc -eq 2 ] && grep -q "not d = 9" "$OUT/dim9.err" && [ ! -s "$OUT/dim9.out" ]; then
    report dim9 PASS "exit 2: $(head -n 1 "$OUT/dim9.err")"
  else
    report dim9 FAIL "exit $rc (2 expected): $(head -c 300 "$OUT/dim9.err")"
  fi
else
  report dim9 SKIP "the CPU scan has every dimension"
fi

# 4. Memory: K = 40000 integrals of d = 8 with 20000 bins need about 154 GB of device memory (the
# refusal names the whole batch, before any of its parts is allocated); a
# limit of 1 MB of host memory is below what 1000 integrals' records need.
if [ "$BACKEND" = cuda ]; then
  start=$(date +%s)
  "$MCUBES" scan f4 --dim 8 --bins 20000 --param a=10:30:200 --param u=0.3:0.7:200 --backend cuda \
    --json "$OUT/memory.json" > "$OUT/memory.out" 2> "$OUT/memory.err"
  rc=$?
  seconds=$(( $(date +%s) - start ))
  status=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["status"], j["progress"]["round"])' \
    "$OUT/memory.json" 2> /dev/null)
  if [ $rc -eq 2 ] && grep -q "a batch of 40000 integrals .* MiB of device memory" "$OUT/memory.err" && [ "$status" = "failed 0" ] && [ "$seconds" -lt 30 ]; then
    report memory-device PASS "exit 2 in ${seconds} s: $(head -n 1 "$OUT/memory.err")"
  else
    report memory-device FAIL "exit $rc (2 expected), JSON status and round '$status', ${seconds} s: $(head -c 300 "$OUT/memory.err")"
  fi
else
  report memory-device SKIP "no device memory on the CPU backend"
fi
"$MCUBES" scan f4 --dim 8 --param u=0:1:1000 --max-memory 1M --backend "$BACKEND" > "$OUT/memory_host.out" 2> "$OUT/memory_host.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "the scan needs about .* above the --max-memory limit" "$OUT/memory_host.err" && [ ! -s "$OUT/memory_host.out" ]; then
  report memory-host PASS "exit 2: $(head -n 1 "$OUT/memory_host.err")"
else
  report memory-host FAIL "exit $rc (2 expected): $(head -c 300 "$OUT/memory_host.err")"
fi

# 5. SIGINT after SIGINT_ROUNDS rounds (the JSON record, replaced after every round, says how many).
rm -f "$OUT/sigint.json"
"$MCUBES" "${SIGINT_SCAN[@]}" --max-iterations 300 --rel-tol 1e-14 --backend "$BACKEND" --json "$OUT/sigint.json" \
  > "$OUT/sigint.out" 2> "$OUT/sigint.err" &
pid=$!
python3 - "$OUT/sigint.json" "$pid" "$SIGINT_ROUNDS" > "$OUT/sigint.wait" 2>&1 <<'EOF'
import json, os, sys, time
path, pid, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
deadline = time.time() + 60
while time.time() < deadline:
    try:
        j = json.load(open(path))
        if j["progress"]["round"] >= rounds:
            print(f"round {j['progress']['round']}")
            sys.exit(0)
    except (OSError, ValueError, KeyError):
        pass
    try:
        os.kill(pid, 0)
    except OSError:
        print("the scan ended before the signal")
        sys.exit(1)
    time.sleep(0.02)
print(f"no {rounds} rounds within 60 s")
sys.exit(1)
EOF
waited=$?
seen=$(last_line "$OUT/sigint.wait")
if [ $waited -ne 0 ]; then
  kill -KILL "$pid" 2> /dev/null; wait "$pid" 2> /dev/null
  report sigint FAIL "$seen"
else
  kill -INT "$pid"
  sent=$(date +%s)
  ( sleep 30; kill -KILL "$pid" 2> /dev/null ) &
  watchdog=$!
  wait "$pid"
  rc=$?
  kill "$watchdog" 2> /dev/null; wait "$watchdog" 2> /dev/null
  seconds=$(( $(date +%s) - sent ))
  python3 - "$OUT/sigint.json" "$OUT/sigint.out" "${seen#round }" > "$OUT/sigint.check" 2>&1 <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
rounds = int(sys.argv[3])
bad = []
rs = j["results"]
K = j["parameter_grid"]["integrals"]
if j["status"] != "interrupted": bad.append(f"status {j['status']}")
if j.get("signal") != 2: bad.append(f"signal {j.get('signal')}")
if len(rs) != K: bad.append(f"{len(rs)} results for K = {K}")
for r in rs:
    k, n = r["index"], r["n_iterations"]
    if r["status"] != "interrupted": bad.append(f"row {k}: status {r['status']}")
    # every round but the first is an iteration of each active integral (the first may be the
    # bin-scale probe, a pass that is not an iteration)
    if n < rounds - 1: bad.append(f"row {k}: {n} iterations, {rounds} rounds were done before the signal")
    if r["n_eval"] != n * j["evaluations_per_iteration"]: bad.append(f"row {k}: n_eval {r['n_eval']} for {n} iterations")
    if not isinstance(r["estimate"], float): bad.append(f"row {k}: estimate {r['estimate']}")
if "status: interrupted: stopped by signal SIGINT" not in out: bad.append("no interruption line on stdout")
if f"scan: {K} integrals: {K} interrupted;" not in out: bad.append("no summary line of the interrupted integrals")
lines = [l for l in out.splitlines() if l.split()[:1] and l.split()[0].isdigit()]
if len(lines) != K: bad.append(f"{len(lines)} rows printed for K = {K}")
iters = sorted({r["n_iterations"] for r in rs})
print(("FAIL " + "; ".join(bad[:6])) if bad else
      f"PASS K = {K}, signal after round {rounds}, iterations kept {iters[0]}..{iters[-1]}")
EOF
  v=$(last_line "$OUT/sigint.check")
  if [ $rc -ne 130 ]; then
    report sigint FAIL "exit $rc (130 expected) ${seconds} s after the signal; $(detail_of "$v")"
  else
    report sigint "$(verdict_of "$v")" "exit 130 ${seconds} s after the signal; $(detail_of "$v")"
  fi
fi

if [ $failed -ne 0 ]; then echo "scan GPU check: FAIL"; exit 1; fi
echo "scan GPU check: PASS"
