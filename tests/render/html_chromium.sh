#!/usr/bin/env bash
# html_chromium.sh MEMPROF SHOT.png - the HTML report in headless Chromium
# (Debian: chromium; MEMPROF_TEST_CHROMIUM=1 scripts/run-tests.sh installs it): the demo
# capture's `plot --chart all -o r.html` loads with no console message at
# all (an error, a blocked fetch and a policy violation are all console
# messages), a scripted hover over the peak's largest bar (the page does it
# when opened as r.html#selftest) shows the op's full name and bytes, a
# wheel step zooms (1200 px wide to 960), a click on the table's bytes
# header sorts it (4 MiB rows first, in their order), and a
# screenshot is written to SHOT.png for a reader to look at. Exit 77
# (skipped) when Chromium is not installed.
set -euo pipefail
memprof=$1
shot=$2
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "html_chromium: SKIPPED: no chromium (Debian: apt-get install chromium, or MEMPROF_TEST_CHROMIUM=1 scripts/run-tests.sh)"
  exit 77
fi
dir=$(mktemp -d /tmp/memprof-html-XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$memprof" demo -o "$dir/demo.memprof" >/dev/null 2>&1
"$memprof" plot --chart all -o "$dir/r.html" "$dir/demo.memprof"
run() { # a fresh profile each time: nothing from another run is reused
  timeout 120 "$browser" --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir="$dir/profile-$1" \
    --enable-logging=stderr --v=0 "${@:2}"
}
run dom --dump-dom "file://$dir/r.html#selftest" >"$dir/dom.html" 2>"$dir/log.txt" || {
  cat "$dir/log.txt"; echo "html_chromium: chromium failed"; exit 1; }
sed -n '/<pre id="selftest">/,/<\/pre>/p' "$dir/dom.html" | tee "$dir/selftest.txt"
grep -q 'selftest: pointer on the bar, tooltip shown' "$dir/selftest.txt" ||
  { echo "html_chromium: the hover over the peak's bar showed no tooltip"; exit 1; }
grep -q '^data/shuffle_buffer$' "$dir/selftest.txt" || { echo "html_chromium: no op name in the tooltip"; exit 1; }
grep -q '^bytes: 49283072 (47.0 MiB (74.6 %))$' "$dir/selftest.txt" ||
  { echo "html_chromium: not the peak's bytes in the tooltip"; exit 1; }
grep -q '^selftest: map-block, pointer on it$' "$dir/selftest.txt" || { echo "html_chromium: no hover on a map block"; exit 1; }
grep -q '^bytes: 4194304 B (4.00 MiB)$' "$dir/selftest.txt" || { echo "html_chromium: not the block's bytes"; exit 1; }
grep -q '^selftest: timeline-column, pointer on it$' "$dir/selftest.txt" ||
  { echo "html_chromium: no hover on the timeline"; exit 1; }
grep -q '^zoomed: viewBox width 960$' "$dir/selftest.txt" || { echo "html_chromium: the wheel did not zoom"; exit 1; }
grep -q '^sorted by bytes, first: dense_0/kernel/Initializer</pre>$' "$dir/selftest.txt" ||
  { echo "html_chromium: the table did not sort by bytes (smallest first, ties kept)"; exit 1; }
if grep ':CONSOLE' "$dir/log.txt"; then
  echo "html_chromium: console messages (above) while loading the report"
  exit 1
fi
run shot --hide-scrollbars --window-size=1280,1900 --screenshot="$shot" "file://$dir/r.html" >/dev/null 2>&1
[ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
  { echo "html_chromium: no screenshot"; exit 1; }
echo "html_chromium: ok; screenshot: $shot"
