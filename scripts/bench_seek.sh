#!/bin/sh
# bench_seek.sh - `memprof report --peak` of a long capture from a
# checkpoint (seek) against the full replay, side by side (issue 43; not
# run in CI).
#
#   scripts/bench_seek.sh [BUILD_DIR] [EVENTS] [WORK_DIR]
#
# Writes a capture of EVENTS events (default 100 million) with
# memprof_gen_capture: a live set growing from 50,000 to 100,000 blocks in
# 4 regions, so that the peak comes near the end (an OOM run's shape),
# without tags (a C program's capture; TAGS=1: with an op, region type,
# dtype and shape on every allocation, as a CUDA or PyTorch one), with
# a checkpoint every CKPT_MB MiB of file (default 16; the writer's default
# is 64) or 16 rounds. Then, for `report --peak --json` and
# `report --peak --oom --leaks --json`: wall and CPU time and peak RSS
# (GNU time) of the seek and of --full-replay, the ratio, and whether the
# two outputs are the same bytes; then `plot --chart breakdown` and
# `plot --chart map` (the map at the peak) of the seek and of --replay,
# and whether the two SVGs are the same bytes. KEEP=1 reuses the capture;
# FULL=0 skips the full replay (1 G events: minutes); PLOT=0 skips the
# plots.
# On a shared machine the wall time measures the neighbours too: the load
# is printed, and CPU time (user + system) is the fairer figure.
# Targets (issue 43): 100 M events, report --peak >= 10x faster than the
# full replay; 1 G events, report --peak --oom <= 5 s and <= 256 MB.
set -eu

BUILD=${1:-build}
EVENTS=${2:-100000000}
WORK=${3:-${TMPDIR:-/tmp}}
CKPT_MB=${CKPT_MB:-16}
MEMPROF=$BUILD/src/cli/memprof
GEN=$BUILD/tests/report/memprof_gen_capture

cmake --build "$BUILD" --target memprof memprof_gen_capture >/dev/null
[ -x /usr/bin/time ] || { echo "bench_seek: needs /usr/bin/time (GNU time)" >&2; exit 1; }
echo "machine: $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
cap="$WORK/bench-seek-$EVENTS-$CKPT_MB-${TAGS:-0}.memprof"
untagged="--untagged 1"
[ "${TAGS:-0}" = 1 ] && untagged=""
if [ -s "$cap" ] && [ "${KEEP:-0}" = 1 ]; then
	echo "capture: $(du -h "$cap" | cut -f1), reused"
else
	start=$(date +%s.%N)
	# shellcheck disable=SC2086 # $untagged: words or none
	MEMPROF_CHECKPOINT_MB=$CKPT_MB "$GEN" "$cap" --events "$EVENTS" --live 100000 --regions 4 --grow 1 $untagged
	end=$(date +%s.%N)
	echo "capture: $EVENTS events, $(du -h "$cap" | cut -f1) written in $(echo "$end - $start" | bc) s," \
		"a checkpoint every $CKPT_MB MiB or 16 rounds, tags: ${TAGS:-0}"
fi

# run NAME COMMAND ARGS...: one report or plot, its figures into
# $WORK/bench-seek-NAME.*
run() {
	name=$1
	shift
	MEMPROF_SEEK_SAY=1 /usr/bin/time -f '%e %M %U %S' -o "$WORK/bench-seek-$name.time" "$MEMPROF" "$@" "$cap" \
		>"$WORK/bench-seek-$name.out" 2>"$WORK/bench-seek-$name.err"
	read -r wall rss user sys <"$WORK/bench-seek-$name.time"
	cpu=$(echo "$user + $sys" | bc)
	printf '  %-12s %7s s wall %7s s cpu %8s MB peak RSS\n' "$name" "$wall" "$cpu" "$(echo "scale=1; $rss / 1024" | bc)"
	grep -h 'memprof: ' "$WORK/bench-seek-$name.err" | sed 's/^/    /' || true
	eval "${name}_wall=$wall ${name}_cpu=$cpu"
}

for args in "--peak --json" "--peak --oom --leaks --json"; do
	echo
	echo "== report $args =="
	# shellcheck disable=SC2086 # the arguments are words
	run seek report $args
	[ "${FULL:-1}" = 1 ] || continue
	# shellcheck disable=SC2086
	run full report $args --full-replay
	if cmp -s "$WORK/bench-seek-seek.out" "$WORK/bench-seek-full.out"; then same=yes; else same=NO; fi
	echo "  full / seek: $(echo "scale=1; $full_wall / $seek_wall" | bc)x wall," \
		"$(echo "scale=1; $full_cpu / $seek_cpu" | bc)x cpu; same output: $same"
done
for chart in breakdown map; do
	[ "${PLOT:-1}" = 1 ] || break
	echo
	echo "== plot --chart $chart =="
	run seek plot --chart "$chart" -o "$WORK/bench-seek-seek.svg"
	[ "${FULL:-1}" = 1 ] || continue
	run full plot --chart "$chart" --replay -o "$WORK/bench-seek-full.svg"
	if cmp -s "$WORK/bench-seek-seek.svg" "$WORK/bench-seek-full.svg"; then same=yes; else same=NO; fi
	echo "  full / seek: $(echo "scale=1; $full_wall / $seek_wall" | bc)x wall," \
		"$(echo "scale=1; $full_cpu / $seek_cpu" | bc)x cpu; same SVG: $same"
done
rm -f "$WORK/bench-seek-seek.svg" "$WORK/bench-seek-full.svg"
[ "${KEEP:-0}" = 1 ] || rm -f "$cap"
