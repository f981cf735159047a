#!/usr/bin/env bash
# Benchmark: the CPU time of `egdb verify` on ONE unit (a slice and its partner), alone, for
# each binary given, in turn (issue 30: the 8-piece verification's speed, docs/build-profile.md).
#
#   scripts/bench_verify_unit.sh --tables DIR --slice NAME [--work WORK] [--threads T] [--rounds R] EGDB...
#
# DIR holds the tables of fewer pieces than the unit and the unit's own files and its
# dependencies of the same piece count (the units `egdb plan --json` lists in "dep_units",
# and theirs, and so on), for example the
# background build's directory. WORK (default: a new `mktemp -d`) gets `rig/`, hard links to
# exactly those files (so DIR must be on the same file system), and a journal that records
# every file's checksum and the dependencies of the unit's piece count as verified, so that
# `egdb verify --pieces N --partial --journal` re-derives the unit's two slices and nothing
# else. This is a timing, not a verification: the dependencies are not checked here (they
# are where the real journal says so). Each binary then runs R times (default 2), the
# binaries alternating, each run from a fresh copy of that journal:
#
#   EGDB verify --pieces N --partial --dir WORK/rig --journal J --threads T --memory 4G --quiet
#
# (T default 1), and a line per run is printed: binary, user CPU (s), wall (s), peak RSS (KB),
# and verify's own `ok:` line (positions and rate). Compare user CPU, in one sitting.
#
# Example (main against a candidate, the unit 0116-n3/1601-3n, 147,256,200 positions):
#   scripts/bench_verify_unit.sh --tables /work/tables/egdb --slice 0116-n3 /work/bin/egdb-ed56e70 target/release/egdb
set -euo pipefail
tables="" slice="" work="" threads=1 rounds=2
bins=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tables) tables="$2"; shift 2 ;;
    --slice) slice="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -*) echo "bench_verify_unit.sh: unknown option $1" >&2; exit 2 ;;
    *) bins+=("$(realpath -- "$1")"); shift ;;
  esac
done
if [ -z "$tables" ] || [ -z "$slice" ] || [ ${#bins[@]} -eq 0 ]; then
  echo "usage: scripts/bench_verify_unit.sh --tables DIR --slice NAME [--work WORK] [--threads T] [--rounds R] EGDB..." >&2
  exit 2
fi
case "$slice" in
  [0-9][0-9][0-9][0-9]-[0-9n][0-9n]) ;;
  *) echo "bench_verify_unit.sh: --slice $slice: expected a slice name like 0116-n3" >&2; exit 2 ;;
esac
[ -d "$tables" ] || { echo "bench_verify_unit.sh: --tables $tables: no such directory" >&2; exit 2; }
pieces() { local m=${1%%-*}; echo $(( ${m:0:1} + ${m:1:1} + ${m:2:1} + ${m:3:1} )); }
n=$(pieces "$slice")
[ -n "$work" ] || work=$(mktemp -d)
mkdir -p "$work"
rig="$work/rig"
if [ -e "$rig" ]; then echo "bench_verify_unit.sh: $rig exists; give another --work" >&2; exit 2; fi
mkdir "$rig"
egdb=${bins[0]}
# The unit, and the units of the same piece count it reads directly or through them (`egdb
# verify --partial` wants every slice that a present slice reads), from the plan.
read -r unit deps < <("$egdb" plan --pieces "$n" --json | python3 -c '
import json, sys
s = sys.argv[1]
units = {u["id"]: u for u in json.load(sys.stdin)["units"]}
mine = [u for u in units.values() if s in u["slices"]]
if not mine:
    sys.exit("bench_verify_unit.sh: no unit of the plan holds " + s)
seen, todo = set(), list(mine[0]["dep_units"])
while todo:
    i = todo.pop()
    if i not in seen:
        seen.add(i)
        todo.extend(units[i]["dep_units"])
deps = sorted(x for i in seen for x in units[i]["slices"])
print(",".join(mine[0]["slices"]), ",".join(deps))
' "$slice")
for f in "$tables"/*.egdb; do
  b=$(basename "$f" .egdb)
  if [ "$(pieces "$b")" -lt "$n" ]; then ln "$f" "$rig/"; fi
done
for s in ${unit//,/ } ${deps//,/ }; do
  [ -f "$tables/$s.egdb" ] || { echo "bench_verify_unit.sh: $tables/$s.egdb is missing (the unit or a dependency)" >&2; exit 1; }
  ln "$tables/$s.egdb" "$rig/"
done
journal0="$work/journal0"
{
  echo "egdb-verify-journal 2"
  for f in "$rig"/*.egdb; do
    # The stored xxh64 checksum: the file's last 8 bytes read as a little-endian u64, in 16
    # hex digits (what the journal records).
    echo "file $(basename "$f" .egdb) $(tail -c 8 "$f" | od -An -tx8 -v --endian=little | tr -d ' \n')"
  done
  "$egdb" info --dir "$rig" --slices | awk -F'\t' -v deps=",$deps," 'index(deps, "," $1 ",") { print "wld", $1, $2 }'
} > "$journal0"
ndeps=$(echo "${deps//,/ }" | wc -w)
echo "unit $unit ($n pieces); $ndeps slices of $n pieces it reads, recorded as verified; rig $rig"
for r in $(seq "$rounds"); do
  for b in "${bins[@]}"; do
    j="$work/journal.run"
    rm -f "$j" "$j.lock"
    cp "$journal0" "$j"
    out=$(/usr/bin/time -f 'TIME %U %e %M' "$b" verify --pieces "$n" --partial --dir "$rig" --journal "$j" \
      --threads "$threads" --memory 4G --quiet 2>&1) || { echo "$out" >&2; echo "bench_verify_unit.sh: $b failed" >&2; exit 1; }
    t=$(echo "$out" | awk '/^TIME/ {print "user " $2 " s, wall " $3 " s, peak RSS " $4 " KB"}')
    okl=$(echo "$out" | grep -m1 '^ok: 2 slices' || echo "$out" | grep -m1 '^ok:')
    echo "round $r  $b  $t  $okl"
  done
done
