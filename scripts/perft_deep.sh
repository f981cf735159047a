#!/usr/bin/env bash
# Deep perft check from the start position against the published numbers (M. Fierz, A. Bik):
# depth 12 and 13, capture paths counted and with duplicate captures merged (--unique).
# Takes about a minute on 2 cores. Exit status 1 on any mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin="${CARGO_TARGET_DIR:-target}/release/egdb"
fail=0
check() { # depth, flags, expected
    local got
    got=$("$bin" perft --only $2 "$1" | cut -f2)
    if [ "$got" = "$3" ]; then echo "ok   depth $1 $2: $got"; else echo "FAIL depth $1 $2: got $got, want $3"; fail=1; fi
}
check 12 "" 388623673
check 12 --unique 388617999
check 13 "" 1766623630
check 13 --unique 1766564893
exit $fail
