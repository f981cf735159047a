#!/usr/bin/env bash
# Outside truth at 7 pieces and more (issue 30 item 4): published positions with their
# published values (tests/data/published_positions.tsv, with the source and attribution of
# each; by default also the Fourth Position family of shared/reference.md section 8, which
# the file holds), probed directly in the tables holding their piece count, and proved by
# `egdb prove` on tables of fewer pieces, so that the proof does not read the tables probed.
#
#   scripts/outside_truth.sh [--binary EGDB] [--time S] [--data FILE] [--pieces N] DIR_FULL [PROVE_DIR...]
#
# DIR_FULL: tables holding the positions' piece counts (e.g. all of 7 pieces, or a build of 8
# pieces in progress: a position whose slice is not built yet is reported `missing`, not
# failed; a position of more pieces than DIR_FULL holds is not probed: `-`). PROVE_DIR: directories of fewer pieces (e.g. all of 6, all of 7); each position is
# proved on the one holding the most pieces while holding no slice of the position's own piece
# count or more (none: `-`, not proved). `--pieces N`: only positions of N pieces.
#
# Prints one line per position (fen, pieces, published value, confidence, tables, prover,
# prover seconds) and a summary. Exit status 1 if a table value or a settled proof differs
# from the published value, or a probe fails other than for a missing slice; `unknown` from
# the prover (its time ran out) is reported, not a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
egdb="target/release/egdb"
secs=60
data="tests/data/published_positions.tsv"
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) egdb="$2"; shift 2 ;;
    --time) secs="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --pieces) only="$2"; shift 2 ;;
    --*) echo "outside_truth.sh: unknown argument $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: scripts/outside_truth.sh [--binary EGDB] [--time S] [--data FILE] [--pieces N] DIR_FULL [PROVE_DIR...]" >&2; exit 2; }
full="$1"
shift
[ -x "$egdb" ] || { echo "outside_truth.sh: no binary $egdb (cargo build --release, or --binary)" >&2; exit 2; }
[ -r "$data" ] || { echo "outside_truth.sh: cannot read $data" >&2; exit 2; }

# The largest piece count with any value file in a directory: the first table of `egdb info`
# (pieces, slices, ...; a second table, of distance files, follows when there are any).
max_pieces() {
  "$egdb" info --dir "$1" | awk -F'\t' '$1 == "pieces" { t = ($2 == "slices"); next }
    t && $1 ~ /^[0-9]+$/ && $2 > 0 && $1 + 0 > m { m = $1 + 0 } END { print m + 0 }'
}
full_max=$(max_pieces "$full")
declare -a prove_dirs=() prove_max=()
for d in "$@"; do
  prove_dirs+=("$d")
  prove_max+=("$(max_pieces "$d")")
done

bad=0 agree=0 missing=0 proved=0 unknown=0 total=0
printf 'fen\tpieces\tpublished\tconfidence\ttables\tprover\tprover_seconds\n'
while IFS=$'\t' read -r fen n want conf _rest; do
  case "$fen" in ''|'#'*|fen) continue ;; esac
  if [ -n "$only" ] && [ "$n" != "$only" ]; then continue; fi
  total=$((total + 1))
  if [ "$n" -gt "$full_max" ]; then
    got="-"
  elif out=$("$egdb" probe --dir "$full" "$fen" 2>&1); then
    got=$(printf '%s\n' "$out" | cut -f2 | head -n 1)
    if [ "$got" = "$want" ]; then agree=$((agree + 1)); else bad=1; fi
  elif printf '%s' "$out" | grep -q 'missing table'; then
    got=missing
    missing=$((missing + 1))
  else
    got="error: $(printf '%s' "$out" | head -n 1)"
    bad=1
  fi
  # The prover on the directory with the most pieces below the position's.
  best=-1 dir=""
  for i in "${!prove_dirs[@]}"; do
    m=${prove_max[$i]}
    if [ "$m" -lt "$n" ] && [ "$m" -gt "$best" ]; then best=$m; dir=${prove_dirs[$i]}; fi
  done
  proof="-" took="-"
  if [ -n "$dir" ]; then
    start=$(date +%s.%N)
    proof=$("$egdb" prove --dir "$dir" --time "$secs" "$fen" 2>/dev/null | cut -f2 || true)
    [ -n "$proof" ] || proof="error"
    took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    case "$proof" in
      "$want") proved=$((proved + 1)) ;;
      unknown) unknown=$((unknown + 1)) ;;
      *) bad=1 ;;
    esac
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$fen" "$n" "$want" "$conf" "$got" "$proof" "$took"
done < "$data"
echo "# $total positions: tables agree $agree, missing $missing; proofs agree $proved, unknown $unknown; status $bad" >&2
exit $bad
