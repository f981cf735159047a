#!/usr/bin/env bash
# Real-browser test of `egdb serve` (run by .ci/run): start the server on 127.0.0.1 (a free
# port), load the page in headless Chromium with a position in the URL and a move to play
# (`?fen=...&play=19-24`, the same playMove() the move buttons call), check the DOM after the
# move, and take a screenshot. With a second table directory of Russian tables, the server
# serves both variants and the variant picker is checked too: `?rules=russian` picks Russian,
# and moves are played by clicking the board (`&clicks=...`: click events on the squares, the
# same handler as a user's clicks): a flying king's move along the whole diagonal and a
# Russian man's capture that crowns and goes on as a king.
#
# Usage: scripts/browser_test.sh EGDB_BIN TABLE_DIR [OUT_DIR [RUSSIAN_DIR]]
#   TABLE_DIR must hold the English tables of at most 4 pieces (the First Position has 4).
#   OUT_DIR (default target/browser) receives dom.html, explorer.png and, with RUSSIAN_DIR,
#   dom-russian-*.html and explorer-russian.png.
#   RUSSIAN_DIR (optional) holds Russian tables of at most 3 pieces or more.
# Needs `chromium` (Debian package); .ci/run installs it when missing.
set -euo pipefail
bin="$1"
tables="$2"
out="${3:-target/browser}"
russian="${4:-}"
mkdir -p "$out"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
    echo "browser_test: error: chromium not found (apt-get install chromium)" >&2
    exit 1
fi
log="$(mktemp)"
dirs=(--dir "$tables")
[ -n "$russian" ] && dirs+=(--dir "$russian")
"$bin" serve "${dirs[@]}" --bind 127.0.0.1:0 >"$log" 2>&1 &
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
dom="$out/dom.html"
check() {
    if grep -q -- "$1" "$dom"; then
        echo "browser_test: ok: $2"
    else
        echo "browser_test: FAIL: $2 (no match for $1 in $dom)" >&2
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

if [ -n "$russian" ]; then
    check '<option value="russian">' "the picker offers the second variant"
    # Russian, chosen in the URL: a flying king on 1 (White's man on 32 out of its way) is
    # clicked, then square 28 at the far end of the long diagonal: one move, 1-28.
    dom="$out/dom-russian-king.html"
    timeout 120 "$browser" "${flags[@]}" --dump-dom "${url}?rules=russian&fen=B:W32:BK1&clicks=1,28" \
        >"$dom" 2>>"$out/chromium.log"
    check 'id="rules-name">russian<' "Russian picked by ?rules=russian"
    check 'id="line">played 1-28<' "the flying king's long move played by two clicks"
    check 'id="fen-out">W:W32:BK28<' "FEN after 1-28"
    check 'class="flying"' "the flying king drawn as such"
    check 'id="kings">flying' "the summary says kings fly"
    # A Black man on 22 jumps 26, is crowned on 31 and goes on as a king over 24 to 20
    # (Russian rule book): clicking 22 then 20 plays the whole capture.
    dom="$out/dom-russian-capture.html"
    timeout 120 "$browser" "${flags[@]}" --dump-dom "${url}?rules=russian&fen=B:W24,26:B22&clicks=22,20" \
        >"$dom" 2>>"$out/chromium.log"
    check 'id="line">played 22x31x20<' "the multi-capture played by clicking its ends"
    check 'id="fen-out">W:W:BK20<' "FEN after the capture: a king on 20, White without pieces"
    check 'id="status" data-state="ready"' "the Russian probe answered"
    timeout 120 "$browser" "${flags[@]}" --window-size=1100,760 \
        --screenshot="$out/explorer-russian.png" "${url}?rules=russian&fen=B:W32:BK1&clicks=1" \
        >>"$out/chromium.log" 2>&1 || true
fi
exit "$fail"
