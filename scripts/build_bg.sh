#!/usr/bin/env bash
# The long build of issue 30: all of at most 7 pieces, then all of at most 8, into one
# directory, at the lowest priority, resumable per unit (rerun the same command after a kill,
# a reboot or the end of a session: complete units are kept, the interrupted one is solved
# again). Each piece count's run is timed by /usr/bin/time -v (wall, CPU, peak RSS), appended
# to LOGDIR/time<N>.txt; the build's own lines go to LOGDIR/bg.log.
#
#   scripts/build_bg.sh --start [--bindir BINDIR] [--dir DIR] [--logs LOGDIR] [--memory8 SIZE] [--pieces "7 8"] [--no-verify]
#   scripts/build_bg.sh [--binary EGDB] [--dir DIR] [--logs LOGDIR] [--memory8 SIZE] [--pieces "7 8"] [--no-verify]
#
# With --start (the usual way, on a fresh or a used machine): builds this checkout's `egdb`
# (release), copies it to BINDIR/egdb-<commit> (default /work/bin; a later rebuild of the
# checkout must not replace the program under a run of many hours; a binary of uncommitted
# sources gets a name of its own), and runs the second form detached from the terminal, at
# nice 19 in its own autogroup (nice alone does not lower a setsid process's share here), so
# that the machine stays usable. Does nothing when a build of DIR is already running.
# Progress: `egdb info --dir DIR | grep ^8`, LOGDIR/bg.log (one "built" line a unit).
#
# After the builds, unless --no-verify: `egdb verify` of the largest piece count N built, with
# the journal LOGDIR/verifyN.journal (resumable like the build: rerun the same command), only
# the N-piece slices (`--pieces N`) when every file of fewer pieces is the one listed in
# docs/stats/manifest-(N-1).txt (verified where that manifest was made), else every slice;
# timed into LOGDIR/time_verifyN.txt, its lines in LOGDIR/bg.log. A fresh machine's journal
# starts from docs/stats/verify-N-partial.journal when that exists.
#
# Defaults: --dir /work/tables/egdb --logs /work/notes/bg --memory8 19G --pieces "7 8" (at most
# 7 pieces under --memory 12G). Files are byte-identical whatever binary of the same format
# finishes the run.
set -euo pipefail
# The whole script is one group, read before it runs: a checkout updated while a build of
# many hours runs cannot change what the running script does next.
{
egdb=""
dir="/work/tables/egdb"
logs="/work/notes/bg"
bindir="/work/bin"
mem8="19G"
pieces="7 8"
start=0
verify=1
while [ $# -gt 0 ]; do
  case "$1" in
    --start) start=1; shift ;;
    --binary) egdb="$2"; shift 2 ;;
    --bindir) bindir="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --logs) logs="$2"; shift 2 ;;
    --memory8) mem8="$2"; shift 2 ;;
    --pieces) pieces="$2"; shift 2 ;;
    --no-verify) verify=0; shift ;;
    *) echo "build_bg.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
