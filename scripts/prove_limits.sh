#!/usr/bin/env bash
# Do the limits of `egdb prove` hold? Wall time and peak RSS (`/usr/bin/time -v`) of commands
# whose limits used to be overrun (issue 37), for one or two binaries (before / after):
#
#   scripts/prove_limits.sh [AFTER_BINARY [BEFORE_BINARY]]
#
# AFTER_BINARY defaults to target/release/egdb (built here). Tables: a directory with every
# table up to 4 pieces ($EGDB4, default /tmp/egdb4; built here when missing, a few seconds)
# and, where present, one up to 6 pieces ($EGDB6, default /tmp/egdb6; read only). Each line:
# binary, case, wall seconds, peak RSS in MiB, exit status, and the value column / stopped=
# field of the output (or the error). Wall time over the limit by more than a second is
# flagged `OVER`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ge 1 ]; then AFTER=$1; else
  cargo build --release --bin egdb
  AFTER=target/release/egdb
fi
BEFORE=${2:-}
D4=${EGDB4:-/tmp/egdb4}
D6=${EGDB6:-/tmp/egdb6}
[ -f "$D4/0202-nn.egdb" ] || "$AFTER" build --pieces 4 --dir "$D4" --quiet
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

SIX='W:WK1,K2,K3:BK29,K30,K31'      # 3 kings v 3 kings: hard on the 4-piece tables
FIVE='B:WK5,K12:BK2,K18,25'         # a 5-piece win: settled at once after --build
EIGHT='W:WK1,K2,K3,K4:BK29,K30,K31,K32'

# run LABEL LIMIT_S BINARY ARGS...
run() {
  local label=$1 limit=$2 bin=$3; shift 3
  local out="$WORK/out" tv="$WORK/time"
  set +e
  /usr/bin/time -v -o "$tv" "$bin" "$@" >"$out" 2>"$WORK/err"
  local rc=$?
  set -e
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$tv")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$tv")
  local what
  what=$(awk -F'\t' 'NR==1 {v=$2; s=""; n=split($3,f," "); for(i=1;i<=n;i++) if (f[i] ~ /^stopped=/) s=f[i]; print v, s}' "$out")
  [ -n "$what" ] || what="$(tail -1 "$WORK/err" | cut -c1-100)"
  local flag=""
  if [ "$limit" != "-" ] && awk -v w="$wall" -v l="$limit" 'BEGIN{exit !(w > l + 1)}'; then flag=" OVER"; fi
  printf '%-7s %-44s %7.2f s %7s MiB  exit %s  %s%s\n' "$(basename "$bin")" "$label" "$wall" "$rss" "$rc" "$what" "$flag"
}

for bin in $BEFORE $AFTER; do
  tag=$([ "$bin" = "$BEFORE" ] && echo before || echo after)
  run "[$tag] 6 kings, 4p, --time 1 --layer 1e8" 1 "$bin" prove --dir "$D4" --time 1 --layer 100000000 "$SIX"
  run "[$tag] 6 kings, 4p, --time 1 --memory 2G --layer 8e6" 1 "$bin" prove --dir "$D4" --time 1 --memory 2G --layer 8000000 "$SIX"
  run "[$tag] 6 kings, 4p, --time 0 --nodes 100 --layer 1e7" - "$bin" prove --dir "$D4" --time 0 --nodes 100 --layer 10000000 "$SIX"
  rm -rf "$WORK/b"; cp -r "$D4" "$WORK/b"
  run "[$tag] 5 pieces, 4p, --time 1 --build 1e9" 1 "$bin" prove --dir "$WORK/b" --time 1 --nodes 1 --layer 0 --build 1000000000 "$FIVE"
  run "[$tag] 6 kings, 4p, --time 5 --cert" 5 "$bin" prove --dir "$D4" --time 5 --cert "$WORK/c" "$SIX"
  if [ -f "$D6/0303-nn.egdb" ]; then
    run "[$tag] 8 kings, 6p, --time 5" 5 "$bin" prove --dir "$D6" --time 5 "$EIGHT"
    run "[$tag] 8 kings, 6p, --time 1 --layer 1e8" 1 "$bin" prove --dir "$D6" --time 1 --layer 100000000 "$EIGHT"
    run "[$tag] 8 kings, 6p, --time 0 --nodes 1000 --layer 1e7" - "$bin" prove --dir "$D6" --time 0 --nodes 1000 --layer 10000000 "$EIGHT"
    run "[$tag] Fourth Position draw, 6p, --time 5 --cert" 5 "$bin" prove --dir "$D6" --time 5 --cert "$WORK/c" 'W:W30,K31,K32:BK20,21,K22,K23'
  fi
done
