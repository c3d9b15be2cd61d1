#!/usr/bin/env bash
# On a machine with one NVIDIA GPU, from the repository root: the device checks of the open
# acceptance points in one build and one run. Builds in $B (build-accept), logs to $OUT
# (./gpu-accept-out); needs the header copies in .deps/ where Debian's packages are absent (as
# scripts/gpu-check.sh), and PyTorch/CuPy, pybind11 and pytest in the python3 on PATH.
#  1. the CUDA array path (tests/cuda/test_array_cuda.cu; memcheck on its small cases) and the
#     regression tests of the kernels it touched (test_vegas_cuda, test_batch_cuda, test_vector_cuda);
#  2. the Python module with its CUDA part: every pytest test, GPU callables included
#     (python/tests/test_gpu.py), then bench/python_bench.py --gpu torch and --gpu cupy (f4 8-D,
#     1e8 calls x 10 iterations, beside the C++ functor);
#  3. mcubes scan on the CUDA backend (bench/scan_gpu_check.sh);
#  4. the run-time compiled integrands on the GPU (bench/jit_gpu_check.sh's test and benchmark,
#     here with PAIRS (3) pairs);
#  5. with BENCH=1 also batch-bench and vector-bench (the batch and vector figures).
#   MCUBES_CUDA_ARCHITECTURES (default 90), SKIP_JIT=1, SKIP_SCAN=1
set -uo pipefail
OUT=${OUT:-gpu-accept-out}; mkdir -p "$OUT"; B=${B:-build-accept}
T0=$SECONDS
py=$(command -v python3)
pb=$("$py" -m pybind11 --cmakedir 2> /dev/null || true)
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DMCUBES_ENABLE_CUDA=ON -DMCUBES_BUILD_TESTS=ON -DMCUBES_BUILD_PYTHON=ON \
  -DMCUBES_BUILD_EXAMPLES=OFF -DMCUBES_CUDA_ARCHITECTURES="${MCUBES_CUDA_ARCHITECTURES:-90}" -DPython3_EXECUTABLE="$py" \
  ${pb:+-Dpybind11_DIR="$pb"} > "$OUT/cfg.log" 2>&1 || { tail -20 "$OUT/cfg.log"; exit 1; }
targets=(test_array_cuda test_vegas_cuda test_batch_cuda test_vector_cuda mcubes_python)
[ -z "${SKIP_SCAN:-}" ] && targets+=(mcubes_cli)
[ -z "${SKIP_JIT:-}" ] && targets+=(test_jit jit_bench)
[ -n "${BENCH:-}" ] && targets+=(batch_bench vector_bench)
cmake --build "$B" -j"$(nproc)" --target "${targets[@]}" > "$OUT/build.log" 2>&1 ||
  { grep -E "error" "$OUT/build.log" | head -20; exit 1; }
echo "build: $((SECONDS - T0)) s"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$PWD/$B/xdg-cache} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee "$OUT/device.txt"
L=$OUT/tests.log; : > "$L"
for t in test_array_cuda test_vegas_cuda test_batch_cuda test_vector_cuda; do
  echo "=== $t" >> "$L"; "$B/tests/$t" >> "$L" 2>&1; echo "$t: rc $?"
done
grep -E "^\[  (FAILED|SKIPPED) |Failure" "$L" | head -20
compute-sanitizer --tool memcheck "$B/tests/test_array_cuda" \
  --gtest_filter='CudaArray.NonFinite*:CudaArray.Errors*:CudaArray.OtherRegions*' > "$OUT/memcheck.log" 2>&1
grep -E "ERROR SUMMARY" "$OUT/memcheck.log" | tail -2
PYTHONPATH="$PWD/$B/python" "$py" -m pytest -q -p no:cacheprovider python/tests > "$OUT/pytest.log" 2>&1
echo "pytest: rc $?"; tail -3 "$OUT/pytest.log"
for m in torch cupy; do
  PYTHONPATH="$PWD/$B/python" "$py" bench/python_bench.py --gpu $m --calls 1e8 --iterations 10 --repeat 3 2>&1 |
    tee "$OUT/python-bench-$m.log"
done
if [ -z "${SKIP_SCAN:-}" ]; then OUT="$OUT/scan" bash bench/scan_gpu_check.sh "$B"; echo "scan check: rc $?"; fi
if [ -z "${SKIP_JIT:-}" ]; then
  { "$B/tests/test_jit" --gtest_filter='JitCuda.*'
    "$B/bin/jit-bench" --backend cuda --calls "${CALLS:-1e9}" --pairs "${PAIRS:-3}" --cold "${COLD:-3}" --warm "${WARM:-20}"
  } 2>&1 | tee "$OUT/jit-gpu.log"
fi
if [ -n "${BENCH:-}" ]; then
  "$B/bin/batch-bench" --sequential 64 --runs 5 2>&1 | tee "$OUT/batch-bench.log"
  "$B/bin/vector-bench" --backend cuda 2>&1 | tee "$OUT/vector-bench.log"
fi
echo "total: $((SECONDS - T0)) s"
