#!/bin/sh
# bench_xplane.sh - wall time and peak RSS of `memprof report --peak` on a
# generated TF-style capture: 10 million memory events on 8 allocators,
# about 1.1 GB of xplane.pb (targets: <= 20 s, <= 300 MB RSS; TensorBoard
# needs 20-30 GB of RAM to open a 1 GB capture). Also times --compat=xprof
# (three passes) and a gzip-compressed copy when asked. Not run in CI.
# Prints wall and CPU (user + sys) time: on a shared machine the CPU time is
# the figure to compare with the target.
#
# usage: scripts/bench_xplane.sh [BUILD_DIR] [EVENTS]
#   BUILD_DIR default: build; EVENTS default: 10000000
#   BENCH_XPLANE_FILE=path   reuse/keep the generated file there
#   BENCH_XPLANE_GZIP=1      also time the gzip-compressed file
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
events=${2:-10000000}
memprof=$build/src/cli/memprof
gen=$build/src/sources/xplane/memprof_xplane_gen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -x "$memprof" ] || { echo "bench_xplane: build first: $memprof missing" >&2; exit 2; }
[ -x "$gen" ] || { echo "bench_xplane: $gen missing" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_xplane: GNU time (/usr/bin/time) is needed" >&2; exit 2; }

file=${BENCH_XPLANE_FILE:-$tmp/bench.xplane.pb}
if [ ! -s "$file" ]; then
	echo "generating $file ($events events, 8 allocators) ..."
	"$gen" -o "$file" --events "$events" --allocators 8 --live 2000
fi
size=$(wc -c <"$file")

run() { # label, args...
	label=$1
	shift
	/usr/bin/time -f "%e %M %U %S" -o "$tmp/t" "$memprof" report "$@" >"$tmp/out" 2>"$tmp/err" || {
		echo "bench_xplane: $label failed:" >&2
		cat "$tmp/err" >&2
		exit 1
	}
	read -r wall rss usr sys <"$tmp/t"
	printf '%-44s %7s s wall %7s s cpu %8d KiB peak RSS\n' "$label" "$wall" \
		"$(awk "BEGIN{print $usr + $sys}")" "$rss"
}

echo "memprof report on $(basename "$file"): $size bytes, $events memory events"
run "report --peak" --peak "$file"
head -n 12 "$tmp/out" | sed 's/^/    | /'
run "report --peak --json" --peak --json "$file"
run "report --compat=xprof" --compat=xprof "$file"
if [ "${BENCH_XPLANE_GZIP:-0}" = 1 ]; then
	gzip -1 -c "$file" >"$tmp/bench.xplane.pb.gz"
	run "report --peak (gzip, decompressed to TMPDIR)" --peak "$tmp/bench.xplane.pb.gz"
fi
