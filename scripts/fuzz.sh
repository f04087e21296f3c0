#!/usr/bin/env bash
# fuzz.sh NAME [SECONDS] - build the libFuzzer target fuzz_NAME with clang
# (ASan + UBSan) and run it on its seed corpus, tests/fuzz/corpus/NAME.
# New inputs it finds go to build-fuzz/corpus-NAME (not into the repo).
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: fuzz.sh NAME [SECONDS]}
secs=${2:-60}
scripts/deps.sh clang libclang-rt-14-dev
CC=clang scripts/build.sh build-fuzz -DMEMPROF_FUZZ=ON -DMEMPROF_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
mkdir -p "build-fuzz/corpus-$name"
bin=$(find build-fuzz -type f -name "fuzz_$name" -perm -u+x | head -n 1)
[ -n "$bin" ] || { echo "fuzz.sh: no target fuzz_$name" >&2; exit 2; }
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
exec "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 "build-fuzz/corpus-$name" "tests/fuzz/corpus/$name"
