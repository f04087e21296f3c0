#!/usr/bin/env bash
# bench_record.sh [RUNS] [OPS] - what the whole `memprof record` command
# costs against the plain program (not run by ctest; see docs/hooks.md).
#
# ../shared/bench/alloc_bench.c -t 2 -n OPS (default 20000000), RUNS times
# (default 5) each, interleaved: plain, then `memprof record -o X -- ...`
# (and `heaptrack -o Y ...` when heaptrack is installed; NO_HEAPTRACK=1: not)
# with each memprof given (MEMPROF_BINS="dir1 dir2 ...": directories holding
# a memprof binary and libmemprof_preload.so, to compare two builds in the
# same runs; default: this tree's build-bench, built here). Prints per mode
# the median of the whole command's wall time (fork to exit: the program,
# the capture's close, and the summary `memprof record` prints) and its ratio
# to plain's median, the median of each run's ratio to the plain run of the
# same round (paired), and the median of the program's own wall time (alloc_bench's
# wall_s=: what the traced program pays while it runs) and its ratio. The
# machine's load is printed before and after: it is shared, and every CPU
# second of someone else's build turns into wall time here. Just before
# and just after every run, tests/bench/vcpu_pingpong.c measures how far
# apart the two CPUs are at that moment; the last lines give the medians and ratios of the
# rounds where they shared a cache ("near") and of the others ("far"), and
# the median ratio over the rounds where plain and the mode ran with the
# same placement: alloc_bench's plain time moves with that more than with
# anything else.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
ops=${2:-20000000}
# shellcheck source=scripts/bench_alloc_common.sh
. scripts/bench_alloc_common.sh

# how far apart the two CPUs are at a given moment (tests/bench/vcpu_pingpong.c)
cc -O2 -pthread -o "$tmp/vcpu_pingpong" tests/bench/vcpu_pingpong.c

field() { grep -o "$1=[0-9.e+]*" | head -1 | cut -d= -f2; }
now() { date +%s.%N; }

echo "# alloc_bench -t 2 -n $ops, $runs runs per mode, interleaved ($(nproc) CPUs); uptime: $(uptime)"
modes="plain $recs"
print_builds
# heaptrack's whole command too, when it is installed (apt-get install heaptrack)
if command -v heaptrack >/dev/null && [ -z "${NO_HEAPTRACK:-}" ]; then
	modes="$modes heaptrack"
	echo "# heaptrack: $(command -v heaptrack)"
fi
for r in $(seq "$runs"); do
	for m in $modes; do
		# where the host has the two vCPUs just before the run (vcpu_pingpong.c)
		p0=$("$tmp/vcpu_pingpong")
		rm -rf "$tmp"/cap.memprof "$tmp"/ht.*  # (a run is a directory)
		t0=$(now)
		if [ "$m" = plain ]; then
			out=$("$tmp/alloc_bench" -t 2 -n "$ops" 2>&1)
		elif [ "$m" = heaptrack ]; then
			out=$(heaptrack -o "$tmp/ht" "$tmp/alloc_bench" -t 2 -n "$ops" 2>&1)
		else
			b=$(bin_of "$m")
			out=$(MEMPROF_PRELOAD="$b/libmemprof_preload.so" "$b/memprof" record -o "$tmp/cap.memprof" -- \
				"$tmp/alloc_bench" -t 2 -n "$ops" 2>&1)
		fi
		t1=$(now)
		echo "$m $(echo "$t1 - $t0" | bc -l) $(echo "$out" | field wall_s) $r" >> "$tmp/runs.txt"
		echo "$m $r $p0 $("$tmp/vcpu_pingpong")" >> "$tmp/place.txt"
		case $m in rec*) [ "$r" != 1 ] || echo "# $m says: $(echo "$out" | grep '^memprof: ' | tr '\n' ' ')" ;; esac
	done
done
echo "# uptime after the runs: $(uptime)"
plain_cmd=$(awk '$1=="plain" {print $2}' "$tmp/runs.txt" | median)
plain_in=$(awk '$1=="plain" {print $3}' "$tmp/runs.txt" | median)
# paired: the median of each run's command time over plain's in the same
# round of runs (plain's own time moves from run to run on a shared VM:
# the ratio of medians follows it; this shows how far)
printf "%-6s %12s %9s %9s %12s %9s   %s\n" mode command_s ratio paired program_s ratio "command runs (s)"
for m in $modes; do
	c=$(awk -v m="$m" '$1==m {print $2}' "$tmp/runs.txt" | median)
	p=$(awk -v m="$m" '$1==m {print $3}' "$tmp/runs.txt" | median)
	pr=$(awk -v m="$m" '$1=="plain" {pl[$4]=$2} $1==m {print $2 / pl[$4]}' "$tmp/runs.txt" | median)
	printf "%-6s %12.3f %8.2fx %8.2fx %12.3f %8.2fx   %s\n" "$m" "$c" "$(echo "$c / $plain_cmd" | bc -l)" "$pr" "$p" \
		"$(echo "$p / $plain_in" | bc -l)" "$(awk -v m="$m" '$1==m {printf "%.2f ", $2}' "$tmp/runs.txt")"
done
# The same by placement: the runs whose probes, just before and just
# after, both found the two CPUs sharing a cache (a line passes in under
# 80 ns: "near") or both found them apart ("far"); the host moves them
# from one second to the next, and runs between the two are left out.
# alloc_bench runs faster near (its one atomic is cheap there), so every
# ratio is higher there; a set that mixes both gets one in between.
awk '{printf "%s %s %s %s\n", $1, $2, ($3 == "-" || $4 == "-") ? "-" : ($3 < 80 && $4 < 80) ? "near" : ($3 >= 80 && $4 >= 80) ? "far" : "-", $3 "/" $4}' \
	"$tmp/place.txt" > "$tmp/class.txt"
echo "# the CPUs' distance around each run (ns before/after): $(awk '{printf "%s %s; ", $1, $4}' "$tmp/class.txt")"
# times PLACE MODE: the mode's command times in the runs of that placement
times() {
	awk -v p="$1" -v m="$2" 'NR == FNR {if ($3 == p) in_set[$1 " " $2] = 1; next}
		$1 == m && (($1 " " $4) in in_set) {print $2}' "$tmp/class.txt" "$tmp/runs.txt"
}
# paired PLACE MODE: the mode's time over plain's in each round where both
# runs had that placement (like with like: neither run's placement moves
# the ratio)
paired() {
	awk -v p="$1" -v m="$2" 'NR == FNR {cls[$1 " " $2] = $3; next}
		cls["plain " $4] == p && cls[m " " $4] == p {if ($1 == "plain") pl[$4] = $2; else if ($1 == m) t[$4] = $2}
		END {for (r in t) if (r in pl) print t[r] / pl[r]}' "$tmp/class.txt" "$tmp/runs.txt"
}
for place in near far; do
	pt=$(times $place plain)
	[ -n "$pt" ] || continue
	pc=$(echo "$pt" | median)
	line=""
	for m in $modes; do
		mt=$(times $place "$m")
		[ -n "$mt" ] || continue
		c=$(echo "$mt" | median)
		line="$line $m $(printf "%.3f s %.2fx" "$c" "$(echo "$c / $pc" | bc -l)") ($(echo "$mt" | wc -l) runs"
		mp=$(paired $place "$m")
		[ "$m" = plain ] || [ -z "$mp" ] ||
			line="$line; paired $(echo "$mp" | median | xargs printf "%.2fx") in $(echo "$mp" | wc -l) rounds"
		line="$line);"
	done
	echo "# $place:$line"
done
