#!/usr/bin/env bash
# Deep perft of the 8x8 draughts variants from the start position (`egdb perft --rules NAME`,
# the slow path generator of src/rules/paths.rs) against the published counts, depths 9 to
# MAX (default 11; 12 and 13 where published take minutes to hours on 2 cores), capture paths
# counted apart and merged (--unique). Exit status 1 on any mismatch.
#
# Sources (numbers only), as collected in R. Halbersma's dctl library
# (test/src/algo/traversal/initial/board_08x08.cpp):
#   russian, brazilian, pool: "Standard validation generator moves" thread, shashki.com forum
#     (http://shashki.com/PNphpBB2-viewtopic-t-627-start-126.html, -78, -57);
#   italian, spanish, czech: R. Halbersma, "Perft for all recognized draughts variants",
#     FMJD forum, 2010 (http://damforum.nl/bb3/viewtopic.php?f=53&t=2822).
# Depths 1-8 are in tests/variants_perft.rs.
#
# Usage: scripts/perft_variants.sh [MAX_DEPTH]
set -euo pipefail
cd "$(dirname "$0")/.."
max="${1:-11}"
cargo build --release --quiet
bin="${CARGO_TARGET_DIR:-target}/release/egdb"
fail=0
# check RULES DEPTH PATHS UNIQUE
check() {
    [ "$2" -le "$max" ] || return 0
    local got
    got=$("$bin" perft --rules "$1" --only "$2" | cut -f2)
    if [ "$got" = "$3" ]; then echo "ok   $1 depth $2: $got"; else echo "FAIL $1 depth $2: got $got, want $3"; fail=1; fi
    got=$("$bin" perft --rules "$1" --only --unique "$2" | cut -f2)
    if [ "$got" = "$4" ]; then echo "ok   $1 depth $2 --unique: $got"; else echo "FAIL $1 depth $2 --unique: got $got, want $4"; fail=1; fi
}
check russian 9 4570667 4570586
check russian 10 22450628 22444032
check russian 11 110961169 110917189
check russian 12 545059387 544770444
check russian 13 2675994747 2673979569
check brazilian 9 4431847 4431766
check brazilian 10 21566606 21560022
check brazilian 11 105534946 105491257
check brazilian 12 512171742 511882477
check brazilian 13 2483592238 2481546396
check pool 9 4570615 4570534
check pool 10 22442551 22435955
check pool 11 110877932 110833952
check pool 12 544300084 544005148
check pool 13 2670481140 2668385616
check italian 9 3860875 3860875
check italian 10 17761384 17761384
check italian 11 81647058 81647058
check italian 12 367917147 367911475
check italian 13 1655269811 1655211086
check spanish 9 3860866 3860866
check spanish 10 17743464 17743464
check spanish 11 81383200 81383200
check spanish 12 365734003 365728331
check spanish 13 1638016958 1637958247
check czech 9 3963671 3963671
check czech 10 18368918 18368918
check czech 11 84967210 84967210
check czech 12 386267783 386262109
check czech 13 1749766090 1749707352
# Giveaway has English moves: the English counts (M. Fierz, A. Bik).
check giveaway 9 3963680 3963680
check giveaway 10 18391564 18391564
check giveaway 11 85242128 85242128
check giveaway 12 388623673 388617999
exit $fail
