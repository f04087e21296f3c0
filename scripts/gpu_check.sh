#!/bin/sh
# gpu_check.sh - memprof on a real GPU: PyTorch under its three allocator
# configurations and a CUDA program of every memory kind, each run plain
# and under `memprof record --gpu`, with the CUPTI buffers dumped
# (MEMPROF_CUPTI_DUMP) so that the run becomes a fixture that replays
# anywhere (docs/gpu.md, "Fixtures"). Results go to OUTDIR as one tarball.
#
# usage: scripts/gpu_check.sh MEMPROF VMM_PROBE OUTDIR
#   MEMPROF    the memprof executable (with its preload and CUPTI libraries
#              beside it, as installed or in a build tree)
#   VMM_PROBE  tests/gpu/real/vmm_probe.cu built with nvcc (-lcuda)
set -u
M=$1 PROBE=$2 OUT=$3
W=$(mktemp -d)
PY=tests/gpu/real/torch_gpu.py
mkdir -p "$W/res"
R=$W/res
{
	date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.total --format=csv,noheader
	python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)'
} >"$R/env.txt" 2>&1
# libcupti: the toolkit's, else the one PyTorch's wheels bring
for c in /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* \
	$(python3 -c 'import nvidia.cuda_cupti, os; print(os.path.dirname(nvidia.cuda_cupti.__file__))' 2>/dev/null)/lib/libcupti.so*; do
	[ -e "$c" ] && { export MEMPROF_CUPTI_LIB=$c; break; }
done
echo "libcupti: ${MEMPROF_CUPTI_LIB:-none found}" >>"$R/env.txt"

run() { # NAME CONF [memprof flags] -- CMD...
	name=$1 conf=$2; shift 2
	flags=
	while [ "$1" != -- ]; do flags="$flags $1"; shift; done
	shift
	echo "== $name ($conf)"
	if [ -z "${NO_PLAIN:-}" ]; then
		PYTORCH_CUDA_ALLOC_CONF=$conf timeout 60 "$@" >"$R/$name.plain.out" 2>"$R/$name.plain.err"
		echo "plain rc $?: $(tail -c 600 "$R/$name.plain.out")"
	fi
	mkdir -p "$R/$name.dump"
	t0=$(date +%s.%N)
	PYTORCH_CUDA_ALLOC_CONF=$conf MEMPROF_CUPTI_DUMP=$R/$name.dump timeout 150 \
		"$M" record --gpu $flags -o "$W/$name.run" -- "$@" >"$R/$name.out" 2>"$R/$name.err"
	rc=$?; echo "recorded rc $rc in $(awk "BEGIN{print $(date +%s.%N) - $t0}") s: $(tail -c 600 "$R/$name.out")"
	tail -3 "$R/$name.err"
	# The runs hold the whole host side (tens of millions of events): what
	# comes back is the GPU side, as events and as the report's figures.
	"$M" dump "$W/$name.run" | grep -E 'memory=(GPU|CUDA)|name="(GPU|CUDA)' >"$R/$name.gpu_events.txt"
	"$M" report --peak "$W/$name.run" >"$R/$name.report.txt" 2>&1
	"$M" report --peak --json "$W/$name.run" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
d["devices"] = [m for m in d["devices"] if m["name"].startswith(("GPU", "CUDA"))]
json.dump(d, sys.stdout, indent=1)' >"$R/$name.gpu_report.json"
	wc -l "$R/$name.gpu_events.txt"
	grep -A8 -E "'(GPU|CUDA)" "$R/$name.report.txt" | head -30
	pack
}

# After every run, so that a run cut off by the time limit still leaves
# the ones before it.
pack() {
	rm -f "$OUT"/gpu_check.tar.gz.*
	tar -C "$W" -czf "$W/gpu_check.tar.gz" res
	# what comes back is at most 16 MiB a file
	split -b 15m -d "$W/gpu_check.tar.gz" "$OUT/gpu_check.tar.gz."
}

run vmm "" -- "$PROBE"
run torch_async backend:cudaMallocAsync -- python3 $PY
run torch_expandable expandable_segments:True -- python3 $PY "$R/torch_expandable.snapshot.pickle"
run torch_native "" -- python3 $PY "$R/torch_native.snapshot.pickle"

du -sh "$R"/* | sort -h | tail -8
ls -la "$OUT"
