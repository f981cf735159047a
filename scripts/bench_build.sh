#!/usr/bin/env bash
# Benchmark `egdb build`: wall time, positions/s, peak RSS and positions/byte for each piece
# count given (default: 5), each built from scratch into a fresh directory. Optionally verify.
#
#   scripts/bench_build.sh [-t THREADS] [-d BASEDIR] [--verify] [PIECES...]
#
# Example: scripts/bench_build.sh 5 6   (6 pieces: ~2.7e9 positions, about 4 min on 2 idle cores)
# Each run prints the builder's own summary, then one line:
#   pieces=N wall_s=... positions=... positions_per_s=... peak_rss_mib=... bytes=... positions_per_byte=...
set -euo pipefail
cd "$(dirname "$0")/.."
threads=""
base="${TMPDIR:-/tmp}/egdb-bench"
verify=0
pieces=()
while [ $# -gt 0 ]; do
  case "$1" in
    -t) threads="--threads $2"; shift 2 ;;
    -d) base="$2"; shift 2 ;;
    --verify) verify=1; shift ;;
    *) pieces+=("$1"); shift ;;
  esac
done
[ ${#pieces[@]} -gt 0 ] || pieces=(5)
cargo build --release --quiet
egdb="${CARGO_TARGET_DIR:-target}/release/egdb"
for n in "${pieces[@]}"; do
  dir="$base/p$n"
  rm -rf "$dir"
  log=$(mktemp)
  # shellcheck disable=SC2086
  /usr/bin/time -f "wall_s=%e peak_rss_kib=%M" -o "$log.time" "$egdb" build --pieces "$n" --dir "$dir" $threads | tee "$log"
  wall=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$log.time")
  rss=$(sed -n 's/.*peak_rss_kib=\([0-9]*\).*/\1/p' "$log.time")
  positions=$(awk '/^positions/ {print $2}' "$log")
  bytes=$("$egdb" info --dir "$dir" | awk 'NR>1 {b+=$5} END {print b}')
  echo "pieces=$n wall_s=$wall positions=$positions positions_per_s=$(awk -v p="$positions" -v w="$wall" 'BEGIN{printf "%.0f", p/w}') peak_rss_mib=$((rss / 1024)) bytes=$bytes positions_per_byte=$(awk -v p="$positions" -v b="$bytes" 'BEGIN{printf "%.1f", p/b}')"
  echo "per piece count (pieces slices missing positions bytes positions/byte):"
  "$egdb" info --dir "$dir"
  if [ "$verify" = 1 ]; then
    /usr/bin/time -f "verify wall_s=%e peak_rss_kib=%M" "$egdb" verify --dir "$dir" --quiet $threads
  fi
  rm -f "$log" "$log.time"
done
