#!/bin/sh
# link_deps.sh - the layering of issue 42 at the symbol level (nm): which
# library may call into which. Arguments: the static archives, in this order:
#   import export output solver report torch hlo layout render
# Fails (exit 1) naming each symbol that crosses a line it must not:
#   - the xplane reader (memprof_import) calls neither the solver, the
#     report, the output side nor jansson;
#   - the output helpers (memprof_output) call no memprof library at all;
#   - the exporter and xprof compat (memprof_export) call no source library
#     (xplane reader, torch, HLO) and no chart code.
set -eu
[ $# -eq 9 ] || { echo "usage: $0 import export output solver report torch hlo layout render" >&2; exit 2; }
import=$1 export=$2 output=$3 solver=$4 report=$5 torch=$6 hlo=$7 layout=$8 render=$9
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

defined() { nm -g --defined-only "$1" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u; }
# what an archive needs from outside itself
needs() {
	nm -g --undefined-only "$1" 2>/dev/null | awk '{ print $NF }' | sort -u > "$tmp/u"
	defined "$1" > "$tmp/d"
	comm -23 "$tmp/u" "$tmp/d"
}
bad=0
# check NAME NEEDS-FILE FORBIDDEN-FILE WHAT
check() {
	hits=$(comm -12 "$2" "$3" | head -20)
	if [ -n "$hits" ]; then
		echo "FAIL: $1 calls $4:"; echo "$hits" | sed 's/^/  /'
		bad=1
	else
		echo "ok: $1 calls nothing of $4"
	fi
}

needs "$import" > "$tmp/import.needs"
needs "$output" > "$tmp/output.needs"
needs "$export" > "$tmp/export.needs"
for a in solver report export output torch hlo layout render; do
	eval "defined \"\$$a\"" > "$tmp/$a.def"
done
grep '^json_' "$tmp/import.needs" > "$tmp/import.json" || true
check memprof_import "$tmp/import.needs" "$tmp/solver.def" "the solver"
check memprof_import "$tmp/import.needs" "$tmp/report.def" "the report"
check memprof_import "$tmp/import.needs" "$tmp/export.def" "the exporter"
check memprof_import "$tmp/import.needs" "$tmp/output.def" "the output helpers"
if [ -s "$tmp/import.json" ]; then
	echo "FAIL: memprof_import calls jansson:"; sed 's/^/  /' "$tmp/import.json"; bad=1
else
	echo "ok: memprof_import calls nothing of jansson"
fi
if grep -q '^mp_' "$tmp/output.needs"; then
	echo "FAIL: memprof_output calls memprof libraries:"; grep '^mp_' "$tmp/output.needs" | sed 's/^/  /'; bad=1
else
	echo "ok: memprof_output calls no memprof library"
fi
cat "$tmp/torch.def" "$tmp/hlo.def" > "$tmp/sources.def"
defined "$import" >> "$tmp/sources.def"
sort -u -o "$tmp/sources.def" "$tmp/sources.def"
cat "$tmp/layout.def" "$tmp/render.def" | sort -u > "$tmp/charts.def"
check memprof_export "$tmp/export.needs" "$tmp/sources.def" "a source library (xplane, torch, HLO)"
check memprof_export "$tmp/export.needs" "$tmp/charts.def" "the charts"
# the checks must see something: an empty archive would pass them all
for a in import export output; do
	eval "[ -s \"\$tmp/$a.needs\" ]" || { echo "FAIL: memprof_$a needs nothing: not an archive?"; bad=1; }
done
exit $bad
