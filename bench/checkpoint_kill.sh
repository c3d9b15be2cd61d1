#!/usr/bin/env bash
# Checkpoints under SIGKILL, many trials (the CI test runs 20): `mcubes integrate --checkpoint`
# killed at a random moment of the run (4 trials in 5 after its first checkpoint), then resumed with --resume on another thread count; every
# resumed run must end with the bits of the uninterrupted one (estimate, error, chi2/dof, Q, every
# iteration's estimate; compared in the JSON records, whose numbers round-trip exactly). Prints one
# line per trial and a summary; exit 1 if any trial differs.
#   bench/checkpoint_kill.sh [MCUBES] [TRIALS] [extra integrate options...]
# Default: build/bin/mcubes, 100 trials, f2 in d = 4 at 2e5 calls, 60 iterations, 2 threads.
set -euo pipefail
mcubes=${1:-build/bin/mcubes}
trials=${2:-100}
shift $(( $# > 2 ? 2 : $# )) || true
extra=("$@")
run=(integrate f2 --dim 4 --calls-per-iter 2e5 --max-iterations 60 --rel-tol 1e-14 --backend cpu --seed 5 "${extra[@]}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )
start=$EPOCHREALTIME
"$mcubes" "${run[@]}" --threads 2 --json "$tmp/whole.json" > /dev/null || [ $? -eq 1 ]
whole=$("$py" -c "print(round($EPOCHREALTIME - $start, 3))")
same=0; fresh=0; bad=0
for t in $(seq 1 "$trials"); do
  rm -f "$tmp/c.ckpt" "$tmp/r.json"
  at=$("$py" -c "import random; random.seed($t); print(random.uniform(0.0, 0.9) * $whole)")
  "$mcubes" "${run[@]}" --threads 2 --checkpoint "$tmp/c.ckpt" > /dev/null 2>&1 &
  pid=$!
  if [ $((t % 5)) -ne 0 ]; then  # 4 trials in 5: after the first checkpoint (the 5th: any moment)
    while [ ! -s "$tmp/c.ckpt" ] && kill -0 $pid 2> /dev/null; do sleep 0.002; done
  fi
  sleep "$at"
  kill -KILL $pid 2> /dev/null || true
  wait $pid 2> /dev/null || true
  resume=()
  if [ -s "$tmp/c.ckpt" ]; then resume=(--resume "$tmp/c.ckpt"); else fresh=$((fresh + 1)); fi
  "$mcubes" "${run[@]}" --threads 1 --checkpoint "$tmp/c.ckpt" "${resume[@]}" --json "$tmp/r.json" > /dev/null || [ $? -eq 1 ]
  if "$py" - "$tmp/whole.json" "$tmp/r.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = ["estimate", "error", "chi2_dof", "q", "n_eval", "n_iterations"]
ok = all(a[k] == b[k] for k in keys) and [i["estimate"] for i in a["iterations"]] == [i["estimate"] for i in b["iterations"]]
sys.exit(0 if ok else 1)
PY
  then same=$((same + 1)); echo "trial $t: killed at $at s, ${resume[*]:-no checkpoint yet}: same bits"
  else bad=$((bad + 1)); echo "trial $t: killed at $at s: DIFFERENT"; fi
done
echo "checkpoint_kill: $trials trials, uninterrupted run $whole s: $same with the same bits ($fresh killed before the first checkpoint), $bad different"
[ "$bad" -eq 0 ]
