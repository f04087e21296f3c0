#!/usr/bin/env bash
# bench_hooks.sh [RUNS] [OPS] - what `memprof record` costs, and whether its
# peak agrees with heaptrack's (not run by ctest; see docs/hooks.md).
#
# 1. Overhead: ../shared/bench/alloc_bench.c (-t 2 -n OPS, default 20000000)
#    plain, under `memprof record`, under `memprof record --stacks` (mode
#    "stacks": libunwind; "stacks_fp": frame pointers) and under heaptrack
#    (when installed), interleaved, RUNS times each (default 5); MODES="plain
#    stacks ..." runs a subset (or adds "delayed" and "disabled": loaded but
#    not recording), PEAKS=0 skips part 2. Prints the median of the
#    benchmark's own wall time (wall_s=), the slowdown against plain (the
#    ratio of the medians, and the median of each round's ratio), the
#    capture size in bytes per event, and the CPU seconds (user+sys) of the
#    traced program and the tool's helpers (heaptrack_interpret and zstd for
#    heaptrack; the flusher thread, inside the program, for memprof). The
#    machine should be otherwise idle: on a loaded machine every extra CPU
#    second of a tool's helper threads turns into wall time.
# 2. Peak agreement with heaptrack (whose "peak heap memory consumption"
#    counts requested bytes) on alloc_bench -t 1 and on a CPython workload
#    with PYTHONMALLOC=malloc. heaptrack's process differs from ours in what
#    the profilers themselves allocate: heaptrack's C++ runtime allocates
#    libstdc++'s emergency exception pool in _dl_init, and each tool's TLS
#    modules size the DTV that glibc callocs for every new thread. Both are
#    printed and taken out; the rest must be equal to the byte.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
ops=${2:-20000000}
dir=${MEMPROF_BUILD:-build-bench}
bench_src=../shared/bench/alloc_bench.c
[ -f "$bench_src" ] || { echo "bench_hooks: $bench_src is absent" >&2; exit 1; }

cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$dir" memprof memprof_preload >/dev/null
memprof=$PWD/$dir/src/cli/memprof
preload=$PWD/$dir/allocator_hooks/libmemprof_preload.so
tmp=$(mktemp -d /tmp/bench-hooks-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -g -fno-omit-frame-pointer -pthread -o "$tmp/alloc_bench" "$bench_src"
have_ht=0
command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null && have_ht=1

field() { grep -o "$1=[0-9.e+]*" | head -1 | cut -d= -f2; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# --- 1. overhead -------------------------------------------------------------
echo "# alloc_bench -t 2 -n $ops, $runs runs per mode, interleaved ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
modes="plain memprof stacks stacks_fp"
[ $have_ht = 1 ] && modes="$modes heaptrack"
modes=${MODES:-$modes}
for r in $(seq "$runs"); do
	for m in $modes; do
		rm -f "$tmp"/cap*.memprof "$tmp"/ht.*
		case $m in
		plain) out=$( { /usr/bin/time -f "cpu=%U+%S" "$tmp/alloc_bench" -t 2 -n "$ops"; } 2>&1 ) ;;
		# what `memprof record` sets up, without its summary (which reads the
		# capture back afterwards and is not a cost of capturing)
		memprof) out=$( { /usr/bin/time -f "cpu=%U+%S" env LD_PRELOAD="$preload" \
				MEMPROF_OUTPUT="$tmp/cap.memprof" "$tmp/alloc_bench" -t 2 -n "$ops"; } 2>&1 ) ;;
		# --stacks: MEMPROF_STACKS=1 (libunwind) or fp (frame pointers)
		stacks|stacks_fp) out=$( { /usr/bin/time -f "cpu=%U+%S" env LD_PRELOAD="$preload" \
				MEMPROF_STACKS=$([ $m = stacks ] && echo 1 || echo fp) \
				MEMPROF_OUTPUT="$tmp/cap.memprof" "$tmp/alloc_bench" -t 2 -n "$ops"; } 2>&1 ) ;;
		# loaded but not recording: the window not open yet (--delay), or
		# MEMPROF_ENABLE=0 (not in the default set: MODES="plain delayed")
		delayed|disabled) out=$( { /usr/bin/time -f "cpu=%U+%S" env LD_PRELOAD="$preload" \
				$([ $m = delayed ] && echo MEMPROF_DELAY_MS=3600000 || echo MEMPROF_ENABLE=0) \
				MEMPROF_OUTPUT="$tmp/cap.memprof" "$tmp/alloc_bench" -t 2 -n "$ops"; } 2>&1 ) ;;
		heaptrack) out=$( { /usr/bin/time -f "cpu=%U+%S" heaptrack -o "$tmp/ht" \
				"$tmp/alloc_bench" -t 2 -n "$ops"; } 2>&1 ) ;;
		esac
		wall=$(echo "$out" | field wall_s)
		events=$(echo "$out" | field events)
		cpu=$(echo "$out" | grep -o 'cpu=[0-9.+]*' | tail -1 | cut -d= -f2 | bc)
		size=0
		[ -f "$tmp/cap.memprof" ] && size=$(stat -c %s "$tmp/cap.memprof")
		[ $m = heaptrack ] && size=$(stat -c %s "$tmp"/ht.*)
		echo "$m $wall $cpu $size $events $r" >> "$tmp/runs.txt"
	done
