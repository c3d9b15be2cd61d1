#!/usr/bin/env bash
# Checkpoints across device counts on a GPU machine: builds the command and the tests (build-gpu),
# runs the tests of checkpoints on several devices (streams of device 0), then the command on every
# GPU: a scan and a run compiled at run time stopped by SIGINT after STOP_AFTER seconds on every GPU
# resume on one, and the reverse, compared with the run never stopped. Writes under $OUT.
set -uo pipefail
OUT=${OUT:-out-checkpoint-devices}; mkdir -p "$OUT"
B=build-gpu
t0=$SECONDS
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
[ -x $B/bin/mcubes ] && [ "${REBUILD:-0}" = 0 ] || cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DMCUBES_CUDA_ARCHITECTURES=90 -DMCUBES_ENABLE_MPI=OFF -DMCUBES_BUILD_PYTHON=OFF \
  -DMCUBES_BUILD_TESTS=ON -DMCUBES_BUILD_BENCH=OFF -DMCUBES_BUILD_EXAMPLES=OFF > $OUT/cfg.log 2>&1 || { tail -20 $OUT/cfg.log; exit 1; }
cmake --build $B -j"$(nproc)" --target ${TARGETS:-mcubes_cli test_cli test_multi_device test_checkpoint} > $OUT/build.log 2>&1 \
  || { grep -E "error" $OUT/build.log | head -30; exit 1; }
echo "build: $((SECONDS - t0)) s"
r() { local name=$1; shift; local t=$SECONDS; timeout ${T:-300} "$@" > $OUT/$name.log 2>&1; echo "$name: rc $? $((SECONDS - t)) s $(grep -E '^\[  (PASSED|FAILED) ' $OUT/$name.log | head -2 | tr '\n' ' ')"; grep -E "^\[  FAILED|Failure" -A6 $OUT/$name.log | head -30; }
[ "${TESTS:-1}" = 1 ] && r test_checkpoint $B/tests/test_checkpoint
[ "${TESTS:-1}" = 1 ] && r test_multi_device $B/tests/test_multi_device
[ "${TESTS:-1}" = 1 ] && (cd $B/tests && T=400 r test_cli ./test_cli --gtest_filter='Cli.ScansAndCompiledRunsResumeAcrossDeviceCounts:Cli.DevicesGiveTheBitsOfOneDevice:*devices*')
# the command on the machine's GPUs: a checkpoint written on every GPU resumes on one, and the reverse
M=$B/bin/mcubes
n=$(nvidia-smi -L | wc -l); all=$(seq -s, 0 $((n - 1)))
S="scan f4 --dim 6 --param a=5:60:64 --calls-per-iter 2e6 --seed 11 --backend cuda --rel-tol 1e-12 --skip 0 --min-iterations 1 --json-iterations -q"
E="integrate --expr 'exp(-40*((x[0]-0.3)*(x[0]-0.3)+(x[1]-0.6)*(x[1]-0.6)+(x[2]-0.45)*(x[2]-0.45)))' --dim 3 --calls-per-iter 1e8 --seed 4 --backend cuda --rel-tol 1e-12 --skip 0 --min-iterations 1 -q"
cmp_json() { python3 - "$@" <<'EOP'
import json, sys
a, b, kind = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
ra = a["results"] if "results" in a else [a]
rb = b["results"] if "results" in b else [b]
same = len(ra) == len(rb) and all(x["estimate"] == y["estimate"] and x["error"] == y["error"] and len(x["iterations"]) == len(y["iterations"]) for x, y in zip(ra, rb))
print(kind, "SAME BITS" if same else "DIFFERENT", len(ra), "results", ra[0]["estimate"], ra[-1]["estimate"])
EOP
}
for what in S E; do
  C=${!what}
  N=$([ $what = S ] && echo 30 || echo 2500)
  eval "$M $C --max-iterations $N --json $OUT/${what}_whole.json" > $OUT/${what}_whole.txt 2>&1
  for pair in "--devices $all|--devices 0" "--devices 0|--devices $all"; do
    first=${pair%|*}; second=${pair#*|}
    rm -f $OUT/${what}.ckpt $OUT/${what}_part.json $OUT/${what}_rest.json
    t=$SECONDS; eval "timeout --foreground -s INT ${STOP_AFTER:-2} $M $C --max-iterations $N --checkpoint $OUT/${what}.ckpt $first --json $OUT/${what}_part.json" > $OUT/${what}_part.txt 2>&1; rc1=$?
    eval "$M $C --max-iterations $N --resume $OUT/${what}.ckpt $second --json $OUT/${what}_rest.json" > $OUT/${what}_rest.txt 2>&1; rc2=$?
    echo "$what [$first] then [$second]: rc $rc1 $rc2 ($((SECONDS - t)) s); $(grep -E '^resumed|interrupted' $OUT/${what}_rest.txt $OUT/${what}_part.txt | head -3 | tr '\n' ' ')"
    python3 -c "import json,sys; j=json.load(open('$OUT/${what}_part.json')); r=j.get('results',[j]); print('part iterations:', sorted(set(len(x.get('iterations',[])) for x in r))[:6], 'statuses:', sorted(set(x['status'] for x in r)))" 2>&1 | head -2
    cmp_json $OUT/${what}_rest.json $OUT/${what}_whole.json "$what"
  done
done
echo "total: $((SECONDS - t0)) s"