# Paths as the caller gave them, made absolute before moving to the checkout.
dir=$(realpath -m -- "$dir"); logs=$(realpath -m -- "$logs"); bindir=$(realpath -m -- "$bindir")
[ -n "$egdb" ] && egdb=$(realpath -m -- "$egdb")
cd "$(dirname "$0")/.."
if [ "$start" = 1 ]; then
  running() {
    # Another build_bg.sh of this directory, or any `egdb build` holding its lock.
    # (Not this script itself, whose command line also names the directory.)
    pgrep -f -- "build_bg.sh .*--dir $dir( |/|$)" | grep -qvx "$$" && return 0
    [ -e "$dir/.egdb-build.lock" ] && ! flock -n "$dir/.egdb-build.lock" true 2>/dev/null && return 0
    return 1
  }
  if running; then
    echo "build_bg.sh: a build of $dir is already running (nothing started):" >&2
    pgrep -af -- "build_bg.sh .*--dir $dir|egdb.* build " >&2 || true
    exit 0
  fi
  if [ -z "$egdb" ]; then
    cargo build --release --quiet --bin egdb
    rev=$(git rev-parse --short HEAD)
    git diff --quiet HEAD -- src Cargo.toml Cargo.lock 2>/dev/null || rev="$rev-dirty-$(date -u +%Y%m%dT%H%M%S)"
    mkdir -p "$bindir"
    egdb="$bindir/egdb-$rev"
    if [ ! -x "$egdb" ]; then
      cp target/release/egdb "$egdb.tmp"
      mv "$egdb.tmp" "$egdb"
    fi
  fi
  mkdir -p "$dir" "$logs"
  noverify=""
  [ "$verify" = 1 ] || noverify="--no-verify"
  setsid bash -c 'echo 19 > /proc/$$/autogroup 2>/dev/null || true; exec nice -n 19 scripts/build_bg.sh --binary "$0" --dir "$1" --logs "$2" --memory8 "$3" --pieces "$4" $5' \
    "$egdb" "$dir" "$logs" "$mem8" "$pieces" "$noverify" </dev/null >/dev/null 2>&1 &
  sleep 1
  echo "build_bg.sh: started $egdb on $dir (pieces $pieces, --memory $mem8 at 8 pieces); log $logs/bg.log"
  pgrep -af -- "build_bg.sh .*--binary .*--dir $dir( |/|$)" || echo "build_bg.sh: not running any more (finished or failed at once); see the end of $logs/bg.log" >&2
  exit 0
fi
[ -n "$egdb" ] || egdb="$PWD/target/release/egdb"
mkdir -p "$dir" "$logs"
for n in $pieces; do
  mem="12G"
  [ "$n" -ge 8 ] && mem="$mem8"
  echo "=== $(date -u +%FT%TZ) start --pieces $n --memory $mem ($egdb)" >>"$logs/bg.log"
  /usr/bin/time -v -a -o "$logs/time$n.txt" \
    "$egdb" build --pieces "$n" --memory "$mem" --dir "$dir" -v >>"$logs/bg.log" 2>&1
  echo "=== $(date -u +%FT%TZ) done --pieces $n" >>"$logs/bg.log"
done
# Then the verification of the largest piece count built (resumable through its journal):
# only its slices when every file of fewer pieces is one of the published manifest's (those
# were verified where the manifest was made; the same bytes), else everything.
[ "$verify" = 1 ] || exit 0
top=0
for n in $pieces; do [ "$n" -gt "$top" ] && top=$n; done
[ "$top" -gt 0 ] || exit 0
mem="12G"
[ "$top" -ge 8 ] && mem="$mem8"
manifest="$PWD/docs/stats/manifest-$((top - 1)).txt"
only=()
if [ -f "$manifest" ] && (cd "$dir" && sha256sum -c --quiet --status "$manifest"); then
  only=(--pieces "$top")
fi
# A journal kept in git (docs/stats/verify-N-partial.journal, copied there at the end of a
# session) seeds a fresh machine's: the build is deterministic, so the files it rebuilds have
# the checksums the journal recorded and the units verified before are not verified again
# (a journal whose files differ from the directory's is started afresh by egdb verify itself).
seed="$PWD/docs/stats/verify-$top-partial.journal"
if [ ! -e "$logs/verify$top.journal" ] && [ -f "$seed" ]; then
  cp "$seed" "$logs/verify$top.journal"
  echo "=== $(date -u +%FT%TZ) verify journal seeded from $seed" >>"$logs/bg.log"
fi
echo "=== $(date -u +%FT%TZ) start verify ${only[*]:-(all)} --memory $mem ($egdb)" >>"$logs/bg.log"
/usr/bin/time -v -a -o "$logs/time_verify$top.txt" \
  "$egdb" verify --quiet "${only[@]}" --journal "$logs/verify$top.journal" --memory "$mem" --dir "$dir" >>"$logs/bg.log" 2>&1
echo "=== $(date -u +%FT%TZ) done verify" >>"$logs/bg.log"
exit 0
}
