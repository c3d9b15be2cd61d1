#!/usr/bin/env bash
# Command 2 of the README: install what is missing, build everything (the CUDA code too where nvcc
# exists), and run every test that needs no GPU (GPU tests skip themselves with a message).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Release -DMCUBES_BUILD_TESTS=ON
cmake --build build-test -j"$(nproc)"
ctest --test-dir build-test --output-on-failure -j"$(nproc)" --timeout 1200
