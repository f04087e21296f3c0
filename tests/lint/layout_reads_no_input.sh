#!/bin/sh
# layout_reads_no_input.sh SOURCE_DIR - render/ draws what it is handed
# (issue 42): fails, naming each line, where its code rewinds or reads a
# source, replays one for snapshots or runs the solver. What the charts
# need beyond the solver's results is read by the caller (mp_replay_read,
# src/report/replay.c) and handed over.
set -eu
cd "${1:?usage: layout_reads_no_input.sh SOURCE_DIR}"
hits=$(grep -rnE '\bmp_(source_(rewind|next|next_batch|open[a-z_]*)|snapshot_run|solver_run|replay_read)[[:space:]]*\(' \
	--include='*.c' --include='*.h' render/ | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/\*|\*)|/\*.*\bmp_solver_run\(\)' || true)
if [ -n "$hits" ]; then
	echo "render/ reads an input (hand it what it needs instead):"
	echo "$hits"
	exit 1
fi
echo "render/ reads no input"