done
plain=$(awk '$1=="plain" {print $2}' "$tmp/runs.txt" | median)
plain_cpu=$(awk '$1=="plain" {print $3}' "$tmp/runs.txt" | median)
echo "# load after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
# cpu_x: CPU seconds against plain's -- on a loaded machine the wall-clock
# ratio favours tools with more helper processes (each gets its own share).
# paired: each run against the plain run of its own round (next to it in
# time), so that the VM's drift from minute to minute, which moves both
# alike, drops out; its median and its range over the rounds.
pair() { awk -v m=$1 '$1=="plain" {p[$6]=$2} $1==m {w[$6]=$2} END {for (r in w) print w[r] / p[r]}' "$tmp/runs.txt"; }
printf "%-10s %9s %9s %9s %7s %11s   %s\n" mode wall_s slowdown cpu_s cpu_x bytes/event "paired slowdown: median (min-max)"
for m in $modes; do
	w=$(awk -v m=$m '$1==m {print $2}' "$tmp/runs.txt" | median)
	c=$(awk -v m=$m '$1==m {print $3}' "$tmp/runs.txt" | median)
	b=$(awk -v m=$m '$1==m && $5 > 0 {print $4 / $5}' "$tmp/runs.txt" | median)
	printf "%-10s %9.3f %8.2fx %9.2f %6.2fx %11s   %.2fx (%.2f-%.2f)\n" $m "$w" "$(echo "$w / $plain" | bc -l)" "$c" \
		"$(echo "$c / $plain_cpu" | bc -l)" \
		"$([ $m = plain ] || [ -z "$b" ] && echo - || printf %.2f "$b")" \
		"$(pair $m | median)" "$(pair $m | sort -g | head -1)" "$(pair $m | sort -g | tail -1)"
done

# --- 2. peak agreement -----------------------------------------------------------
[ "${PEAKS:-1}" = 0 ] && exit 0
[ $have_ht = 1 ] || { echo "# heaptrack is not installed: no peak agreement check"; exit 0; }

# heaptrack's peak, and what heaptrack itself put in it, from its peak flame graph.
ht_peak() {
	heaptrack_print -f "$1" --flamegraph-cost-type peak -F "$tmp/peak.txt" >/dev/null 2>&1
	awk '{s += $NF} /_dl_init/ {d += $NF} /allocate_dtv/ {t += $NF}
	     END {printf "%d %d %d\n", s, d, t}' "$tmp/peak.txt"
}
# memprof's peak of requested bytes, from `memprof record`'s summary line.
mp_peak() { grep -o 'peak [0-9]* B' | cut -d' ' -f2; }
# The DTV callocs in a capture: allocations made by thread 0 inside
# pthread_create, i.e. right before each new thread's first event.
mp_dtv() {
	"$memprof" dump "$1" | awk '
		/ alloc memory=host addr=/ { t = $3; sub("thread=", "", t);
			if (!(t in seen)) { seen[t] = 1; if (t != 0) dtv += last0 }
			if (t == 0) { r = $0; sub(/.*requested=/, "", r); sub(/ .*/, "", r); last0 = r } }
		END { print dtv + 0 }'
}

