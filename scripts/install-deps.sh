#!/usr/bin/env bash
# Installs the Debian 12 packages mcubes needs, only those missing. Needs root (or sudo).
#   install-deps.sh           what command 1 needs (scripts/quickstart.sh: build the mcubes command)
#   install-deps.sh --tests   also what command 2 needs (scripts/test.sh: GoogleTest, GSL for a
#                             reference benchmark and a test, Python with matplotlib for bench/*.py,
#                             pybind11, the Python headers, NumPy and pytest for the Python module,
#                             help2man for the manual page, Doxygen for the API reference, OpenMPI
#                             for the runs under mpirun, Ninja for the builds of scripts/test.sh)
set -euo pipefail
pkgs=(g++ cmake make librandom123-dev libboost-math-dev libcli11-dev nlohmann-json3-dev)
case "${1:-}" in
  "") ;;
  --tests) pkgs+=(libgtest-dev libgsl-dev python3 python3-matplotlib pybind11-dev python3-dev python3-numpy python3-pytest
                 help2man doxygen python3-build python3-venv python3-wheel python3-setuptools python3-pip
                 libopenmpi-dev openmpi-bin ninja-build) ;;
  *) echo "usage: $0 [--tests]" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
