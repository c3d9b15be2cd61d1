#!/usr/bin/env bash
# On a GPU machine, from the repository root: the CUDA path of the run-time compilation
# (include/mcubes/jit.hpp) and its benchmark. Builds test_jit (host code: nvcc runs at run time)
# and jit-bench (itself compiled by nvcc, so that the built-in f4 runs on the GPU beside the
# run-time compiled one) in $B (build-jit-gpu), then runs the CUDA test of test_jit and
# `jit-bench --backend cuda` (f4 8-D, 10 iterations of CALLS evaluations: speed against the built-in
# and the compile time cold and warm), and the CPU comparison with every core. Logs to $OUT
# (default ./jit-gpu-out); the cache of compiled integrands in $B/jit-cache. Needs the header copies
# in .deps/ when Debian's packages are absent (as scripts/gpu-check.sh).
#   MCUBES_CUDA_ARCHITECTURES (default 90: H100, H200), CALLS (1e9), PAIRS (5), COLD (3), WARM (20)
set -uo pipefail
OUT=${OUT:-jit-gpu-out}; mkdir -p "$OUT"; B=${B:-build-jit-gpu}
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DMCUBES_ENABLE_CUDA=ON -DMCUBES_BUILD_EXAMPLES=OFF \
  -DMCUBES_CUDA_ARCHITECTURES="${MCUBES_CUDA_ARCHITECTURES:-90}" > "$OUT/cfg.log" 2>&1 || { tail -20 "$OUT/cfg.log"; exit 1; }
cmake --build "$B" -j"$(nproc)" --target test_jit jit_bench > "$OUT/build.log" 2>&1 ||
  { grep -E "error" "$OUT/build.log" | head -20; exit 1; }
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$PWD/$B/jit-cache}
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
  "$B/tests/test_jit" --gtest_filter='JitCuda.*'
  "$B/bin/jit-bench" --backend cuda --calls "${CALLS:-1e9}" --pairs "${PAIRS:-5}" --cold "${COLD:-3}" --warm "${WARM:-20}"
  "$B/bin/jit-bench" --backend cpu --threads "$(nproc)" --pairs 3 --cold 1 --warm 10
} 2>&1 | tee "$OUT/jit-gpu.log"
