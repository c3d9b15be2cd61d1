#!/usr/bin/env bash
# Installs the Debian 12 packages mcubes needs, only those missing. Needs root (or sudo).
set -euo pipefail
pkgs=(g++ cmake make librandom123-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgsl-dev)
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
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
