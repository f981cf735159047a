#!/usr/bin/env bash
# Start, or resume, the long background build of issue 30 (scripts/build_bg.sh) in one command,
# on a machine that may be fresh: builds this checkout's `egdb` (release), copies it to
# BINDIR/egdb-<commit> (a later rebuild of the checkout must not replace the program under a
# run of many hours), and starts build_bg.sh detached from the terminal, at nice 19 in its own
# autogroup (nice alone does not lower a setsid process's share), so that the machine stays
# usable. Does nothing when a build_bg.sh of the same table directory is already running.
# Complete units in DIR are kept; the unit that was being solved when a run stopped is solved
# again (its files are written atomically).
#
#   scripts/build_bg_start.sh [--dir DIR] [--logs LOGDIR] [--bindir BINDIR] [--memory8 SIZE] [--pieces "7 8"]
#
# Defaults: --dir /work/tables/egdb --logs /work/notes/bg --bindir /work/bin --memory8 19G
# --pieces "7 8". Progress: `egdb info --dir DIR | grep ^8`, and LOGDIR/bg.log (one "built"
# line a unit); per piece count, /usr/bin/time -v figures in LOGDIR/time<N>.txt.
set -euo pipefail
dir="/work/tables/egdb"
logs="/work/notes/bg"
bindir="/work/bin"
mem8="19G"
pieces="7 8"
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --logs) logs="$2"; shift 2 ;;
    --bindir) bindir="$2"; shift 2 ;;
    --memory8) mem8="$2"; shift 2 ;;
    --pieces) pieces="$2"; shift 2 ;;
    *) echo "build_bg_start.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
# Paths as the caller gave them, made absolute before moving to the checkout.
dir=$(realpath -m -- "$dir"); logs=$(realpath -m -- "$logs"); bindir=$(realpath -m -- "$bindir")
cd "$(dirname "$0")/.."
running() {
  # A build_bg.sh of this directory, or any `egdb build` holding the directory's lock.
  pgrep -f -- "build_bg.sh .*--dir $dir( |/|$)" >/dev/null && return 0
  [ -e "$dir/.egdb-build.lock" ] && ! flock -n "$dir/.egdb-build.lock" true 2>/dev/null && return 0
  return 1
}
if running; then
  echo "build_bg_start.sh: a build of $dir is already running (nothing started):" >&2
  pgrep -af -- "build_bg.sh .*--dir $dir|egdb.* build " >&2 || true
  exit 0
fi
cargo build --release --quiet --bin egdb
rev=$(git rev-parse --short HEAD)
# A binary of uncommitted sources is not the commit's: named apart, and always copied.
git diff --quiet HEAD -- src Cargo.toml Cargo.lock 2>/dev/null || rev="$rev-dirty-$(date -u +%Y%m%dT%H%M%S)"
mkdir -p "$bindir" "$dir" "$logs"
bin="$bindir/egdb-$rev"
if [ ! -x "$bin" ]; then
  cp target/release/egdb "$bin.tmp"
  mv "$bin.tmp" "$bin"
fi
setsid bash -c 'echo 19 > /proc/$$/autogroup 2>/dev/null || true; exec nice -n 19 scripts/build_bg.sh --binary "$0" --dir "$1" --logs "$2" --memory8 "$3" --pieces "$4"' \
  "$bin" "$dir" "$logs" "$mem8" "$pieces" </dev/null >/dev/null 2>&1 &
sleep 1
echo "build_bg_start.sh: started $bin on $dir (pieces $pieces, --memory $mem8 at 8 pieces); log $logs/bg.log"
pgrep -af -- "build_bg.sh .*--dir $dir( |/|$)" || echo "build_bg_start.sh: not running any more (finished or failed at once); see the end of $logs/bg.log" >&2
