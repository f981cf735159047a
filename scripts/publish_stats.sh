#!/usr/bin/env bash
# Write the published statistics of a complete table directory into docs/stats/ (issue 30
# item 3), as Chinook's and Gilbert's databases published theirs:
#
#   docs/stats/stats-<N>.txt        egdb stats: per material and side to move, positions, wins,
#                                   losses, draws, longest resolution (plies)
#   docs/stats/longest-dtc-<N>.txt  egdb stats --dtc: the longest win and loss to conversion per
#                                   material and side to move, with a position attaining each
#                                   (only when the directory has distance files)
#   docs/stats/longest-dtw-<N>.txt  egdb stats --dtw: the same by depth to win (only when the
#                                   directory has depth-to-win files)
#   docs/stats/info-<N>.txt         egdb info: slices, positions, bytes, positions per byte
#   docs/stats/manifest-<N>.txt     egdb info --manifest: SHA-256 of every table file
#                                   (`sha256sum -c` in a directory built elsewhere)
#
#   scripts/publish_stats.sh [--binary EGDB] [--out OUT] DIR N
#
# OUT (default docs/stats) is where the files go; the variants' tables are published under
# docs/stats/<rules>/ (for example `--out docs/stats/russian`).
# N is the largest piece count in DIR (used in the file names). DIR must be complete (egdb
# stats fails on missing slices). Run `egdb verify --dir DIR` first: these are published as facts.
set -euo pipefail
cd "$(dirname "$0")/.."
egdb="target/release/egdb"
out="docs/stats"
while [ $# -gt 2 ]; do
  case "$1" in
    --binary) egdb="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || { echo "usage: scripts/publish_stats.sh [--binary EGDB] [--out OUT] DIR N" >&2; exit 2; }
dir="$1"
n="$2"
mkdir -p "$out"
"$egdb" stats --dir "$dir" >"$out/stats-$n.txt"
"$egdb" info --dir "$dir" >"$out/info-$n.txt"
"$egdb" info --manifest --dir "$dir" >"$out/manifest-$n.txt"
if ls "$dir"/*.dtc >/dev/null 2>&1; then
  "$egdb" stats --dtc --dir "$dir" >"$out/longest-dtc-$n.txt"
fi
if ls "$dir"/*.dtw >/dev/null 2>&1; then
  "$egdb" stats --dtw --dir "$dir" >"$out/longest-dtw-$n.txt"
fi
wc -c "$out"/*-"$n".txt
