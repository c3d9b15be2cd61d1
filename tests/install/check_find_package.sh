#!/usr/bin/env bash
# Installs mcubes from the build tree $1 into a temporary prefix and builds and runs a consumer
# project that uses find_package(mcubes) and mcubes::mcubes (examples/basic.cpp).
set -euo pipefail
build=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
mkdir -p "$tmp/consumer"
cp "$src/examples/basic.cpp" "$tmp/consumer/"
cat > "$tmp/consumer/CMakeLists.txt" <<'CMK'
cmake_minimum_required(VERSION 3.21)
project(consumer CXX)
find_package(mcubes 0.2 REQUIRED)
add_executable(basic basic.cpp)
target_link_libraries(basic PRIVATE mcubes::mcubes)
CMK
cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release > "$tmp/cfg.log"
cmake --build "$tmp/consumer/build" > "$tmp/build.log"
"$tmp/consumer/build/basic"
# The installed command compiles an integrand given as text against the installed headers
# (<prefix>/include beside <prefix>/bin), in a cache folder of its own.
if [ -x "$tmp/prefix/bin/mcubes" ]; then
  XDG_CACHE_HOME="$tmp/cache" "$tmp/prefix/bin/mcubes" integrate --expr 'x[0] * x[1]' --dim 2 --backend cpu -q
fi
