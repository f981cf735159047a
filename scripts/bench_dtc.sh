#!/bin/sh
# Distance-to-conversion benchmarks on the 5-piece tables: builds WLD alone and WLD+DTC back to
# back into fresh directories (the build-time ratio), then runs examples/bench_dtc.rs (positions
# per byte of the .dtc files, warm probe_dtc latency, `line` on the longest 5-piece win).
# Usage: scripts/bench_dtc.sh [PIECES]   (default 5; do not go beyond 6 on a small machine)
# Numbers on a shared machine are noisy: compare back to back in one session.
set -e
cd "$(dirname "$0")/.."
P="${1:-5}"
W="${TMPDIR:-/tmp}/egdb-bench-wld-$P"
D="${TMPDIR:-/tmp}/egdb-bench-dtc-$P"
cargo build --release --quiet --bin egdb --example bench_dtc
BIN="${CARGO_TARGET_DIR:-target}/release"
rm -rf "$W" "$D"
echo "== WLD only"; "$BIN/egdb" build --pieces "$P" --dir "$W" | grep -E "^(time|bytes)"
echo "== WLD + DTC"; "$BIN/egdb" build --pieces "$P" --dir "$D" --dtc | grep -E "^(time|bytes|distances)"
echo "== DTC only, on the WLD directory"; "$BIN/egdb" build --pieces "$P" --dir "$W" --dtc | grep -E "^(time|distances)"
"$BIN/examples/bench_dtc" "$D"
rm -rf "$W"
