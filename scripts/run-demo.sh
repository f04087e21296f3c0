#!/usr/bin/env bash
# run-demo.sh [memprof demo options] - the README's first command: install
# what is missing, build, and run `memprof demo` on the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build >/dev/null
exec build/src/cli/memprof demo "$@"
