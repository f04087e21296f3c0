#!/usr/bin/env bash
# bench_pystack.sh [RUNS] [PYTHON] - what Python frames in --stacks cost
# (not run by ctest; see docs/hooks.md, "Cost", "Python frames").
#
# For each build in MEMPROF_BINS (as bench_record.sh; default: this tree's
# build-bench), RUNS times (default 5) each, interleaved, the program's own
# wall time (wall_s=) of:
#   scripts/bench_pystack.py under PYTHON (default pyenv's 3.12.1):
#     plain, `memprof record`, `memprof record --stacks` with
#     MEMPROF_PYTHON=0 (native stacks) and with Python frames;
#   alloc_bench -t 2 -n 4000000 (no Python: must pay nothing more):
#     `memprof record --stacks`.
# Prints the median per mode.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
py=${2:-/root/.pyenv/versions/3.12.1/bin/python3.12}
# shellcheck source=scripts/bench_alloc_common.sh
. scripts/bench_alloc_common.sh

field() { grep -o "$1=[0-9.e+]*" | head -1 | cut -d= -f2; }
run() { # OUTFILE CMD...
	local out=$1
	shift
	"$@" 2>/dev/null | field wall_s >>"$out"
}
echo "# $runs runs per mode, $(nproc) CPUs; uptime: $(uptime)"
print_builds
for i in $(seq "$runs"); do
	run "$tmp/py.plain" "$py" scripts/bench_pystack.py
	for r in $recs; do
		b=$(bin_of "$r")
		export MEMPROF_PRELOAD=$b/libmemprof_preload.so
		rm -rf "$tmp/run"
		run "$tmp/py.$r.record" "$b/memprof" record -o "$tmp/run" -- "$py" scripts/bench_pystack.py
		rm -rf "$tmp/run"
		MEMPROF_PYTHON=0 run "$tmp/py.$r.native" "$b/memprof" record --stacks -o "$tmp/run" -- "$py" scripts/bench_pystack.py
		rm -rf "$tmp/run"
		run "$tmp/py.$r.python" "$b/memprof" record --stacks -o "$tmp/run" -- "$py" scripts/bench_pystack.py
		rm -rf "$tmp/run"
		run "$tmp/ab.$r.stacks" "$b/memprof" record --stacks -o "$tmp/run" -- "$tmp/alloc_bench" -t 2 -n 4000000
		rm -rf "$tmp/run"
	done
done
printf '%-28s %s\n' mode "median wall_s"
for f in "$tmp"/py.* "$tmp"/ab.*; do
	printf '%-28s %s\n' "$(basename "$f")" "$(median <"$f")"
done
