#!/usr/bin/env bash
# Scan checkpoints on the GPU (docs/guide.md, "Long runs: checkpoints and resume"), run from the
# repository root on a machine with one GPU after a CUDA build (for CPU <-> GPU bits, built with
# CMAKE_CUDA_FLAGS=--fmad=false: f2 is made of +, -, *, / only):
#   bench/scan_checkpoint_gpu.sh BUILD_DIR      (the program is BUILD_DIR/bin/mcubes)
# For each stratification (adaptive, uniform), `mcubes scan f2 --dim 1` over K = 260 points (two
# pipelined lanes on the GPU, one on the CPU):
#  1. the scan uninterrupted on the GPU and on the CPU (16 threads), compared;
#  2. the GPU scan stopped by SIGTERM 0.3 s after its first checkpoint, resumed on the GPU;
#  3. the GPU scan killed by SIGKILL 1.3 s after its first checkpoint, resumed on the CPU (7 threads);
#  4. at rel-tol 1e-3 (integrals end at different rounds): 12 iterations on the CPU, then resumed on
#     the GPU to 60 with --force.
# Each comparison prints SAME BITS or the integrals and fields that differ (estimate, error,
# chi2/dof, Q, evaluations, iterations, status, every iteration's estimate; JSON records).
# Environment: OUT (logs and records; default scan-checkpoint-out).
set -uo pipefail
build=${1:?usage: bench/scan_checkpoint_gpu.sh BUILD_DIR}
B=$build/bin/mcubes
OUT=${OUT:-scan-checkpoint-out}
mkdir -p "$OUT"
T0=$SECONDS
py=$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )
cat > "$OUT/cmp.py" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = ["estimate", "error", "chi2_dof", "q", "n_eval", "n_iterations", "status"]
ra, rb = a["results"], b["results"]
its = lambda r: [i["estimate"] for i in r["iterations"]]
diff = [k for k in range(len(ra)) if any(ra[k][x] != rb[k][x] for x in keys) or its(ra[k]) != its(rb[k])]
st = {}
for r in ra: st[r["status"]] = st.get(r["status"], 0) + 1
print(sys.argv[3], "SAME BITS" if len(ra) == len(rb) and not diff else "DIFFERENT in %d of %d" % (len(diff), len(ra)), st)
if diff:
    fields = sorted({x for k in diff for x in keys if ra[k][x] != rb[k][x]})
    print("  differing fields:", fields, "; integrals whose iteration estimates differ:",
          sum(1 for k in diff if its(ra[k]) != its(rb[k])), "; e.g. q", ra[diff[0]]["q"], rb[diff[0]]["q"])
PY
waitfile() { local i=0; while [ ! -s "$1" ] && kill -0 "$2" 2>/dev/null && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; }
for strat in adaptive uniform; do
  echo "== $strat"
  C="scan f2 --dim 1 --param a=5:300:260 --calls-per-iter 1000 --rel-tol 1e-14 --seed 3 --stratification $strat --json-iterations --quiet"
  $B $C --backend cuda --max-iterations 4000 --json "$OUT/g_$strat.json" > /dev/null
  $B $C --backend cpu --threads 16 --max-iterations 4000 --json "$OUT/c_$strat.json" > /dev/null
  $py "$OUT/cmp.py" "$OUT/c_$strat.json" "$OUT/g_$strat.json" "$strat: CPU (16 threads) vs GPU, uninterrupted:"
  T1=$SECONDS; $B $C --backend cuda --max-iterations 4000 --checkpoint "$OUT/t.ckpt" > "$OUT/t1.txt" 2>&1 & p=$!
  waitfile "$OUT/t.ckpt" $p; echo "first checkpoint after $((SECONDS-T1)) s"; sleep 0.3; kill -TERM $p; wait $p
  echo "SIGTERM: exit $? ($(stat -c %s "$OUT/t.ckpt") bytes)"
  $B $C --backend cuda --max-iterations 4000 --checkpoint "$OUT/t.ckpt" --resume "$OUT/t.ckpt" --json "$OUT/gr_$strat.json" > /dev/null 2>&1
  $py "$OUT/cmp.py" "$OUT/g_$strat.json" "$OUT/gr_$strat.json" "$strat: GPU SIGTERM then GPU resume vs GPU uninterrupted:"
  $B $C --backend cuda --max-iterations 4000 --checkpoint "$OUT/k.ckpt" > /dev/null 2>&1 & p=$!
  waitfile "$OUT/k.ckpt" $p; sleep 1.3; kill -KILL $p; wait $p 2>/dev/null
  echo "SIGKILL: exit $? ($(stat -c %s "$OUT/k.ckpt" 2>/dev/null) bytes)"
  $B $C --backend cpu --threads 7 --max-iterations 4000 --resume "$OUT/k.ckpt" --json "$OUT/kr_$strat.json" > /dev/null 2>&1
  $py "$OUT/cmp.py" "$OUT/c_$strat.json" "$OUT/kr_$strat.json" "$strat: GPU SIGKILL then CPU (7 threads) resume vs CPU uninterrupted:"
  E="scan f2 --dim 1 --param a=5:300:260 --calls-per-iter 4000 --rel-tol 1e-3 --skip 2 --min-iterations 2 --seed 3 --stratification $strat --json-iterations --quiet"
  $B $E --backend cuda --max-iterations 60 --json "$OUT/e_$strat.json" > /dev/null
  $B $E --backend cpu --threads 16 --max-iterations 12 --checkpoint "$OUT/c.ckpt" > /dev/null 2>&1
  $B $E --backend cuda --max-iterations 60 --resume "$OUT/c.ckpt" --force --json "$OUT/cg_$strat.json" > /dev/null 2>&1
  $py "$OUT/cmp.py" "$OUT/e_$strat.json" "$OUT/cg_$strat.json" "$strat: CPU 12 iterations then GPU to 60 vs GPU uninterrupted:"
  rm -f "$OUT"/*.ckpt
done
echo "total $((SECONDS-T0)) s"
