#!/usr/bin/env bash
# bench_python.sh [SECONDS] [RUNS] - what recording a Python program costs
# (issue 40's targets; not run by ctest).
#
# tests/bench/py_loop.py (dicts, json, lists) for SECONDS (default 6) per
# run, RUNS (default 3) runs per mode, interleaved: plain, `memprof record`,
# `memprof record --stacks` (the Python frames and pymalloc's objects, once
# the preload records them). Prints per mode the median iterations per
# second of wall time and its ratio to plain's (target: --stacks >= 0.85x),
# the same per second of the process's CPU time (its every thread: the
# figure a loaded machine moves least), and for the captures the run's
# size on disk and bytes per second of run. Then times
# the whole commands a user waits for on the last --stacks capture: `report
# --peak`, `report --tree`, `report --by-function` (RUNS each, medians; target:
# --tree and --by-function within 1.5x of --peak), with their peak RSS.
#
# BREAKDOWN=1 adds modes that tell the parts' costs apart: record and
# --stacks with MEMPROF_PYMALLOC=0 (pymalloc's objects not recorded), and
# --stacks with MEMPROF_PYTHON=0 (no Python frames in the stacks).
# PYTHON: the interpreter (default: pyenv's 3.12.1, else python3 on PATH);
# MEMPROF_BIN: a directory holding memprof and libmemprof_preload.so
# (default: this tree's Release build, build-bench, built here).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-6}
runs=${2:-3}
py=${PYTHON:-${PYENV_ROOT:-$HOME/.pyenv}/versions/3.12.1/bin/python3}
[ -x "$py" ] || py=$(command -v python3)
if [ -z "${MEMPROF_BIN:-}" ]; then
	dir=${MEMPROF_BUILD:-build-bench}
	cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	ninja -C "$dir" memprof memprof_preload >/dev/null
	MEMPROF_BIN=$PWD/$dir/bench-bin
	mkdir -p "$MEMPROF_BIN"
	cp "$dir/src/cli/memprof" "$dir/allocator_hooks/libmemprof_preload.so" "$MEMPROF_BIN/"
fi
memprof=$MEMPROF_BIN/memprof
export MEMPROF_PRELOAD=$MEMPROF_BIN/libmemprof_preload.so
prog=$PWD/tests/bench/py_loop.py
tmp=$(mktemp -d /tmp/bench_python-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
now() { date +%s.%N; }

echo "# $py ($("$py" -c 'import sys; print(sys.version.split()[0])')), py_loop.py --seconds $secs, $runs runs per mode," \
	"interleaved; $(nproc) CPUs; uptime: $(uptime)"
echo "# memprof: $memprof"
modes="plain record stacks"
[ -z "${BREAKDOWN:-}" ] || modes="$modes record_nopymalloc stacks_nopymalloc stacks_nopython"
for r in $(seq "$runs"); do
	for m in $modes; do
		rm -rf "$tmp/cap.run"
		t0=$(now)
		case $m in
		plain) out=$("$py" "$prog" --seconds "$secs") ;;
		record) out=$("$memprof" record -o "$tmp/cap.run" -- "$py" "$prog" --seconds "$secs" 2>"$tmp/log") ;;
		stacks) out=$("$memprof" record --stacks -o "$tmp/cap.run" -- "$py" "$prog" --seconds "$secs" 2>"$tmp/log") ;;
		record_nopymalloc) out=$(MEMPROF_PYMALLOC=0 "$memprof" record -o "$tmp/cap.run" -- "$py" "$prog" \
			--seconds "$secs" 2>"$tmp/log") ;;
		stacks_nopymalloc) out=$(MEMPROF_PYMALLOC=0 "$memprof" record --stacks -o "$tmp/cap.run" -- "$py" "$prog" \
			--seconds "$secs" 2>"$tmp/log") ;;
		stacks_nopython) out=$(MEMPROF_PYTHON=0 "$memprof" record --stacks -o "$tmp/cap.run" -- "$py" "$prog" \
			--seconds "$secs" 2>"$tmp/log") ;;
		esac
		t1=$(now)
		rate=$(echo "$out" | grep -o ' per_second=[0-9.]*' | cut -d= -f2)
		cpurate=$(echo "$out" | grep -o 'per_cpu_second=[0-9.]*' | cut -d= -f2)
		size=0
		[ "$m" = plain ] || size=$(du -sb "$tmp/cap.run" | cut -f1)
		echo "$m $rate $(echo "$t1 - $t0" | bc -l) $size $cpurate" >>"$tmp/runs.txt"
		if [ "$m" != plain ] && [ "$r" = 1 ]; then
			echo "# $m says: $(grep '^memprof: ' "$tmp/log" | tail -2 | tr '\n' ' ')"
		fi
		[ "$m" != stacks ] || { rm -rf "$tmp/keep.run"; mv "$tmp/cap.run" "$tmp/keep.run"; }
	done
