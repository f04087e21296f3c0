#!/bin/sh
# bench_plot.sh - what the charts cost on top of the analysis (not run in CI).
#
#   scripts/bench_plot.sh [BUILD_DIR] [EVENTS] [WORK_DIR]
#
# KEEP=1 keeps the generated capture in WORK_DIR and reuses it next time.
# For a synthetic capture of EVENTS events (default 100 million; about 20
# thousand live blocks in 4 regions, 10 failed allocations) it prints the
# wall time of the analysis each chart needs, as `memprof report` does it
# (--peak; --timeline for the timeline), then of `memprof plot` with each
# chart, as SVG and as PNG, with the size of each picture: what the chart
# adds is the difference (the maps include a second pass over the capture). The timeline must stay
# under 300 KiB whatever EVENTS is. Then the same for the largest HLO module
# of ../shared/data (when present): `memprof hlo` against `memprof hlo -o`.
# Medians of RUNS runs (default 3).
set -eu

BUILD=${1:-build}
EVENTS=${2:-100000000}
WORK=${3:-${TMPDIR:-/tmp}}
RUNS=${RUNS:-3}
MEMPROF=$BUILD/src/cli/memprof
GEN=$BUILD/tests/report/memprof_gen_capture
HLO=$(dirname "$0")/../../shared/data/hlo/maxtext-h100/module_0016.jit_train_step.sm_9.0_gpu_after_optimizations.hlo.pb

cmake --build "$BUILD" --target memprof memprof_gen_capture >/dev/null
for tool in "$MEMPROF" "$GEN"; do
	[ -x "$tool" ] || { echo "bench_plot: missing $tool (configure with -DMEMPROF_TESTS=ON)" >&2; exit 1; }
done

# median wall time of a command, in seconds
median() {
	for i in $(seq "$RUNS"); do
		start=$(date +%s.%N)
		"$@" >/dev/null 2>&1
		end=$(date +%s.%N)
		echo "$end - $start" | bc
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

echo "machine: $(nproc) cores, $(uname -m), load: $(cut -d' ' -f1-3 /proc/loadavg); medians of $RUNS runs"
cap="$WORK/bench-plot-$EVENTS.memprof"
if [ -s "$cap" ] && [ "${KEEP:-0}" = 1 ]; then
	echo "capture: $(du -h "$cap" | cut -f1), reused"
else
	"$GEN" "$cap" --events "$EVENTS" --live 20000 --regions 4 --oom 10 >/dev/null
	echo "capture: $EVENTS events, $(du -h "$cap" | cut -f1)"
fi
# the analysis each chart needs, alone: the timeline's exact fragmentation
# at every point costs what it costs `report --timeline` too
peak=$(median "$MEMPROF" report --peak "$cap")
tl=$(median "$MEMPROF" report --peak --timeline --points 2000 "$cap")
echo "report --peak: $peak s; report --peak --timeline --points 2000 (the timeline's analysis): $tl s"
for chart in timeline breakdown map all; do
	case $chart in timeline|all) base=$tl ;; *) base=$peak ;; esac
	for ext in svg png; do
		out="$WORK/bench-plot.$ext"
		t=$(median "$MEMPROF" plot "$cap" --chart "$chart" -o "$out")
		printf 'plot --chart %-9s %s: %6.2f s (%+.2f s over its analysis), %s\n' "$chart" "$ext" "$t" \
			"$(echo "$t - $base" | bc)" "$(du -k "$out" | cut -f1) KiB"
	done
done
[ "${KEEP:-0}" = 1 ] || rm -f "$cap"
rm -f "$WORK/bench-plot.svg" "$WORK/bench-plot.png"

if [ -f "$HLO" ]; then
	echo
	echo "HLO: $(basename "$HLO") ($(du -h "$HLO" | cut -f1))"
	base=$(median "$MEMPROF" hlo "$HLO")
	echo "hlo (text): $base s"
	for ext in svg png; do
		out="$WORK/bench-hlo.$ext"
		t=$(median "$MEMPROF" hlo "$HLO" -o "$out")
		printf 'hlo -o %s: %6.2f s (%+.2f s over the text), %s\n' "$ext" "$t" "$(echo "$t - $base" | bc)" \
			"$(du -k "$out" | cut -f1) KiB"
		rm -f "$out"
	done
else
	echo "HLO: $HLO absent (shared data not available), skipped"
fi
