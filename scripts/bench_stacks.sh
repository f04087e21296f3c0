#!/usr/bin/env bash
# bench_stacks.sh [RUNS] [OPS] - what `memprof record --stacks` costs: the
# whole command against the plain program, `memprof record` and heaptrack
# (not run by ctest; see docs/hooks.md, "Cost"; issue 40's targets: --stacks
# at most 1.8x plain, at least 3x faster than heaptrack).
#
# ../shared/bench/alloc_bench.c -t 2 -n OPS (default 20000000), RUNS times
# (default 5) each, interleaved: plain, `memprof record -o X -- ...`,
# `memprof record --stacks -o X -- ...` for each build given
# (MEMPROF_BINS="dir1 dir2 ...", as bench_record.sh; default: this tree's
# build-bench, a Release build made here), and `heaptrack -o Y ...` when it
# is installed (NO_HEAPTRACK=1: not). MEMPROF_STACKS_MODE=fp runs --stacks
# with frame pointers instead of libunwind. Prints per mode the median wall
# time of the whole command (fork to exit: the program, the capture's
# close, the summary `memprof record` prints, heaptrack's interpreter), its
# ratio to plain's median, the median of each run's ratio to the plain run
# of its round (paired: plain moves from run to run on a shared machine),
# the median CPU seconds (user + sys, children included) and the capture's
# size in bytes (the run directory; heaptrack's file).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
ops=${2:-20000000}
# shellcheck source=scripts/bench_alloc_common.sh
. scripts/bench_alloc_common.sh

now() { date +%s.%N; }

modes="plain"
for r in $recs; do modes="$modes $r ${r}s"; done
if command -v heaptrack >/dev/null && [ -z "${NO_HEAPTRACK:-}" ]; then
	modes="$modes heaptrack"
fi
echo "# alloc_bench -t 2 -n $ops, $runs runs per mode, interleaved ($(nproc) CPUs); uptime: $(uptime)"
print_builds
echo "# recN: memprof record; recNs: memprof record --stacks${MEMPROF_STACKS_MODE:+ (MEMPROF_STACKS=$MEMPROF_STACKS_MODE)}"
for r in $(seq "$runs"); do
	for m in $modes; do
		rm -rf "$tmp"/cap.memprof "$tmp"/ht.*
		cmd=()
		case $m in
		plain) ;;
		heaptrack) cmd=(heaptrack -o "$tmp/ht") ;;
		rec*s)
			b=$(bin_of "${m%s}")
			cmd=(env MEMPROF_PRELOAD="$b/libmemprof_preload.so" ${MEMPROF_STACKS_MODE:+MEMPROF_STACKS=$MEMPROF_STACKS_MODE}
				"$b/memprof" record --stacks -o "$tmp/cap.memprof" --) ;;
		rec*)
			b=$(bin_of "$m")
			cmd=(env MEMPROF_PRELOAD="$b/libmemprof_preload.so" "$b/memprof" record -o "$tmp/cap.memprof" --) ;;
		esac
		t0=$(now)
		out=$( { /usr/bin/time -f "cpu=%U+%S" "${cmd[@]}" "$tmp/alloc_bench" -t 2 -n "$ops"; } 2>&1 )
		t1=$(now)
		cpu=$(echo "$out" | grep -o 'cpu=[0-9.+]*' | tail -1 | cut -d= -f2 | bc)
		size=0
		if [ -e "$tmp/cap.memprof" ]; then
			size=$(du -sb "$tmp/cap.memprof" | cut -f1)
		elif compgen -G "$tmp/ht.*" >/dev/null; then
			size=$(du -cb "$tmp"/ht.* | tail -1 | cut -f1)
		fi
		echo "$m $(echo "$t1 - $t0" | bc -l) $cpu $size $r" >> "$tmp/runs.txt"
		case $m in rec*s) [ "$r" != 1 ] || echo "# $m says: $(echo "$out" | grep '^memprof: .*events' | tr '\n' ' ')" ;; esac
	done
done
echo "# uptime after the runs: $(uptime)"
plain=$(awk '$1=="plain" {print $2}' "$tmp/runs.txt" | median)
ht=""
[[ " $modes " == *" heaptrack "* ]] && ht=$(awk '$1=="heaptrack" {print $2}' "$tmp/runs.txt" | median)
printf "%-9s %9s %8s %8s %8s %13s %10s   %s\n" mode wall_s ratio paired cpu_s bytes ht/this "wall runs (s)"
for m in $modes; do
	w=$(awk -v m="$m" '$1==m {print $2}' "$tmp/runs.txt" | median)
	c=$(awk -v m="$m" '$1==m {print $3}' "$tmp/runs.txt" | median)
	s=$(awk -v m="$m" '$1==m {print $4}' "$tmp/runs.txt" | median)
	pr=$(awk -v m="$m" '$1=="plain" {pl[$5]=$2} $1==m {print $2 / pl[$5]}' "$tmp/runs.txt" | median)
	printf "%-9s %9.3f %7.2fx %7.2fx %8.2f %13.0f %10s   %s\n" "$m" "$w" "$(echo "$w / $plain" | bc -l)" "$pr" "$c" "$s" \
		"$([ -n "$ht" ] && printf "%.2fx" "$(echo "$ht / $w" | bc -l)" || echo -)" \
		"$(awk -v m="$m" '$1==m {printf "%.2f ", $2}' "$tmp/runs.txt")"
done
