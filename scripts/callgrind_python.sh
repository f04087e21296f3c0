#!/usr/bin/env bash
# callgrind_python.sh [ITER_A] [ITER_B] - instructions per pymalloc object
# that `memprof record --stacks` costs a Python program's own thread
# (issue 40; docs/hooks.md, "Where it goes now"). Not run by ctest.
#
# Runs tests/bench/py_loop.py --iterations ITER_A and ITER_B (defaults 3000,
# 6000) under valgrind --tool=callgrind --separate-threads=yes, plain and
# with the preload and MEMPROF_STACKS=1, PYTHONHASHSEED=0, and prints the
# difference B - A per thread (the steady state, start-up cancelled out):
# the program's main thread and the rest (the writer's flusher), and the
# program's thread per object (py_loop makes 137 pymalloc objects an
# iteration on CPython 3.12). A loaded machine does not move these figures.
# PYTHON: the interpreter (default pyenv's 3.12.1); PRELOAD: the library
# (default build-rwd's, a RelWithDebInfo build); OBJS: objects an iteration.
set -euo pipefail
cd "$(dirname "$0")/.."
a=${1:-3000}
b=${2:-6000}
py=${PYTHON:-${PYENV_ROOT:-$HOME/.pyenv}/versions/3.12.1/bin/python3}
pre=${PRELOAD:-$PWD/build-rwd/allocator_hooks/libmemprof_preload.so}
objs=${OBJS:-137}
tmp=$(mktemp -d /tmp/callgrind_python-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prog=$PWD/tests/bench/py_loop.py

# run MODE N: prints "main REST" instructions
run() {
	local d=$tmp/$1-$2
	mkdir -p "$d"
	if [ "$1" = plain ]; then
		(cd "$d" && PYTHONHASHSEED=0 valgrind --tool=callgrind --separate-threads=yes -q \
			"$py" "$prog" --iterations "$2" >/dev/null 2>&1)
	else
		(cd "$d" && PYTHONHASHSEED=0 MEMPROF_HELP=0 MEMPROF_STACKS=1 MEMPROF_OUTPUT=$d/cap.memprof LD_PRELOAD=$pre \
			valgrind --tool=callgrind --separate-threads=yes -q "$py" "$prog" --iterations "$2" >/dev/null 2>&1)
	fi
	local main=0 rest=0 f v
	for f in "$d"/callgrind.out.*; do
		v=$(grep -m1 '^totals:' "$f" | awk '{print $2}' || true)
		[ -n "$v" ] || continue
		case $f in
		*-01) main=$v ;;
		*) rest=$((rest + v)) ;;
		esac
	done
	echo "$main $rest"
}
for m in ${MODES:-plain stacks}; do
	read -r ma ra < <(run "$m" "$a")
	read -r mb rb < <(run "$m" "$b")
	dm=$((mb - ma)) dr=$((rb - ra))
	echo "$m: per $((b - a)) iterations: main thread $dm, other threads $dr, main per object $(echo "$dm / (($b - $a) * $objs)" | bc -l | cut -c1-7)"
done
