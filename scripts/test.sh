#!/usr/bin/env bash
# Command 2 of the README: install what is missing, build everything (the CUDA code too where nvcc
# exists; the Python module, whose pytest suite runs as the CTest test python_tests), and run every
# test that needs no GPU (GPU tests skip themselves with a message); package the Python wheel from
# that build and import it from a fresh virtual environment (scripts/check-wheel.sh); then
# build the fast tests (CTest label `fast`) with AddressSanitizer and UndefinedBehaviorSanitizer in
# build-asan/ and run them there (only there: the main build leaves them out). Fails if either part
# fails; both always run.
# Without a visible GPU the CUDA code is compiled to check that it compiles, nothing can run it:
# to PTX for compute_90 alone (MCUBES_CUDA_ARCHITECTURES=90-virtual: no machine code, so no ptxas,
# about a quarter of nvcc's time; MCUBES_CUDA_ARCHITECTURES to change it), and with
# MCUBES_CUDA_COMPILE_CHECK=ON (the command's and the Python module's CUDA runners in one dimension
# per integrand, device code at cicc -O0; the CUDA tests compiled whole; the header tests compile
# each .cuh to PTX for compute_90; the host code of CUDA units that nothing runs there at -O0), and
# with MCUBES_BENCH_COMPILE_CHECK=ON (the benchmark programs that no test runs through nvcc -cuda:
# front end and device code, no host compiler pass, nothing linked; no figure is taken without a GPU).
# Without a GPU the host code is compiled at -O1 (CMAKE_{CXX,CUDA}_FLAGS_RELEASE; half of g++'s time
# at -O3): the same bits at any level (no -ffast-math, no contraction), which the tests that compare
# run-time compiled integrands (-O3) with the build's show; the speed of the library is bench/'s
# business, measured in optimised builds on a GPU machine.
# The Python module's own units at -O0 there (MCUBES_PYTHON_CXX_OPT, python/CMakeLists.txt): 40 %
# of their compile time at -O1; the callables' sampling passes run in the engine. The precompiled
# CPU engine (mcubes_cpu_engine) at -O3 there (MCUBES_ENGINE_CXX_OPT, CMakeLists.txt): compiled once,
# it runs most of the tests' samples (the suite's FB tests 2.3x faster than with the engine at -O1).
# With a GPU, everything is built as a user builds it.
# Both builds use Ninja (install-deps.sh --tests installs it): it starts a target's units as soon as
# their own inputs exist, where Make waits for every target the target depends on; a build folder
# of another generator is configured afresh.
# The sanitizer build uses -Og -g1 (line tables: stack traces name file and line): with both
# sanitizers, g++ compiles a unit at -Og in about half its time at -O1 (tests/backends/
# test_methods_cpu.cpp 40 s against 77 s), and the fast tests run about a fifth longer; -O1 -g1 was
# about 30 % less compiler time than -O2 -g.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --tests
jobs=$(nproc)
t0=$SECONDS
generator=(-G Ninja)
for b in build-test build-asan; do  # a folder configured with another generator: its cache goes
  if [ -f "$b/CMakeCache.txt" ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$b/CMakeCache.txt"; then
    rm -rf "$b/CMakeCache.txt" "$b/CMakeFiles"
  fi
done

gpu=0
{ [ -e /dev/nvidia0 ] || nvidia-smi -L 2> /dev/null | grep -q '^GPU [0-9]'; } && gpu=1
arch_args=()
if [ -n "${MCUBES_CUDA_ARCHITECTURES:-}" ]; then
  arch_args=(-DMCUBES_CUDA_ARCHITECTURES="$MCUBES_CUDA_ARCHITECTURES")
elif [ "$gpu" -eq 0 ]; then
  arch_args=(-DMCUBES_CUDA_ARCHITECTURES=90-virtual)
fi
if [ "$gpu" -eq 0 ]; then
  arch_args+=(-DMCUBES_CUDA_COMPILE_CHECK=ON -DMCUBES_BENCH_COMPILE_CHECK=ON "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_CUDA_FLAGS_RELEASE=-O1 -DNDEBUG"
             -DMCUBES_PYTHON_CXX_OPT=-O0 -DMCUBES_ENGINE_CXX_OPT=-O3)
else
  arch_args+=(-DMCUBES_CUDA_COMPILE_CHECK=OFF)
fi
# The fast tests (CTest label `fast`) are built and run in the sanitizer build below only
# (MCUBES_BUILD_FAST_TESTS=OFF here): compiled once, not twice.
cmake -S . -B build-test "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DMCUBES_BUILD_TESTS=ON -DMCUBES_BUILD_FAST_TESTS=OFF -DMCUBES_BUILD_PYTHON=ON \
  "${arch_args[@]}"
cmake --build build-test -j"$jobs"
rc_main=0
ctest --test-dir build-test --output-on-failure -j"$jobs" --timeout 1200 || rc_main=$?
echo "test.sh: build and tests: $((SECONDS - t0)) s (ctest exit $rc_main; CUDA runners compile check only: $((1 - gpu)))"
t2=$SECONDS
rc_wheel=0
bash scripts/check-wheel.sh build-test || rc_wheel=$?
echo "test.sh: Python wheel from build-test: $((SECONDS - t2)) s (exit $rc_wheel; build-test/wheel/)"

t1=$SECONDS
cmake -S . -B build-asan "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG" -DMCUBES_ENABLE_CUDA=OFF -DMCUBES_BUILD_BENCH=OFF \
  -DMCUBES_BUILD_EXAMPLES=OFF -DMCUBES_BUILD_TESTS=ON -DMCUBES_SANITIZE=address,undefined
cmake --build build-asan -j"$jobs" --target mcubes_fast_tests
rc_asan=0
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" --timeout 1200 -L '^fast$' || rc_asan=$?
echo "test.sh: sanitizer build and fast tests: $((SECONDS - t1)) s (ctest exit $rc_asan)"
echo "test.sh: total $((SECONDS - t0)) s"
[ "$rc_main" -eq 0 ] && [ "$rc_wheel" -eq 0 ] && [ "$rc_asan" -eq 0 ]
