#!/usr/bin/env bash
# bench_parts.sh [RUNS] [OPS] - where the CPU time of a `memprof record` of
# alloc_bench goes, part by part (not run by ctest; see docs/hooks.md, "Cost").
#
# bench_record.sh's wall-clock ratio moves by a tenth from set to set on a
# shared 2-vCPU VM, and most of that is not ours: alloc_bench's two threads
# contend on one atomic (`account`), whose cost swings from run to run with
# where the host has the two vCPUs (the program's own code: 1.2 or 2.1 CPU-s
# in recordings of one build; tests/bench/vcpu_pingpong.c). A
# change of a few percent in the profiler's own work drowns in that. This
# script measures that work itself: each run under `perf record` (1000 Hz,
# CPU clock), the samples of the preload library split by part, in
# CPU-seconds:
#   hooks    the interposed malloc family (the event path, inline in them)
#   encoder  ring records to columns (chunkenc*.c)
#   tally    the running figures (tally*.c)
#   huffman  the deflate coder (deflate_huff.c)
#   other    the rest of the preload (the round's frame, CRC, ...)
# and beside them the program (alloc_bench's own code), libc and the kernel;
# the plain program's in the same rounds first. Prints every run, then the
# medians per build.
#
# MEMPROF_BINS="dir1 dir2 ..." as for bench_record.sh (directories holding
# a memprof binary and libmemprof_preload.so; default: this tree's
# build-bench, built here). Needs perf (apt-get install linux-perf).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
ops=${2:-20000000}
command -v perf >/dev/null || { echo "bench_parts: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
# shellcheck source=scripts/bench_alloc_common.sh
. scripts/bench_alloc_common.sh

echo "# alloc_bench -t 2 -n $ops under memprof record, perf at 1000 Hz, $runs runs per build ($(nproc) CPUs); CPU-seconds"
print_builds
printf "%-6s %6s %8s %7s %8s %7s %8s %6s %8s %6s %7s\n" build total preload hooks encoder tally huffman other program libc kernel
for _ in $(seq "$runs"); do
	for name in plain $recs; do
		if [ "$name" = plain ]; then
			perf record -q -F 1000 -o "$tmp/perf.data" -- "$tmp/alloc_bench" -t 2 -n "$ops" >/dev/null 2>&1
		else
			b=$(bin_of "$name")
			rm -rf "$tmp/cap.memprof"
			MEMPROF_PRELOAD="$b/libmemprof_preload.so" perf record -q -F 1000 -o "$tmp/perf.data" -- \
				"$b/memprof" record -o "$tmp/cap.memprof" -- "$tmp/alloc_bench" -t 2 -n "$ops" >/dev/null 2>&1
		fi
		# (perf's "Event count" of the CPU clock is in ns)
		total=$(perf report -i "$tmp/perf.data" --stdio 2>/dev/null | awk '/Event count/ {print $NF}')
		perf report -i "$tmp/perf.data" --no-children --sort dso,sym 2>/dev/null | awk -v t="$total" -v name="$name" '
			/%/ {
				sub("%", "", $1); c = $1 * t / 1e11; dso = $2; sym = $4
				if (dso == "libmemprof_preload.so") {
					pre += c
					if (sym ~ /^(malloc|free|cfree|realloc|calloc|reallocarray|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|_Zn|_Zd)/) hooks += c
					else if (sym ~ /chunkenc|chunk_encode|^encode_/) enc += c
					else if (sym ~ /tally|^run_(one|two|heap)$/) tal += c
					else if (sym ~ /^mp__dh_|^code_bytes|^sort_leaves|^build_lengths/) huf += c
					else oth += c
				} else if (dso == "alloc_bench") prog += c
				else if (dso ~ /^libc/) libc += c
				else if (dso ~ /kernel/) kern += c
			}
			END { printf "%-6s %6.2f %8.2f %7.2f %8.2f %7.2f %8.2f %6.2f %8.2f %6.2f %7.2f\n", name, t / 1e9, pre, hooks, enc, tal, huf, oth, prog, libc, kern }' |
			tee -a "$tmp/runs.txt"
	done
done
echo "# medians"
for name in plain $recs; do
	line=$name
	for col in $(seq 2 11); do
		line="$line $(awk -v n="$name" -v c="$col" '$1 == n {print $c}' "$tmp/runs.txt" | median)"
	done
	# shellcheck disable=SC2086 # (the line's fields, split on purpose)
	printf "%-6s %6.2f %8.2f %7.2f %8.2f %7.2f %8.2f %6.2f %8.2f %6.2f %7.2f\n" $line
done
