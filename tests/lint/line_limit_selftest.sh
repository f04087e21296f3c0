#!/bin/sh
# line_limit_selftest.sh - line_limit.sh on a made-up tree: it must fail and
# name the file over the limit and the stale allow-list entry, and only
# those; then pass once both are gone.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/sub" "$tmp/src/build-x"
seq 601 >"$tmp/src/sub/long.c"     # over
seq 600 >"$tmp/src/at_limit.h"     # at the limit: fine
seq 700 >"$tmp/src/allowed.cpp"    # over, allowed
seq 900 >"$tmp/src/notes.txt"      # not a source file
seq 900 >"$tmp/src/build-x/gen.c"  # in a build directory
seq 10 >"$tmp/src/split_already.c" # allowed, no longer over: stale
printf '# comment\nallowed.cpp\nsplit_already.c  # a stale entry\n' >"$tmp/allow.txt"
rc=0
LINE_LIMIT_ALLOW=$tmp/allow.txt sh "$here/line_limit.sh" "$tmp/src" >"$tmp/out" || rc=$?
cat "$tmp/out"
[ "$rc" = 1 ] || { echo "selftest: expected exit 1, got $rc"; exit 1; }
grep -q '^line_limit: sub/long.c: 601 lines' "$tmp/out" || { echo "selftest: sub/long.c not named"; exit 1; }
grep -q '^line_limit: split_already.c is on the allow-list' "$tmp/out" ||
	{ echo "selftest: the stale entry not named"; exit 1; }
[ "$(grep -c '^line_limit:' "$tmp/out")" = 2 ] || { echo "selftest: something else was named"; exit 1; }
rm "$tmp/src/sub/long.c"
printf 'allowed.cpp\n' >"$tmp/allow.txt"
LINE_LIMIT_ALLOW=$tmp/allow.txt sh "$here/line_limit.sh" "$tmp/src" || { echo "selftest: expected a pass"; exit 1; }
