#!/bin/sh
# bench_procs.sh - `memprof report --process all` on a run of many processes:
# the wall and CPU time and the peak RSS (target: <= 256 MB on the run of a
# parallel build of this project, about 1800 processes; issue 43). Not run
# in CI.
#
#   scripts/bench_procs.sh [BUILD_DIR] [RUN_DIR] [JOBS]
#
# Without RUN_DIR (or when it does not exist) it records one: a fresh
# configure of this project in a temporary directory built with
# `ninja -jJOBS` (default 2) under `memprof record -o RUN_DIR` (minutes).
# Then, for text and --json, best of RUNS runs (default 3): wall, user and
# system seconds, max RSS. On shared cores the wall time shows the load;
# CPU time and RSS are the fairer figures. BASE=OTHER_MEMPROF also runs
# another binary (a build before a change) and says whether the outputs are
# byte-identical.
set -eu

BUILD=${1:-build}
RUN=${2:-${TMPDIR:-/tmp}/bench-procs.memprof}
JOBS=${3:-2}
RUNS=${RUNS:-3}
MEMPROF=$BUILD/src/cli/memprof
SRC=$(cd "$(dirname "$0")/.." && pwd)

[ -x /usr/bin/time ] || { echo "bench_procs: needs /usr/bin/time (GNU time)" >&2; exit 1; }
cmake --build "$BUILD" --target memprof >/dev/null
echo "machine: $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ! -d "$RUN" ]; then
	bd=$(mktemp -d "${TMPDIR:-/tmp}/bench-procs-build.XXXXXX")
	cmake -S "$SRC" -B "$bd" -G Ninja >/dev/null
	"$MEMPROF" record -o "$RUN" -- ninja -C "$bd" -j"$JOBS" >/dev/null 2>&1
	rm -rf "$bd"
fi
echo "run: $RUN, $(ls "$RUN" | grep -c '\.memprof$') captures, $(du -sh "$RUN" | cut -f1)"
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-procs-out.XXXXXX")
k=0
for bin in "$MEMPROF" ${BASE:-}; do
	k=$((k + 1))
	for fmt in "" "--json"; do
		best=""
		i=0
		while [ "$i" -lt "$RUNS" ]; do
			# shellcheck disable=SC2086 # fmt is an option or nothing
			/usr/bin/time -f '%e %U %S %M' -o "$out/time" "$bin" report $fmt --process all "$RUN" \
				>"$out/report$fmt.$k" 2>/dev/null
			read -r wall user sys rss <"$out/time"
			line="wall $wall s, user $user s, sys $sys s, max RSS $((rss / 1024)) MB"
			if [ -z "$best" ] || [ "$(echo "$wall" | tr -d .)" -lt "$(echo "$bestwall" | tr -d .)" ]; then
				best=$line
				bestwall=$wall
			fi
			i=$((i + 1))
		done
		echo "$bin report ${fmt:-(text)} --process all: $best"
	done
done
if [ -n "${BASE:-}" ]; then
	for fmt in "" "--json"; do
		set -- "$out"/report"$fmt".*
		if cmp -s "$1" "$2"; then echo "${fmt:-text}: byte-identical"; else echo "${fmt:-text}: DIFFERENT"; fi
	done
fi
rm -rf "$out"
