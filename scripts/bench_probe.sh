#!/bin/sh
# Probe benchmark on the 5-piece tables: builds them into $EGDB_DIR (default /tmp/egdb5) when
# missing or unreadable by the current code (about 40 s on 2 cores), then runs
# examples/bench_probe.rs (cold first probe, handle memory, warm single-thread median/p99 for
# Black and White to move, probe_wld_cached, 2 threads, no-cache decode cost).
# Usage: scripts/bench_probe.sh [N_POSITIONS [pread|mmap]]   (default 100000 of each side to
# move, positioned reads; run both to compare file access)
# Numbers on a shared machine are noisy: compare versions back to back in one session.
set -e
cd "$(dirname "$0")/.."
DIR="${EGDB_DIR:-/tmp/egdb5}"
cargo build --release --quiet --bin egdb --example bench_probe
BIN="${CARGO_TARGET_DIR:-target}/release"
# A stale directory (older format) fails to probe: rebuild it then.
if ! [ -d "$DIR" ] || ! echo "W:WK19,K23:BK28,12,K1" | "$BIN/egdb" probe --dir "$DIR" >/dev/null 2>&1; then
    "$BIN/egdb" build --pieces 5 --dir "$DIR"
fi
exec "$BIN/examples/bench_probe" "$DIR" "$@"
