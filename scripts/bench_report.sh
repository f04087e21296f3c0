#!/bin/sh
# bench_report.sh - throughput and memory of `memprof report --peak` on
# synthetic captures (not run in CI).
#
#   scripts/bench_report.sh [BUILD_DIR] [EVENTS] [WORK_DIR]
#
# KEEP=1 keeps the generated captures in WORK_DIR and reuses them on the next
# run (they are about 6 bytes per event).
# For two live-set sizes (about 10 thousand and 1 million blocks, inside
# declared regions) it writes a capture of EVENTS events (default 100
# million) with memprof_gen_capture, then prints for `memprof report --peak`
# the wall time, events/s and peak RSS, the capture reader alone
# (bench_reader), its inflate against zlib's and libdeflate's
# (bench_inflate, MB/s), and the solver alone fed in-process
# (memprof_bench_solver), which excludes reading the file. On 2 cores, neighbours' load shows in the
# wall time (report --peak uses both cores): the load is printed first.
# Targets: >= 20 M events/s with ~10 k live blocks; peak RSS <= 200 MB with
# ~1 M live blocks.
set -eu

BUILD=${1:-build}
EVENTS=${2:-100000000}
WORK=${3:-${TMPDIR:-/tmp}}
MEMPROF=$BUILD/src/cli/memprof
GEN=$BUILD/tests/report/memprof_gen_capture
BENCH=$BUILD/tests/solver/memprof_bench_solver
READER=$BUILD/tests/bench/bench_reader
INFLATE=$BUILD/tests/bench/bench_inflate

cmake --build "$BUILD" --target memprof memprof_gen_capture memprof_bench_solver bench_reader bench_inflate >/dev/null
for tool in "$MEMPROF" "$GEN" "$BENCH" "$READER" "$INFLATE"; do
	[ -x "$tool" ] || { echo "bench_report: missing $tool (configure with -DMEMPROF_TESTS=ON)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench_report: needs /usr/bin/time (GNU time)" >&2; exit 1; }

echo "machine: $(nproc) cores, $(uname -m), load: $(cut -d' ' -f1-3 /proc/loadavg)"
for live in 10000 1000000; do
	cap="$WORK/bench-$EVENTS-$live.memprof"
	echo
	echo "== $EVENTS events, live set ~$live blocks in 4 regions =="
	if [ -s "$cap" ] && [ "${KEEP:-0}" = 1 ]; then
		echo "capture: $(du -h "$cap" | cut -f1), reused"
	else
		start=$(date +%s.%N)
		"$GEN" "$cap" --events "$EVENTS" --live "$live" --regions 4 --oom 10
		end=$(date +%s.%N)
		echo "capture: $(du -h "$cap" | cut -f1) written in $(echo "$end - $start" | bc) s"
	fi
	/usr/bin/time -f '%e %M %U %S' -o "$WORK/bench-time.txt" "$MEMPROF" report --peak --top 5 "$cap" >"$WORK/bench-out.txt"
	read -r wall rss user sys <"$WORK/bench-time.txt"
	# On a busy machine wall time measures the neighbours; CPU time (user +
	# system) is the fairer figure, so both are printed.
	echo "report --peak: $wall s wall, $(echo "scale=2; $EVENTS / $wall / 1000000" | bc) M events/s;" \
		"cpu $(echo "$user + $sys" | bc) s, $(echo "scale=2; $EVENTS / ($user + $sys) / 1000000" | bc) M events/s;" \
		"peak RSS $(echo "scale=1; $rss / 1024" | bc) MB"
	grep -E 'peak in use|fragmentation ' "$WORK/bench-out.txt" | head -2 | sed 's/^/  /'
	# report --peak reads in one thread and solves in another, the two
	# sharing the inflation of blocks (blockio.h); the reader alone, one
	# event at a time, fetching its blocks itself and with a read-ahead
	# thread of its own:
	echo "  reader alone, 1 thread:  $(MEMPROF_READAHEAD=0 "$READER" "$cap")"
	echo "  reader alone, 2 threads: $(MEMPROF_READAHEAD=thread "$READER" "$cap")"
	# The reader's own inflate against zlib's and libdeflate's on the first
	# 64 blocks, as written and recompressed at zlib level 6 and libdeflate
	# levels 1 and 6 (MB/s of output per CPU s).
	"$INFLATE" "$cap" 1 64 | sed 's/^/  inflate, /'
	"$BENCH" --events "$EVENTS" --live "$live" --regions 4 | sed 's/^/  /'
	[ "${KEEP:-0}" = 1 ] || rm -f "$cap"
done
rm -f "$WORK/bench-time.txt" "$WORK/bench-out.txt"
