#!/usr/bin/env bash
# run-tests.sh - the README's test command (and CI's): install what is
# missing, then build and run the whole suite twice:
#   1. strict warnings as errors (-Werror), optimised build;
#   2. AddressSanitizer + UndefinedBehaviorSanitizer (everything except the
#      libraries injected into traced programs, which must not carry ASan).
# and compiles (without running) a Release build with -Werror too: -O3
# finds warnings -O2 does not (maybe-uninitialized through inlining), and
# the benchmark scripts build Release.
# Tests that need ../shared/data skip with a message when it is absent.
# It also installs Debian's chromium (about 120 MB to download, 400 MB
# installed) for html_chromium, the HTML report in a headless browser:
# where it cannot be installed (no package source) the suite goes on and
# that test skips with a message; MEMPROF_TEST_CHROMIUM=0 leaves it out.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
if [ "${MEMPROF_TEST_CHROMIUM:-1}" != 0 ] && ! scripts/deps.sh chromium; then
  echo "memprof: chromium could not be installed: html_chromium will skip"
fi
jobs=$(nproc)

echo "== build (-Werror)"
scripts/build.sh build-ci -DMEMPROF_WERROR=ON
echo "== tests (-Werror build)"
ctest --test-dir build-ci --output-on-failure -j "$jobs"

echo "== build (Release, -Werror; compiled only)"
scripts/build.sh build-release -DMEMPROF_WERROR=ON -DCMAKE_BUILD_TYPE=Release

echo "== build (ASan + UBSan, -Werror)"
scripts/build.sh build-asan -DMEMPROF_WERROR=ON -DMEMPROF_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
echo "== tests (ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"
