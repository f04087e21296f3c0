#!/usr/bin/env bash
# charts.sh [BUILD_DIR] - draw the pictures of docs/charts.md again, from the
# bundled example, a synthetic fragmented pool and ../shared/data (skipped
# with a message when it is absent), into docs/images/. The example's
# timings differ from run to run, so its pictures do too; the figures they
# show do not.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
out=docs/images
data=../shared/data
scripts/build.sh "$BUILD" >/dev/null
M=$BUILD/src/cli/memprof
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

# the bundled example: timeline, breakdown, the maps, and all of them
$M demo -o "$tmp/demo.memprof" >/dev/null
$M plot "$tmp/demo.memprof" -o "$out/demo-timeline.png"
$M plot "$tmp/demo.memprof" --chart breakdown -o "$out/demo-breakdown.png"
$M plot "$tmp/demo.memprof" --chart map -o "$out/demo-maps.png"
$M report "$tmp/demo.memprof" --png "$out/demo-report.png" >/dev/null

# a synthetic pool of 20,000 live blocks, fragmented, with failures
$BUILD/tests/report/memprof_gen_capture "$tmp/pool.memprof" --events 400000 --live 20000 --regions 4 --oom 3 >/dev/null
$M plot "$tmp/pool.memprof" --chart map --oom-maps 1 -o "$out/pool-maps.png"

# a hand-made call tree as an icicle (until `plot --chart flame` draws a capture's)
$BUILD/tests/render/flame_example "$out/flame-example.png" >/dev/null

if [ -d "$data" ]; then
	tf=$data/xplane/tf24-gpu-e4040-2022/logs/fit/20221104-212610/train/plugins/profile/2022_11_04_21_26_12/instance-ecbm.xplane.pb
	$M plot "$tf" -o "$out/tf-timeline.png"
	jax=$data/xplane/jax-mi300x-tracelens/tests/traces/mi300/jax08_attention/tw003.xplane.pb
	$M plot "$jax" --device 0 -o "$out/jax-timeline.png"
	hlo=$data/hlo/maxtext-h100/module_0016.jit_train_step.sm_9.0_gpu_after_optimizations.hlo.pb
	$M hlo "$hlo" -o "$out/hlo-train-step.png" >/dev/null
else
	echo "charts.sh: $data is absent: the pictures of shared data were not drawn" >&2
fi
ls -l "$out"
