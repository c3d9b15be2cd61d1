#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build, and integrate f4 (8-D Gaussian) on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMCUBES_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target mcubes_cli
./build/bin/mcubes integrate f4 "$@"
