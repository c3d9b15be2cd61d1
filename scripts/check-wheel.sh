#!/usr/bin/env bash
# The Python wheel, as CI builds it (scripts/test.sh): `python3 -m build --wheel --no-isolation` of
# this checkout, packaging the native module of an already configured CMake build (default
# build-test, MCUBES_BUILD_PYTHON=ON; setup.py's MCUBES_CMAKE_BUILD_DIR) into <build>/wheel/, then
# installed into a fresh virtual environment (Debian's python3, its NumPy) and imported: a vegas
# run and weighted samples. The wheel is an artifact to inspect, not published. Where no GPU is
# visible the CI build is a compile-check build (scripts/test.sh), and so is its wheel's CUDA part.
# Where the build found nvcc, the wheel's module must have the CUDA backend (GPU callables).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build-test}" && pwd)  # absolute
out="$build/wheel"
venv="$build/wheel-venv"
# The build's Python (CMake's Python3_EXECUTABLE: Debian's, with NumPy and python3-build)
py=$(sed -n 's/^Python3_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")
py=${py:-/usr/bin/python3}
root=$PWD
# whether the build has the CUDA backend (nvcc found; CMakeLists.txt's MCUBES_CUDA_BACKEND_BUILT):
# then the module must carry it
cuda=0
grep -q '^MCUBES_CUDA_BACKEND_BUILT:INTERNAL=ON$' "$build/CMakeCache.txt" && cuda=1
rm -rf "$out" "$venv" build-pip
mkdir -p "$out"
# run from the output folder: the checkout's build*/ folders would shadow the `build` module
(cd "$out" && MCUBES_CMAKE_BUILD_DIR="$build" "$py" -m build --wheel --no-isolation --outdir . "$root") \
  > "$build/wheel.log" 2>&1 || { tail -40 "$build/wheel.log"; exit 1; }
wheel=$(ls "$out"/mcubes-*.whl)
"$py" -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --quiet --no-index --no-deps "$wheel"
cd "$out"  # not the checkout: the installed module is imported
MCUBES_EXPECT_CUDA=$cuda "$venv/bin/python" - <<'PY'
import os, numpy, mcubes
assert mcubes._mcubes.has_cuda_callables == (os.environ["MCUBES_EXPECT_CUDA"] == "1"), \
    f"the wheel's CUDA backend: {mcubes._mcubes.has_cuda_callables}, nvcc found: {os.environ['MCUBES_EXPECT_CUDA']}"
assert "wheel-venv" in mcubes.__file__, mcubes.__file__
r = mcubes.vegas(lambda x: numpy.prod(x, axis=1), [(0, 1)] * 3, rel_tol=1e-3, backend="cpu")
assert r.converged and abs(r.estimate - 0.125) < 5 * r.error, r
integ = mcubes.Integrator([(0, 1)] * 3, calls_per_iteration=10000, backend="cpu")
integ(lambda x: numpy.prod(x, axis=1), max_iterations=3, skip=0, min_iterations=1)
x, w = integ.sample(1000)
assert x.shape == (1000, 3) and abs((w * numpy.prod(x, axis=1)).sum() - 0.125) < 0.01
print(f"check-wheel: mcubes {mcubes.__version__} from the wheel (CUDA backend: {mcubes._mcubes.has_cuda_callables}): {r}")
PY
echo "check-wheel: $wheel"