done
plain=$(awk '$1=="plain" {print $2}' "$tmp/runs.txt" | median)
plain_cpu=$(awk '$1=="plain" {print $5}' "$tmp/runs.txt" | median)
printf "%-17s %12s %8s %14s %8s %10s %12s %9s   %s\n" mode iter_per_s ratio iter_per_cpu_s ratio command_s capture_MB MB_per_s \
	"runs (iter/s)"
for m in $modes; do
	rate=$(awk -v m="$m" '$1==m {print $2}' "$tmp/runs.txt" | median)
	cpurate=$(awk -v m="$m" '$1==m {print $5}' "$tmp/runs.txt" | median)
	wall=$(awk -v m="$m" '$1==m {print $3}' "$tmp/runs.txt" | median)
	size=$(awk -v m="$m" '$1==m {print $4}' "$tmp/runs.txt" | median)
	printf "%-17s %12.0f %7.3fx %14.0f %7.3fx %10.2f %12.2f %9.3f   %s\n" "$m" "$rate" "$(echo "$rate / $plain" | bc -l)" \
		"$cpurate" "$(echo "$cpurate / $plain_cpu" | bc -l)" "$wall" \
		"$(echo "$size / 1000000" | bc -l)" "$(echo "$size / 1000000 / $wall" | bc -l)" \
		"$(awk -v m="$m" '$1==m {printf "%.0f ", $2}' "$tmp/runs.txt")"
done

# The reports a user waits for, on the last --stacks capture: whole
# commands, output to /dev/null, wall time, and CPU time (user + sys) and
# peak RSS when GNU time is present.
cap=$tmp/keep.run
echo "# reports on the last --stacks capture ($(du -sb "$cap" | cut -f1) bytes on disk): $runs runs each, medians"
gnutime=$(command -v /usr/bin/time || true)
for opt in --peak --tree --by-function; do
	for r in $(seq "$runs"); do
		t0=$(now)
		if [ -n "$gnutime" ]; then
			"$gnutime" -f '%M %U %S' -o "$tmp/rss" "$memprof" report "$opt" "$cap" >/dev/null
		else
			"$memprof" report "$opt" "$cap" >/dev/null
			echo 0 0 0 >"$tmp/rss"
		fi
		t1=$(now)
		echo "$opt $(echo "$t1 - $t0" | bc -l) $(tail -1 "$tmp/rss")" >>"$tmp/reports.txt"
	done
done
peak=$(awk '$1=="--peak" {print $2}' "$tmp/reports.txt" | median)
printf "%-20s %9s %8s %9s %8s %10s   %s\n" command wall_s ratio cpu_s ratio maxrss_MB "runs (s)"
peak_cpu=$(awk '$1=="--peak" {print $4 + $5}' "$tmp/reports.txt" | median)
for opt in --peak --tree --by-function; do
	w=$(awk -v o="$opt" '$1==o {print $2}' "$tmp/reports.txt" | median)
	rss=$(awk -v o="$opt" '$1==o {print $3}' "$tmp/reports.txt" | median)
	cpu=$(awk -v o="$opt" '$1==o {print $4 + $5}' "$tmp/reports.txt" | median)
	printf "%-20s %9.3f %7.2fx %9.2f %7.2fx %10.1f   %s\n" "report $opt" "$w" "$(echo "$w / $peak" | bc -l)" "$cpu" \
		"$(echo "$cpu / ($peak_cpu + 0.000001)" | bc -l)" \
		"$(echo "$rss / 1024" | bc -l)" "$(awk -v o="$opt" '$1==o {printf "%.3f ", $2}' "$tmp/reports.txt")"
done
echo "# targets: stacks/plain >= 0.85x; report --tree and --by-function <= 1.5x report --peak"
