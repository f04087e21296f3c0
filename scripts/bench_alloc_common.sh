# shellcheck shell=bash
# bench_alloc_common.sh - what bench_record.sh and bench_parts.sh share
# (sourced from the tree's root, not run): the builds to measure, named
# rec1, rec2, ... ($recs), alloc_bench built into $tmp, and a median.
#
# MEMPROF_BINS="dir1 dir2 ...": directories holding a memprof binary and
# libmemprof_preload.so; default: this tree's build-bench (MEMPROF_BUILD),
# built here.
bench_src=../shared/bench/alloc_bench.c
[ -f "$bench_src" ] || { echo "$(basename "$0"): $bench_src is absent" >&2; exit 1; }
if [ -z "${MEMPROF_BINS:-}" ]; then
	dir=${MEMPROF_BUILD:-build-bench}
	cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	ninja -C "$dir" memprof memprof_preload >/dev/null
	mkdir -p "$dir/bench-bin"
	cp "$dir/src/cli/memprof" "$dir/allocator_hooks/libmemprof_preload.so" "$dir/bench-bin/"
	MEMPROF_BINS=$PWD/$dir/bench-bin
fi
# the builds' names, in MEMPROF_BINS's order, and a name's directory
recs=""
i=0
for _ in $MEMPROF_BINS; do
	i=$((i + 1))
	recs="$recs rec$i"
done
bin_of() { echo "$MEMPROF_BINS" | cut -d' ' -f"${1#rec}"; }
# "# recN: DIR", a line each
print_builds() { for r in $recs; do echo "# $r: $(bin_of "$r")"; done; }
tmp=$(mktemp -d "/tmp/$(basename "$0" .sh)-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cc -O2 -g -pthread -o "$tmp/alloc_bench" "$bench_src"

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
