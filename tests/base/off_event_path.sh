#!/bin/sh
# off_event_path.sh NM LIB... - fails when a library that runs inside traced
# programs holds core/base's containers (mp_vec_*, mp_i64map_*, mp_strtab_*,
# mp_hash_bytes): they call malloc, which the event path must not.
set -eu
nm=$1
shift
for lib in "$@"; do
	syms=$("$nm" "$lib") || { echo "off_event_path: $nm $lib failed" >&2; exit 1; }
	[ -n "$syms" ] || { echo "off_event_path: no symbols in $lib (stripped?)" >&2; exit 1; }
	found=$(printf '%s\n' "$syms" | grep -E ' (mp_vec_|mp_i64map_|mp_strtab_|mp_hash_bytes)' || true)
	if [ -n "$found" ]; then
		echo "off_event_path: $lib holds core/base containers:" >&2
		printf '%s\n' "$found" >&2
		exit 1
	fi
	echo "$lib: no core/base container"
done
