#!/bin/sh
# bench_tree.sh - what `memprof report --tree` costs next to `--by-function`
# and `--peak` on a synthetic capture with call stacks (not run in CI).
#
#   scripts/bench_tree.sh [BUILD_DIR] [EVENTS] [STACKS] [WORK_DIR]
#
# Writes a capture of EVENTS events (default 5 million; ~10 thousand live
# blocks) whose allocations carry STACKS distinct stacks (default 1000) of 24
# frames sharing their outer frames (memprof_gen_capture --stacks), then
# prints, best of RUNS runs (default 3), the wall and CPU time and the peak
# RSS of: `report --timeline` (the solver's pass alone: no stack is read),
# `--peak` (which adds the by-function table: the capture has stacks),
# `--by-function`, and `--tree` of each kind. On 2 shared cores the load
# shows in the wall time: it is printed first, and CPU time is the fairer
# figure. KEEP=1 keeps the capture in WORK_DIR and reuses it.
set -eu

BUILD=${1:-build}
EVENTS=${2:-5000000}
STACKS=${3:-1000}
WORK=${4:-${TMPDIR:-/tmp}}
RUNS=${RUNS:-3}
MEMPROF=$BUILD/src/cli/memprof
GEN=$BUILD/tests/report/memprof_gen_capture

cmake --build "$BUILD" --target memprof memprof_gen_capture >/dev/null
[ -x /usr/bin/time ] || { echo "bench_tree: needs /usr/bin/time (GNU time)" >&2; exit 1; }
cap="$WORK/bench-tree-$EVENTS-$STACKS.memprof"
echo "machine: $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ! -s "$cap" ] || [ "${KEEP:-0}" != 1 ]; then
	"$GEN" "$cap" --events "$EVENTS" --live 10000 --regions 4 --stacks "$STACKS"
fi
echo "capture: $EVENTS events, $STACKS stacks of 24 frames, $(du -h "$cap" | cut -f1)"
for args in "--timeline" "--peak" "--by-function" "--tree" "--tree=leaks" "--tree=allocated"; do
	best=""
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		# shellcheck disable=SC2086 # args is a list of options
		/usr/bin/time -f '%e %U %S %M' -o "$WORK/bench-tree-time.txt" "$MEMPROF" report $args "$cap" >/dev/null
		read -r wall user sys rss <"$WORK/bench-tree-time.txt"
		if [ -z "$best" ] || [ "$(echo "$wall < $best" | bc)" = 1 ]; then
			best=$wall
			cpu=$(echo "$user + $sys" | bc)
			mem=$rss
		fi
		i=$((i + 1))
	done
	printf '%-24s %6s s wall  %6s s cpu  %6s MB peak RSS\n' "report $args" "$best" "$cpu" "$(echo "scale=1; $mem / 1024" | bc)"
done
rm -f "$WORK/bench-tree-time.txt"
[ "${KEEP:-0}" = 1 ] || rm -f "$cap"
