#!/usr/bin/env bash
# Build, verify and summarise the tables of the 8x8 variants (issue 34).
#
#   scripts/variants_build.sh [PIECES] [WORKDIR] [VARIANT...]
#
# For each variant (default: giveaway italian russian brazilian): `egdb build --rules V --dtc
# --pieces PIECES` into WORKDIR/V (wall seconds measured), `egdb verify`, then per piece count
# the positions and W/L/D counts (summed from `egdb stats`, Black-to-move and White-to-move
# rows both: every stored position counted once per side to move), the longest DTC (from
# `egdb stats --dtc`) and the bytes of the files. Prints one table per variant. VERIFY=0 skips
# `egdb verify` (at 5 pieces it re-derives every position with the slow path generator).
set -euo pipefail
cd "$(dirname "$0")/.."
pieces="${1:-4}"
work="${2:-$(mktemp -d)}"
shift $(( $# > 2 ? 2 : $# )) || true
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(giveaway italian russian brazilian)
cargo build --release --bin egdb >/dev/null
egdb="$PWD/target/release/egdb"
for v in "${variants[@]}"; do
    d="$work/$v"
    rm -rf "$d"
    t0=$(date +%s.%N)
    "$egdb" build --rules "$v" --dtc --pieces "$pieces" --dir "$d" --quiet
    t1=$(date +%s.%N)
    if [ "${VERIFY:-1}" != 0 ]; then "$egdb" verify --dir "$d" --quiet >/dev/null; fi
    t2=$(date +%s.%N)
    bytes=$(du -sb "$d" | cut -f1)
    printf '== %s: build %.1f s, verify %.1f s, %s bytes (value and distance files)\n' \
        "$v" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" "$bytes"
    echo "pieces positions(per side to move) wins losses draws (both sides to move) longest_dtc fen"
    "$egdb" stats --dir "$d" | awk 'NR > 1 {
            n = $1 + $2 + $3 + $4
            if ($5 == "B") pos[n] += $6
            w[n] += $7; l[n] += $8; dr[n] += $9
        }
        END { for (n in pos) print n, pos[n], w[n], l[n], dr[n] }' | sort -n > "$work/$v.wld"
    "$egdb" stats --dtc --dir "$d" | awk 'NR > 1 {
            n = $1 + $2 + $3 + $4
            for (i = 6; i <= NF; i += 2) if ($i ~ /^[0-9]+$/ && $i + 0 > m[n]) { m[n] = $i + 0; f[n] = $(i + 1) }
        }
        END { for (n in m) print n, m[n], f[n] }' | sort -n > "$work/$v.dtc"
    join "$work/$v.wld" "$work/$v.dtc"
done
