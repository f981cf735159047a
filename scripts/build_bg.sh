#!/usr/bin/env bash
# The long build of issue 30: all of at most 7 pieces, then all of at most 8, into one
# directory, at the lowest priority, resumable per unit (rerun the same command after a kill,
# a reboot or the end of a session: complete units are kept, the interrupted one is solved
# again). Each piece count's run is timed by /usr/bin/time -v (wall, CPU, peak RSS), appended
# to LOGDIR/time<N>.txt; the build's own lines go to LOGDIR/bg.log.
#
#   scripts/build_bg.sh [--binary EGDB] [--dir DIR] [--logs LOGDIR] [--memory8 SIZE] [--pieces "7 8"]
#
# Start it detached, in its own autogroup at nice 19 (nice alone does not lower a setsid
# process's share here), so that the machine stays usable:
#
#   setsid bash -c 'echo 19 > /proc/$$/autogroup; exec nice -n 19 scripts/build_bg.sh --binary /work/bin/egdb' &
#
# Copy the binary out of target/ first (--binary): a rebuild of the checkout must not replace
# the program under a run of many hours. Files are byte-identical whatever binary of the same
# format finishes the run.
set -euo pipefail
egdb="target/release/egdb"
dir="/work/tables/egdb"
logs="/work/notes"
mem8="14G"
pieces="7 8"
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) egdb="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --logs) logs="$2"; shift 2 ;;
    --memory8) mem8="$2"; shift 2 ;;
    --pieces) pieces="$2"; shift 2 ;;
    *) echo "build_bg.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$dir" "$logs"
for n in $pieces; do
  mem="12G"
  [ "$n" -ge 8 ] && mem="$mem8"
  echo "=== $(date -u +%FT%TZ) start --pieces $n --memory $mem ($egdb)" >>"$logs/bg.log"
  /usr/bin/time -v -a -o "$logs/time$n.txt" \
    "$egdb" build --pieces "$n" --memory "$mem" --dir "$dir" -v >>"$logs/bg.log" 2>&1
  echo "=== $(date -u +%FT%TZ) done --pieces $n" >>"$logs/bg.log"
done
