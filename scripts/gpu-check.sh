#!/usr/bin/env bash
# The H100 check of the CUDA code (run on the GPU machine from the repository root; needs the
# header copies in .deps/ when Debian's packages are absent). Writes logs to $OUT (or ./gpu-out).
set -uo pipefail
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"; B=build-gpu
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release > "$OUT/cfg.log" 2>&1 || { tail -20 "$OUT/cfg.log"; exit 1; }
cmake --build $B -j"$(nproc)" --target test_vegas_cuda test_device_map mcubes_bench pi_bench test_pi_cuda test_plain_mc_cuda \
  test_suite_device mcubes_cli > "$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head; exit 1; }
L=$OUT/tests.log; : > "$L"
for t in test_vegas_cuda test_device_map test_pi_cuda test_plain_mc_cuda test_suite_device; do
  echo "=== $t" >> "$L"; $B/tests/$t >> "$L" 2>&1; echo "$t: rc $?"
done
grep -E "^\[  (FAILED|SKIPPED) |Failure" "$L" | head -20
for tool in memcheck racecheck; do
  echo "=== $tool" >> "$L"
  compute-sanitizer --tool $tool $B/tests/test_vegas_cuda --gtest_filter='CudaSanitizer.*' >> "$L" 2>&1
  compute-sanitizer --tool $tool $B/tests/test_device_map --gtest_filter='DeviceMap.AlphaZero*' >> "$L" 2>&1
  compute-sanitizer --tool $tool $B/tests/test_plain_mc_cuda --gtest_filter='*NonFinite*' >> "$L" 2>&1
  compute-sanitizer --tool $tool $B/bin/mcubes pi --method mc --samples 1e6 --backend cuda >> "$L" 2>&1
  compute-sanitizer --tool $tool $B/bin/mcubes pi --method midpoint --samples 1e6 --backend cuda >> "$L" 2>&1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$L" | tail -4
done
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
  $B/bin/mcubes-bench throughput --runs 3; $B/bin/mcubes-bench reference
  for s in 1 2 3; do $B/bin/mcubes-bench trace fB --seed $s | tail -1; done
  $B/bin/mcubes-bench trace f4; $B/bin/mcubes integrate fB --backend cuda --quiet
  for t in ${ADAPT_TILES:-}; do echo "--- --adapt-tiles $t"; $B/bin/mcubes-bench reference --adapt-tiles $t; done; } 2>&1 | tee "$OUT/bench.log"
if [ -z "${SKIP_PI:-}" ]; then
  $B/bin/pi-bench > "$OUT/pi_bench.log" 2>&1; echo "pi-bench rc $?"; grep -E "best|PASS|FAIL" "$OUT/pi_bench.log"
fi
if [ -n "${NCU:-}" ]; then  # what bounds the V-Sample kernels (pipes, issue slots, occupancy)
  for k in 'v_sample_kernel<\(int\)8' 'v_sample_kernel<\(int\)6'; do
    ncu --kernel-name-base demangled -k regex:"$k" --launch-skip 2 --launch-count 1 --section SpeedOfLight \
      --section ComputeWorkloadAnalysis --section InstructionStats --section Occupancy --section WarpStateStats \
      --section LaunchStats $B/bin/mcubes-bench throughput --runs 1 --calls 400000000 2>&1 | grep -v "^==PROF==" | \
      grep -E "v_sample_kernel|Throughput|Busy|Pipe|Occupancy|Registers|Eligible|Issued|Executed Ipc|Stall|Warp Cycles" | head -40
  done 2>&1 | tee "$OUT/ncu.log"
fi
if [ -z "${SKIP_LIMITS:-}" ] && [ -f .deps/limits/limits.cu ]; then
  nvcc -O3 -arch=sm_90 -o $B/limits .deps/limits/limits.cu && $B/limits > "$OUT/limits.log" 2>&1; cat "$OUT/limits.log"
fi
