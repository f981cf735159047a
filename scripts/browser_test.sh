#!/usr/bin/env bash
# Real-browser test of `egdb serve` (run by .ci/run): start the server on 127.0.0.1 (a free
# port), load the page in headless Chromium with a position in the URL and a move to play
# (`?fen=...&play=19-24`, the same playMove() the move buttons call), check the DOM after the
# move, and take a screenshot.
#
# Usage: scripts/browser_test.sh EGDB_BIN TABLE_DIR [OUT_DIR]
#   TABLE_DIR must hold the tables of at most 4 pieces (the First Position has 4).
#   OUT_DIR (default target/browser) receives dom.html and explorer.png.
# Needs `chromium` (Debian package); .ci/run installs it when missing.
set -euo pipefail
bin="$1"
tables="$2"
out="${3:-target/browser}"
mkdir -p "$out"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
    echo "browser_test: error: chromium not found (apt-get install chromium)" >&2
    exit 1
fi
log="$(mktemp)"
"$bin" serve --dir "$tables" --bind 127.0.0.1:0 >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$log"' EXIT
url=""
for _ in $(seq 1 100); do
    url="$(sed -n 's|^egdb serve: listening on \(http://[0-9.:]*/\)$|\1|p' "$log")"
    [ -n "$url" ] && break
    kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$url" ] || { echo "browser_test: error: server did not start" >&2; cat "$log" >&2; exit 1; }

# The First Position (Lasker 1918), White to move; White plays 19-24, which lets Black's king
# on 28 jump two pieces (28x19x26), its only move.
page="${url}?fen=W:WK19,K23:BK28,12&play=19-24"
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=8000)
timeout 120 "$browser" "${flags[@]}" --dump-dom "$page" >"$out/dom.html" 2>"$out/chromium.log"
timeout 120 "$browser" "${flags[@]}" --window-size=1100,760 --screenshot="$out/explorer.png" "$page" \
    >>"$out/chromium.log" 2>&1

fail=0
check() {
    if grep -q -- "$1" "$out/dom.html"; then
        echo "browser_test: ok: $2"
    else
        echo "browser_test: FAIL: $2 (no match for $1 in $out/dom.html)" >&2
        fail=1
    fi
}
check '<title>egdb explorer: B:WK23,K24:B12,K28 ' "title holds the position after 19-24"
check 'id="fen-out">B:WK23,K24:B12,K28<' "FEN shown after the move"
check 'id="side">Black<' "Black to move after the move"
check 'id="line">played 19-24<' "the move was played"
check 'id="status" data-state="ready"' "the probe answered"
check 'data-move="28x19x26"' "Black's only move, the double jump, is listed"
# Pieces drawn: two white kings, one black king, one black man.
[ "$(grep -o 'class="piece white king"' "$out/dom.html" | wc -l)" -eq 2 ] || { echo "browser_test: FAIL: two white kings" >&2; fail=1; }
[ "$(grep -o 'class="piece black king"' "$out/dom.html" | wc -l)" -eq 1 ] || { echo "browser_test: FAIL: one black king" >&2; fail=1; }
[ "$(grep -o 'class="piece black"' "$out/dom.html" | wc -l)" -eq 1 ] || { echo "browser_test: FAIL: one black man" >&2; fail=1; }
if [ ! -s "$out/explorer.png" ] || [ "$(head -c 4 "$out/explorer.png" | tail -c 3)" != "PNG" ]; then
    echo "browser_test: FAIL: no screenshot" >&2
    fail=1
else
    echo "browser_test: screenshot $out/explorer.png ($(stat -c %s "$out/explorer.png") bytes)"
fi
exit "$fail"
