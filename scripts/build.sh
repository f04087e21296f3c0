#!/usr/bin/env bash
# build.sh [BUILD_DIR] [cmake options...] - configure and build memprof.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
ninja -C "$dir" -j "$(nproc)"
