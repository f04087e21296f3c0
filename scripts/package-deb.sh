#!/usr/bin/env bash
# package-deb.sh [BUILD_DIR [OUT_DIR]] - build memprof's Debian package,
# memprof_<version>_<arch>.deb, into OUT_DIR (default: BUILD_DIR), and print
# its path. Without BUILD_DIR: a Release build in build-deb, configured for
# the prefix /usr (libraries in Debian's multiarch directory). With one:
# package what that build directory holds, as it is (the tests do this).
# Needs dpkg-dev (dpkg-shlibdeps computes the dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  scripts/deps.sh dpkg-dev
  scripts/build.sh build-deb -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DMEMPROF_TESTS=OFF
  set -- build-deb
fi
build=$(cd "$1" && pwd)
out=${2:-$build}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -f "$build/CPackConfig.cmake" ] || { echo "package-deb.sh: $build is not a configured memprof build" >&2; exit 2; }
# cpack's work tree goes under OUT_DIR/_CPack_Packages; its log is shown on failure only.
if ! cpack --config "$build/CPackConfig.cmake" -G DEB -B "$out" >"$out/cpack.log" 2>&1; then
  cat "$out/cpack.log" >&2
  exit 1
fi
ls "$out"/memprof_*.deb
