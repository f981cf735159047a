#!/bin/sh
# Rank/unrank ns per call of the dense slice index on a large 7-piece slice (or the slice
# given as $1, e.g. 3121-34). Builds in release.
set -e
cd "$(dirname "$0")/.."
exec cargo run --release --quiet --example bench_index -- "$@"
