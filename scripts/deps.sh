#!/usr/bin/env bash
# deps.sh [extra packages...] - install the Debian packages memprof builds
# with, if missing. Used by the README's commands and by CI; safe to rerun.
set -euo pipefail

packages=(gcc make cmake ninja-build pkg-config zlib1g-dev libdeflate-dev libcairo2-dev libjansson-dev
          fonts-dejavu-core libfontconfig-dev libexpat1-dev  # charts: the font they are drawn with; tests read SVG back
          libprotobuf-c-dev protobuf-c-compiler libcmocka-dev
          libiberty-dev       # report's demangler: C++ and Rust names
          g++ libjemalloc2 libtcmalloc-minimal4  # the hooks' C++ victim; the preload over jemalloc and tcmalloc
          musl-tools          # a victim of another C library (record runs it untraced)
          libunwind-dev libdw-dev   # record --stacks unwinding, report's symbolization (both optional)
          dpkg-dev python3)         # the .deb (dpkg-shlibdeps) and the Python module's tests
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "memprof: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
