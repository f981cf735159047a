#!/usr/bin/env bash
# The variants' tables against the independent forward solver on every position of at most
# 4 pieces (giveaway, Italian, Russian, Brazilian; values and distances to conversion): the
# ignored test of tests/variants_solve.rs (the default suite covers 3 pieces). About 4
# CPU-minutes and 4.7 GB; run it after any change to the variants' rules, the builder or the
# probe (.ci/run ran it until 2026-12-06 and no longer does, to keep CI under 25 minutes).
#
#   scripts/variants_solve4.sh
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --release --test variants_solve -- --ignored
