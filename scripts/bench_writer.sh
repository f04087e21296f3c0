#!/usr/bin/env bash
# bench_writer.sh [events per thread] - capture writer throughput and size on
# the allocation pattern of ../shared/bench/alloc_bench.c (addresses from
# real malloc calls, alloc_bench's "mixed" sizes, ops and steps changing
# rarely). Prints one line per configuration; see tests/bench/bench_writer.c.
# events_per_s is the recording threads' wall-clock rate (targets: >= 20 M/s
# on one thread, <= 4 bytes/event); record_cpu_ns_per_event and
# flush_cpu_ns_per_event are what each side costs on a core of its own,
# which stays meaningful when other work loads the machine (the wall rate
# is 1e9 / the larger of the two when each has a core).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20000000}
scripts/deps.sh
scripts/build.sh build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
out=$(mktemp /tmp/bench-writer-XXXXXX.memprof)
trap 'rm -f "$out"' EXIT
for shed in 0 1; do
	if [ $shed = 0 ]; then
		echo "## default: a thread that records faster than the flusher compresses waits for it"
	else
		echo "## shed (MEMPROF_SHED=1): the flusher sheds work instead, less compressed blocks for a while"
	fi
	echo "# single thread, $n events"
	SHED=$shed build-bench/tests/bench/bench_writer -t 1 -n "$n" -o "$out"
	echo "# 4 threads, $((n / 4)) events each"
	SHED=$shed build-bench/tests/bench/bench_writer -t 4 -n "$((n / 4))" -o "$out"
done
