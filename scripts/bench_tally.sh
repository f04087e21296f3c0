#!/usr/bin/env bash
# bench_tally.sh [EVENTS_PER_THREAD] [REPS] - the writer's tally on its own
# (tests/bench/bench_tally.c: two threads' alloc_bench-like ring records,
# tallied a flush round at a time): ns per event, best of REPS, and the
# figures (the same for every build). Not run by ctest; see docs/hooks.md,
# "Cost". To count instructions: valgrind --tool=cachegrind on the binary
# with EVENTS_PER_THREAD 1000000 and REPS 1.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
build-bench/tests/bench/bench_tally "${1:-4000000}" "${2:-5}"
