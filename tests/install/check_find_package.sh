#!/usr/bin/env bash
# Installs mcubes from the build tree $1 into a temporary prefix (the files, the completion and the
# manual page checked) and builds and runs a consumer
# project that uses find_package(mcubes <major.minor>) and mcubes::mcubes (examples/basic.cpp);
# $3: the project's major.minor version (the package accepts the same minor version).
set -euo pipefail
build=$1; src=$2; version=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
mkdir -p "$tmp/consumer"
cp "$src/examples/basic.cpp" "$tmp/consumer/"
cat > "$tmp/consumer/CMakeLists.txt" <<CMK
cmake_minimum_required(VERSION 3.21)
project(consumer CXX)
find_package(mcubes $version REQUIRED)
add_executable(basic basic.cpp)
target_link_libraries(basic PRIVATE mcubes::mcubes)
CMK
# The consumer in CMake's default configuration (no build type: no optimisation flags) and the
# pkg-config build at -O0: the subject is the package; -O3 took twice the compiler's time.
cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/cfg.log"
cmake --build "$tmp/consumer/build" > "$tmp/build.log"
"$tmp/consumer/build/basic"
# The licence and the documentation under share/doc/mcubes.
for f in LICENSE README.md CHANGELOG.md CITATION.cff guide.md; do
  [ -s "$tmp/prefix/share/doc/mcubes/$f" ] || { echo "not installed: share/doc/mcubes/$f" >&2; exit 1; }
done
# pkg-config: the installed mcubes.pc (relocatable) names the installed headers, and basic.cpp
# builds with its flags alone. Without a pkg-config program, the file is checked as text.
pc="$tmp/prefix/share/pkgconfig/mcubes.pc"
[ -s "$pc" ] || { echo "not installed: share/pkgconfig/mcubes.pc" >&2; exit 1; }
grep -q '^Cflags: -std=c++17 -I${includedir}$' "$pc" || { echo "mcubes.pc: unexpected Cflags" >&2; exit 1; }
if command -v pkg-config > /dev/null; then
  flags=$(PKG_CONFIG_PATH="$tmp/prefix/share/pkgconfig" pkg-config --cflags --libs mcubes)
  inc=$(PKG_CONFIG_PATH="$tmp/prefix/share/pkgconfig" pkg-config --variable=includedir mcubes)
  [ "$(cd "$inc" && pwd -P)" = "$(cd "$tmp/prefix/include" && pwd -P)" ] ||
    { echo "mcubes.pc: includedir $inc is not the installed include folder" >&2; exit 1; }
  [ "$(PKG_CONFIG_PATH="$tmp/prefix/share/pkgconfig" pkg-config --modversion mcubes)" = "$(sed -n 's/^Version: //p' "$pc")" ]
  # shellcheck disable=SC2086
  c++ -O0 -o "$tmp/basic_pc" "$src/examples/basic.cpp" $flags
  "$tmp/basic_pc" > /dev/null
else
  echo "check_find_package: no pkg-config program; mcubes.pc checked as text only"
fi
# The installed command compiles an integrand given as text against the installed headers
# (<prefix>/include beside <prefix>/bin), in a cache folder of its own.
if [ -x "$tmp/prefix/bin/mcubes" ]; then
  grep -q '^complete -o default -F _mcubes mcubes$' "$tmp/prefix/share/bash-completion/completions/mcubes" ||
    { echo "not installed: share/bash-completion/completions/mcubes" >&2; exit 1; }
  # the manual page, where the build made one (help2man: install-deps.sh --tests installs it)
  if [ -s "$build/man/mcubes.1" ]; then
    grep -q '^\.TH MCUBES' "$tmp/prefix/share/man/man1/mcubes.1" ||
      { echo "not installed: share/man/man1/mcubes.1" >&2; exit 1; }
  fi
  XDG_CACHE_HOME="$tmp/cache" "$tmp/prefix/bin/mcubes" integrate --expr 'x[0] * x[1]' --dim 2 --backend cpu -q
fi
