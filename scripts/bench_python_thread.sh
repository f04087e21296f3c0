#!/usr/bin/env bash
# bench_python_thread.sh [ITERATIONS] [RUNS] [NAME=DIR ...] - what
# `memprof record --stacks` costs a Python program's own thread, in CPU
# time (issue 40; docs/hooks.md, "Where it goes now"). Not run by ctest.
#
# tests/bench/py_loop.py --iterations ITERATIONS (default 20000) plain and
# under each build's `memprof record --stacks` (FLAGS replaces --stacks),
# RUNS rounds (default 21), interleaved, with MEMPROF_HELP=0 so that the
# program's thread runs no flush round. Prints per build the least
# thread_cpu (the loop's thread's CPU seconds, time.thread_time()) over the
# runs and plain's least divided by it: the least is the figure other
# tenants of a shared machine move least, and the thread's time leaves out
# the flusher, which on a machine with a spare core runs beside it. It
# counts what instruction counts do not: the clock readings' and the
# caches' cost (scripts/callgrind_python.sh counts instructions).
# NAME=DIR: a directory holding memprof and libmemprof_preload.so (default:
# this tree's build-bench, built here). PYTHON: the interpreter (default
# pyenv's 3.12.1, else python3 on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
iter=${1:-20000}
runs=${2:-21}
shift $(($# > 2 ? 2 : $#))
py=${PYTHON:-${PYENV_ROOT:-$HOME/.pyenv}/versions/3.12.1/bin/python3}
[ -x "$py" ] || py=$(command -v python3)
builds=("$@")
if [ ${#builds[@]} -eq 0 ]; then
	cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	ninja -C build-bench memprof memprof_preload >/dev/null
	mkdir -p build-bench/bench-bin
	cp build-bench/src/cli/memprof build-bench/allocator_hooks/libmemprof_preload.so build-bench/bench-bin/
	builds=("this=$PWD/build-bench/bench-bin")
fi
prog=$PWD/tests/bench/py_loop.py
tmp=$(mktemp -d /tmp/bench_python_thread-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cpu_of() { grep -o 'thread_cpu=[0-9.]*' | cut -d= -f2; }
echo "# $py, py_loop.py --iterations $iter, $runs runs each, interleaved; $(nproc) CPUs; $(uptime)"
for _ in $(seq "$runs"); do
	echo "plain $("$py" "$prog" --iterations "$iter" | cpu_of)" >>"$tmp/runs.txt"
	for b in "${builds[@]}"; do
		name=${b%%=*} dir=${b#*=}
		# shellcheck disable=SC2086
		v=$(MEMPROF_HELP=0 MEMPROF_PRELOAD=$dir/libmemprof_preload.so "$dir/memprof" record ${FLAGS:---stacks} \
			-o "$tmp/c.memprof" -- "$py" "$prog" --iterations "$iter" 2>/dev/null | cpu_of)
		rm -rf "$tmp/c.memprof" "$tmp/c.memprof.run"
		echo "$name $v" >>"$tmp/runs.txt"
	done
done
least() { awk -v n="$1" '$1==n {print $2}' "$tmp/runs.txt" | sort -g | head -1; }
plain=$(least plain)
printf '%-12s %14s %8s\n' mode least_thread_s ratio
printf '%-12s %14s %8s\n' plain "$plain" 1.000x
for b in "${builds[@]}"; do
	name=${b%%=*}
	v=$(least "$name")
	printf '%-12s %14s %7.3fx\n' "$name" "$v" "$(echo "$plain / $v" | bc -l)"
done
echo "# target (issue 40): --stacks >= 0.85x plain"
