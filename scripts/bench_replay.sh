#!/bin/sh
# bench_replay.sh - the full replay of a long capture on one core against
# the parallel replay on every core (issue 43: "on 2 cores, a full-replay
# mode at least 1.8x faster than on one"; not run in CI).
#
#   scripts/bench_replay.sh [BUILD_DIR] [EVENTS] [WORK_DIR]
#
# Writes a capture of EVENTS events (default 41 million) with
# memprof_gen_capture as scripts/bench_seek.sh does (a live set growing
# from 50,000 to 100,000 blocks in 4 regions, a checkpoint every CKPT_MB
# MiB, default 16; OOM=K adds K failed allocations), then for
# `report --peak --full-replay --json` and `report --peak --oom --leaks
# --full-replay --json`, three runs each of:
#   one-core  taskset -c 0 (one CPU allowed: the serial replay, reader and
#             solver threads sharing it)
#   serial    MEMPROF_REPLAY_THREADS=1 on every core (the replay before
#             the parallel one: a reader thread and the solver's)
#   parallel  every core (one segment per core, replay_par.c)
# and prints the median wall and CPU time (user + system) of each, the
# ratios, and whether the three outputs are the same bytes. The machine's
# load is printed before and after: other processes' work is in the wall
# time. With INSTR=1 (valgrind), also the instructions of each thread of
# the serial and of the parallel replay of a capture of INSTR_EVENTS
# (default 4 M; a checkpoint every INSTR_CKPT_MB MiB, default 2, whatever
# their share of the file) events: the work, and the longest thread's share of it --
# the speedup two idle cores would give, whatever the load. KEEP=1 reuses
# the capture; WALL=0 skips the timed runs.
set -eu

BUILD=${1:-build-rel}
EVENTS=${2:-41000000}
WORK=${3:-${TMPDIR:-/tmp}}
CKPT_MB=${CKPT_MB:-16}
MEMPROF=$BUILD/src/cli/memprof
GEN=$BUILD/tests/report/memprof_gen_capture

cmake --build "$BUILD" --target memprof memprof_gen_capture >/dev/null
[ -x /usr/bin/time ] || { echo "bench_replay: needs /usr/bin/time (GNU time)" >&2; exit 1; }
echo "machine: $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"

gen() { # gen FILE EVENTS CKPT_MB
	if [ -s "$1" ] && [ "${KEEP:-0}" = 1 ]; then
		echo "capture: $(du -h "$1" | cut -f1), reused"
		return
	fi
	MEMPROF_CHECKPOINT_MB=$3 MEMPROF_CHECKPOINT_RATIO=${4:-} "$GEN" "$1" --events "$2" --live 100000 --regions 4 --grow 1 \
		--oom "${OOM:-40}"
	echo "capture: $2 events, $(du -h "$1" | cut -f1), a checkpoint every $3 MiB"
}

# median of three numbers
med() { printf '%s\n' "$@" | sort -g | sed -n 2p; }

# run NAME PREFIX... -- ARGS: three runs; NAME_wall, NAME_cpu: medians
run() {
	name=$1
	shift
	walls="" cpus=""
	for i in 1 2 3; do
		# shellcheck disable=SC2068 # the prefix and arguments are words
		MEMPROF_SEEK_SAY=1 /usr/bin/time -f '%e %U %S' -o "$WORK/bench-replay.time" "$@" \
			>"$WORK/bench-replay-$name.out" 2>"$WORK/bench-replay-$name.err"
		read -r wall user sys <"$WORK/bench-replay.time"
		walls="$walls $wall"
		cpus="$cpus $(echo "$user + $sys" | bc)"
	done
	# shellcheck disable=SC2086
	w=$(med $walls) c=$(med $cpus)
	# shellcheck disable=SC2086
	printf '  %-9s wall %6s s (runs:%s)  cpu %6s s (runs:%s)\n' "$name" "$w" "$walls" "$c" "$cpus"
	grep -h 'memprof: .*replay' "$WORK/bench-replay-$name.err" | sed 's/^/            /' | head -1 || true
	eval "${name}_wall=$w ${name}_cpu=$c"
}

cap="$WORK/bench-replay-$EVENTS-$CKPT_MB.memprof"
[ "${WALL:-1}" = 1 ] && gen "$cap" "$EVENTS" "$CKPT_MB"
for args in "--peak --json" "--peak --oom --leaks --json"; do
	[ "${WALL:-1}" = 1 ] || break
	echo
	echo "== report $args --full-replay =="
	# shellcheck disable=SC2086 # the arguments are words
	run one_core taskset -c 0 "$MEMPROF" report $args --full-replay "$cap"
	# shellcheck disable=SC2086
	run serial env MEMPROF_REPLAY_THREADS=1 "$MEMPROF" report $args --full-replay "$cap"
	# shellcheck disable=SC2086
	run parallel "$MEMPROF" report $args --full-replay "$cap"
	same=yes
	cmp -s "$WORK/bench-replay-one_core.out" "$WORK/bench-replay-parallel.out" || same=NO
	cmp -s "$WORK/bench-replay-serial.out" "$WORK/bench-replay-parallel.out" || same=NO
	echo "  one core / parallel: $(echo "scale=2; $one_core_wall / $parallel_wall" | bc)x wall (target >= 1.8);" \
		"serial / parallel: $(echo "scale=2; $serial_wall / $parallel_wall" | bc)x wall;" \
		"cpu parallel / one core: $(echo "scale=2; $parallel_cpu / $one_core_cpu" | bc); same output: $same"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "${KEEP:-0}" = 1 ] || [ "${WALL:-1}" != 1 ] || rm -f "$cap"

if [ "${INSTR:-0}" = 1 ]; then
	command -v valgrind >/dev/null || { echo "bench_replay: INSTR=1 needs valgrind" >&2; exit 1; }
	small="$WORK/bench-replay-instr.memprof"
	echo
	echo "== instructions (valgrind --tool=callgrind), report --peak --oom --leaks --full-replay --json =="
	gen "$small" "${INSTR_EVENTS:-4000000}" "${INSTR_CKPT_MB:-2}" 0
	for mode in serial parallel; do
		threads=1
		[ "$mode" = parallel ] && threads=2
		rm -f "$WORK"/bench-replay.cg.*
		MEMPROF_REPLAY_THREADS=$threads valgrind --tool=callgrind --separate-threads=yes \
			--callgrind-out-file="$WORK/bench-replay.cg.%p" "$MEMPROF" report --peak --oom --leaks --full-replay \
			--json "$small" >/dev/null 2>"$WORK/bench-replay.cg.log"
		# per thread: its instructions (the "summary:" line of each file)
		per=$(cat "$WORK"/bench-replay.cg.* | sed -n 's/^summary: //p' | sort -g | tr '\n' ' ')
		total=$(echo "$per" | tr ' ' '\n' | grep . | paste -sd+ | bc)
		max=$(echo "$per" | tr ' ' '\n' | grep . | sort -g | tail -1)
		echo "  $mode: threads' instructions: $per; total $total, longest thread $max"
		eval "${mode}_total=$total ${mode}_max=$max"
	done
	rm -f "$WORK"/bench-replay.cg.* "$small"
	echo "  work: parallel / serial $(echo "scale=3; $parallel_total / $serial_total" | bc);" \
		"one core's work / the parallel's longest thread: $(echo "scale=2; $serial_total / $parallel_max" | bc)x"
fi
rm -f "$WORK"/bench-replay-*.out "$WORK"/bench-replay-*.err "$WORK/bench-replay.time"
