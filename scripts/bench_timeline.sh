#!/bin/sh
# bench_timeline.sh - `memprof plot --chart timeline` of long captures
# from their rounds (format 2.5 ROUND sections, memprof/rounds.h) against
# the full replay of every event (--replay), side by side (not run in CI).
#
#   scripts/bench_timeline.sh [BUILD_DIR] [WORK_DIR] [EVENTS...]
#
# For each EVENTS (default 100000000; add 1000000000 where the disk has
# about 6 GB free) it writes a capture with memprof_gen_capture (about 10
# thousand live blocks in 4 regions, 10 failed allocations; about 6 bytes
# per event; KEEP=1 keeps and reuses it), then draws its timeline as a PNG
# both ways and prints, for each, the wall time, the CPU time (user +
# system) and the peak RSS from /usr/bin/time -v, and the peak label's
# figures. The generator writes events far faster than a program makes
# them, so its captures have few rounds (about 800 for 100 million
# events); ROUNDS=N (e.g. 40000, an hour's rounds at the writer's 90 ms)
# ends a round by hand every EVENTS / N events instead. The machine's load is printed first: on 2 cores shared with
# other jobs, wall time measures the neighbours too (CPU time less so).
# Target (issue 43): the timeline of 1 billion events in <= 5 s.
set -eu

BUILD=${1:-build}
WORK=${2:-${TMPDIR:-/tmp}}
shift 2 2>/dev/null || shift $#
[ $# -gt 0 ] || set -- 100000000
MEMPROF=$BUILD/src/cli/memprof
GEN=$BUILD/tests/report/memprof_gen_capture

cmake --build "$BUILD" --target memprof memprof_gen_capture >/dev/null
for tool in "$MEMPROF" "$GEN"; do
	[ -x "$tool" ] || { echo "bench_timeline: missing $tool (configure with -DMEMPROF_TESTS=ON)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench_timeline: needs /usr/bin/time (GNU time)" >&2; exit 1; }

# one run: wall s, cpu s, RSS MB of `memprof plot ARGS...`
run() {
	/usr/bin/time -v -o "$WORK/bench-tl-time.txt" "$MEMPROF" plot --chart timeline "$@" 2>"$WORK/bench-tl-err.txt" >/dev/null
	awk -F': ' '
		/Elapsed \(wall clock\)/ { n = split($2, p, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + p[i] }
		/User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident/ { r = $2 }
		END { printf "%.2f s wall, %.2f s cpu, %.1f MB RSS", w, u + s, r / 1024 }' "$WORK/bench-tl-time.txt"
}

echo "machine: $(nproc) cores, $(uname -m), load: $(cut -d' ' -f1-3 /proc/loadavg)"
for events in "$@"; do
	rounds=${ROUNDS:-0}
	cap="$WORK/bench-tl-$events.memprof"
	every=""
	if [ "$rounds" != 0 ]; then
		cap="$WORK/bench-tl-$events-$rounds.memprof"
		every="--round-every $((events / rounds))"
	fi
	echo
	echo "== $events events, live set ~10000 blocks in 4 regions${every:+, a round every $((events / rounds)) events} =="
	if [ -s "$cap" ] && [ "${KEEP:-0}" = 1 ]; then
		echo "capture: $(du -h "$cap" | cut -f1), reused"
	else
		start=$(date +%s.%N)
		# shellcheck disable=SC2086
		"$GEN" "$cap" --events "$events" --live 10000 --regions 4 --oom 10 $every >/dev/null
		end=$(date +%s.%N)
		echo "capture: $(du -h "$cap" | cut -f1) written in $(echo "$end - $start" | bc) s"
	fi
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "rounds:      $(run -o "$WORK/bench-tl-rounds.png" "$cap")"
	[ ! -s "$WORK/bench-tl-err.txt" ] || sed 's/^/  /' "$WORK/bench-tl-err.txt"
	echo "replay:      $(run --replay -o "$WORK/bench-tl-replay.png" "$cap")"
	echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
	"$MEMPROF" report --peak --top 1 "$cap" 2>/dev/null | grep -m1 'peak in use' | sed 's/^ */  report: /'
	[ "${KEEP:-0}" = 1 ] || rm -f "$cap"
done
rm -f "$WORK/bench-tl-time.txt" "$WORK/bench-tl-err.txt"
