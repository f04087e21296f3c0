#!/bin/sh
# line_limit.sh SOURCE_DIR [LIMIT] - the 600-line rule (issue 19): fails,
# naming each of them, when source files (.c, .h, .cpp; those git tracks in
# a checkout, else all but build*/) have more than LIMIT lines (600), except
# the files the allow-list names (line_limit_allow.txt next to this script,
# or $LINE_LIMIT_ALLOW); fails too when the allow-list names a file that is
# no longer over the limit, so that the list only ever shrinks.
set -eu
src=${1:?usage: line_limit.sh SOURCE_DIR [LIMIT]}
limit=${2:-600}
allow=${LINE_LIMIT_ALLOW:-$(cd "$(dirname "$0")" && pwd)/line_limit_allow.txt}
cd "$src"
list=$(mktemp)
trap 'rm -f "$list"' EXIT
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -- '*.c' '*.h' '*.cpp' >"$list"
else
	find . -path './build*' -prune -o -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) -print |
		sed 's|^\./||' | sort >"$list"
fi
# The allow-list: one path a line, relative to SOURCE_DIR; '#' starts a comment.
allowed() {
	[ -f "$allow" ] && sed 's/#.*//; s/[[:space:]]*$//' "$allow" | grep -qxF -- "$1"
}
bad=0
while IFS= read -r f; do
	[ -f "$f" ] || continue # tracked but deleted in the working tree
	n=$(wc -l <"$f")
	if [ "$n" -gt "$limit" ] && ! allowed "$f"; then
		echo "line_limit: $f: $n lines, over the limit of $limit: split it into files of one job each"
		bad=1
	fi
done <"$list"
if [ -f "$allow" ]; then
	for f in $(sed 's/#.*//' "$allow"); do
		if [ ! -f "$f" ] || [ "$(wc -l <"$f")" -le "$limit" ]; then
			echo "line_limit: $f is on the allow-list ($allow) but not over $limit lines: remove it from the list"
			bad=1
		fi
	done
fi
[ "$bad" = 0 ] && echo "line_limit: no source file over $limit lines but the allowed ones"
exit "$bad"
