#!/bin/bash
# Whole units against units split over the ranks (issue 31), `egdb build --mpi --pieces P`
# with 1, 2 and 3 ranks on this machine; every run's files compared with the first run's
# (`cmp`), wall and CPU time (user + sys, all ranks) from /usr/bin/time.
#
# Usage: scripts/bench_split.sh [PIECES] [WORKDIR]     (default 5, a temporary directory)
#        ONLY="r3 r3big" scripts/bench_split.sh 5 DIR   (only those runs; r1, the reference,
#        must then be in DIR from an earlier run)
# Needs `cargo build --release --features mpi` and Open MPI's mpirun (docs/mpi.md).
set -euo pipefail
P=${1:-5}
W=${2:-$(mktemp -d)}
EGDB=${EGDB:-target/release/egdb}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
run() { # name ranks threads extra...
    local name=$1 n=$2 t=$3; shift 3
    if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return; fi
    rm -rf "$W/$name"
    local load; load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "%e %U %S" -o "$W/$name.time" \
        mpirun -n "$n" --oversubscribe --bind-to none "$EGDB" build --mpi --quiet \
        --pieces "$P" --threads "$t" --dir "$W/$name" "$@" > /dev/null
    read -r wall user sys < "$W/$name.time"
    local same=reference
    if [ "$name" != r1 ]; then
        same=$(diff -rq -x .egdb-build.lock "$W/r1" "$W/$name" > /dev/null && echo identical || echo DIFFERENT)
    fi
    printf '%-10s ranks %s threads %s  wall %7.1f s  cpu %7.1f s  load %s  files %s\n' \
        "$name" "$n" "$t" "$wall" "$(echo "$user + $sys" | bc)" "$load" "$same"
}
run r1 1 2
run r2 2 1
run r2split 2 1 --split-above 0
run r3 3 1
run r3split 3 1 --split-above 0
# Only the large units split (default: the units of more than a million positions; SPLIT=N sets it).
run r2big 2 1 --split-above "${SPLIT:-1000000}"
run r3big 3 1 --split-above "${SPLIT:-1000000}"
