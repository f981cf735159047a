#!/usr/bin/env bash
# Outside truth at 7 pieces and more (issue 30 item 4): textbook positions with published
# values, probed directly in the tables of their piece count and proved by `egdb prove` on the
# tables of fewer pieces (which must not hold the position's piece count). Every answer is
# compared with the published value; a table value or a proof that differs fails the script
# (`unknown` from the prover is reported, not a failure).
#
#   scripts/outside_truth.sh [--binary EGDB] [--time S] DIR_FULL DIR_SMALLER
#
# DIR_FULL: tables with the positions' piece count (e.g. all of 7 pieces); DIR_SMALLER: tables
# of fewer pieces (e.g. all of 6). Sources of the values: shared/reference.md section 8 (the
# Fourth Position family, values stated by the published solutions).
set -euo pipefail
cd "$(dirname "$0")/.."
egdb="target/release/egdb"
secs=60
while [ $# -gt 2 ]; do
  case "$1" in
    --binary) egdb="$2"; shift 2 ;;
    --time) secs="$2"; shift 2 ;;
    *) echo "outside_truth.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ $# -eq 2 ] || { echo "usage: scripts/outside_truth.sh [--binary EGDB] [--time S] DIR_FULL DIR_SMALLER" >&2; exit 2; }
full="$1"
small="$2"
# FEN, published value for the side to move.
facts=(
  "B:W30,K31,K32:BK20,21,K22,K23 win"
  "W:W30,K31,K32:BK20,21,K22,K23 draw"
  "B:WK30,K31,K32:BK20,21,K22,K23 win"
)
bad=0
printf 'fen\tpublished\ttables\tprover\tprover_seconds\n'
for f in "${facts[@]}"; do
  fen="${f% *}"
  want="${f##* }"
  got=$("$egdb" probe --dir "$full" "$fen" | cut -f2)
  start=$(date +%s.%N)
  proved=$("$egdb" prove --dir "$small" --time "$secs" "$fen" | cut -f2 || true)
  took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
  printf '%s\t%s\t%s\t%s\t%s\n' "$fen" "$want" "$got" "$proved" "$took"
  [ "$got" = "$want" ] || bad=1
  [ "$proved" = "$want" ] || [ "$proved" = "unknown" ] || bad=1
done
exit $bad
