#!/usr/bin/env bash
# bench_writer.sh [events per thread] - capture writer throughput and size on
# the allocation pattern of ../shared/bench/alloc_bench.c (addresses from
# real malloc calls, alloc_bench's "mixed" sizes, ops and steps changing
# rarely). Prints one line per configuration; see tests/bench/bench_writer.c.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20000000}
scripts/deps.sh
scripts/build.sh build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
out=$(mktemp /tmp/bench-writer-XXXXXX.memprof)
trap 'rm -f "$out"' EXIT
echo "# single thread, $n events"
build-bench/tests/bench/bench_writer -t 1 -n "$n" -o "$out"
echo "# 4 threads, $((n / 4)) events each"
build-bench/tests/bench/bench_writer -t 4 -n "$((n / 4))" -o "$out"
