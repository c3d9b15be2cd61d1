#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build the mcubes command (nothing else), and
# integrate f4 (8-D Gaussian); arguments go to `mcubes integrate f4`.
# The CUDA backend is built only when a GPU is visible (nvidia-smi lists one, or /dev/nvidia0
# exists), for that GPU's architecture, or when MCUBES_ENABLE_CUDA=ON is set (then for the
# architectures in MCUBES_CUDA_ARCHITECTURES, default: CMakeLists.txt's choice).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

gpu_visible() {
  [ -e /dev/nvidia0 ] && return 0
  command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi -L 2> /dev/null | grep -q '^GPU [0-9]'
}
cuda=${MCUBES_ENABLE_CUDA:-}
if [ -z "$cuda" ]; then
  if gpu_visible; then cuda=AUTO; else cuda=OFF; fi
fi
args=(-DCMAKE_BUILD_TYPE=Release -DMCUBES_BUILD_TESTS=OFF -DMCUBES_BUILD_BENCH=OFF -DMCUBES_BUILD_EXAMPLES=OFF
      -DMCUBES_ENABLE_CUDA="$cuda")
[ -n "${MCUBES_CUDA_ARCHITECTURES:-}" ] && args+=(-DMCUBES_CUDA_ARCHITECTURES="$MCUBES_CUDA_ARCHITECTURES")
echo "quickstart: configuring (CUDA backend: $cuda)"
cmake -S . -B build "${args[@]}" > /dev/null
cmake --build build -j"$(nproc)" --target mcubes_cli
./build/bin/mcubes integrate f4 "$@"