echo
echo "# peak agreement with heaptrack (requested bytes)"
rm -f "$tmp"/ht.* "$tmp"/cap*.memprof
heaptrack -o "$tmp/ht" "$tmp/alloc_bench" -t 1 -n 1000000 >/dev/null 2>&1
read -r hs hd ht_dtv < <(ht_peak "$tmp"/ht.*)
mp=$("$memprof" record -o "$tmp/cap.memprof" -- "$tmp/alloc_bench" -t 1 -n 1000000 2>&1 >/dev/null | mp_peak)
mp_dtv_b=$(mp_dtv "$tmp/cap.memprof")
net=$((hs - hd - ht_dtv + mp_dtv_b))
echo "alloc_bench -t 1 -n 1000000: heaptrack $hs B = $net B of the program + $hd B (_dl_init, heaptrack's"
echo "  libstdc++) + $((ht_dtv - mp_dtv_b)) B (DTV $ht_dtv B vs $mp_dtv_b B); memprof $mp B:" \
	"$([ "$net" = "$mp" ] && echo EQUAL || echo "DIFFERENT by $((mp - net)) B")"

py=/usr/bin/python3.11
[ -x $py ] || py=$(command -v python3)
cat > "$tmp/pywork.py" <<'EOF'
# A deterministic CPython workload (PYTHONHASHSEED=0, PYTHONMALLOC=malloc).
def work():
    d = {i: str(i) * 3 for i in range(100000)}
    l = [bytes(100) for _ in range(20000)]
    t = [(i, i * 2.0) for i in range(50000)]
    s = sum(len(v) for v in d.values()) + len(l) + len(t)
    del d
    x = [list(range(50)) for _ in range(2000)]
    return s + len(x)
for _ in range(3):
    work()
EOF
# CPython's allocation order depends on object addresses (id-hashed sets
# during startup), which each tool's presence shifts, so two separate runs
# differ by a few hundred bytes whatever the tools do. Both tools therefore
# record the *same* run: memprof's preload first, heaptrack's behind it
# (memprof's hooks call on into heaptrack's, which sees exactly the calls the
# program made). heaptrack then also sees what memprof's own start-up
# allocates through the real malloc -- the TLS block of its flusher thread,
# under mp_writer_open -- which is not the program's and is taken out.
first() { for f in "$@"; do [ -e "$f" ] && { echo "$f"; return; }; done; true; }
ht_lib=$(first /usr/lib/heaptrack/libheaptrack_preload.so /usr/lib/*/heaptrack/libheaptrack_preload.so)
ht_interpret=$(first /usr/lib/heaptrack/libexec/heaptrack_interpret /usr/lib/*/heaptrack/libexec/heaptrack_interpret)
if [ -z "$ht_lib" ] || [ -z "$ht_interpret" ]; then
	echo "# heaptrack's preload library or interpreter not found: no CPython check"
	exit 0
fi
rm -f "$tmp"/ht.* "$tmp"/cap*.memprof "$tmp"/heaptrack.*
( cd "$tmp" && PYTHONHASHSEED=0 PYTHONMALLOC=malloc heaptrack -o "$tmp/htsh" sh -c \
	"LD_PRELOAD=$preload:$ht_lib MEMPROF_OUTPUT=$tmp/cap.memprof exec $py $tmp/pywork.py" >/dev/null 2>&1 )
raw=$(first "$tmp"/heaptrack.*)
"$ht_interpret" < "$raw" 2>/dev/null | gzip > "$tmp/ht.py.gz"
heaptrack_print -f "$tmp/ht.py.gz" --flamegraph-cost-type peak -F "$tmp/peak.txt" >/dev/null 2>&1
read -r hs hmp < <(awk '{s += $NF} /mp_writer_open/ {m += $NF} END {printf "%d %d\n", s, m}' "$tmp/peak.txt")
# memprof's peak: replay the dump (the same figure `memprof record` prints).
mp=$("$memprof" dump "$tmp/cap.memprof" | awk '
	/ alloc memory=host addr=/ { a = $0; sub(/.*addr=/, "", a); sub(/ .*/, "", a);
		r = $0; sub(/.*requested=/, "", r); sub(/ .*/, "", r); live[a] = r; cur += r; if (cur > peak) peak = cur }
	/ free memory=host addr=/ { a = $0; sub(/.*addr=/, "", a); sub(/ .*/, "", a); if (a in live) { cur -= live[a]; delete live[a] } }
	END { print peak }')
net=$((hs - hmp))
echo "CPython ($py, PYTHONMALLOC=malloc), one run seen by both: heaptrack $hs B = $net B of the program" \
	"+ $hmp B (memprof's flusher thread); memprof $mp B:" \
	"$([ "$net" = "$mp" ] && echo EQUAL || echo "DIFFERENT by $((mp - net)) B")"
