#!/usr/bin/env bash
# Perft speed benchmark (not a test): nodes per second at depth 11 from the start position
# (85,242,128 leaf nodes, capture paths counted, bulk counting at the last ply), on one thread
# and on all threads. For each, the best wall-clock time of $RUNS runs (default 3) is reported
# with the CPU (user) seconds of that run. Usage: scripts/bench_perft.sh [DEPTH]
set -euo pipefail
cd "$(dirname "$0")/.."
depth="${1:-11}"
runs="${RUNS:-3}"
cargo build --release --quiet
bin="${CARGO_TARGET_DIR:-target}/release/egdb"
TIMEFORMAT='%R %U'

bench() { # label, extra args...
    local label="$1"; shift
    local best="" best_user="" nodes="" t wall user
    for _ in $(seq "$runs"); do
        t=$({ time "$bin" perft --only "$@" "$depth" >/tmp/bench_perft.$$; } 2>&1)
        nodes=$(cut -f2 /tmp/bench_perft.$$)
        read -r wall user <<<"$t"
        if [ -z "$best" ] || [ "$(echo "$wall < $best" | bc -l)" = 1 ]; then
            best=$wall
            best_user=$user
        fi
    done
    rm -f /tmp/bench_perft.$$
    printf '%-12s depth %s: %s nodes in %.3f s wall (%.3f s CPU): %.1f M nodes/s\n' \
        "$label" "$depth" "$nodes" "$best" "$best_user" \
        "$(echo "$nodes / $best / 1000000" | bc -l)"
}

echo "machine: $(nproc) logical CPUs,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
bench "1 thread" --threads 1
bench "all threads" --threads "$(nproc)"
