#!/usr/bin/env bash
# Profile `egdb build` with perf (call graphs through DWARF) and group the samples by step of
# the generator: initial pass (move generation, dependency lookups of exits and of capture
# positions), propagation (un-moves, ranking, state updates, scanning), collect, compression.
# This is the profile that guided the build-speed work of issue 11.
#
#   scripts/profile_build.sh DIR PIECES [SLICE]
#
# DIR is built into (fresh for a whole build; for SLICE it must hold the unit's dependencies,
# and the unit's own files are rebuilt: delete them first). Needs perf and python3. Prints one
# line per category: share of the samples, category.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 DIR PIECES [SLICE]" >&2; exit 2; }
dir=$1; pieces=$2; slice=${3:-}
cargo build --release --quiet
egdb="${CARGO_TARGET_DIR:-target}/release/egdb"
data=$(mktemp /tmp/egdb-perf.XXXXXX)
trap 'rm -f "$data" "$data.txt"' EXIT
args=(build --pieces "$pieces" --dir "$dir")
[ -n "$slice" ] && args+=(--slice "$slice")
perf record -q -o "$data" -F 199 --call-graph dwarf,16384 "$egdb" "${args[@]}" >/dev/null
perf script -i "$data" -F comm,tid,ip,sym 2>/dev/null >"$data.txt"
python3 - "$data.txt" <<'EOF'
import collections, re, sys
stacks, cur = [], []
for line in open(sys.argv[1], errors="replace"):
    if not line.strip():
        if cur:
            stacks.append(cur)
        cur = []
    elif line[0] not in " \t":
        cur = [line.strip()]
    else:
        cur.append(re.sub(r"^[0-9a-f]+ ", "", line.strip()))
if cur:
    stacks.append(cur)
def has(st, s):
    return any(s in f for f in st)
def category(st):
    if has(st, "ZSTD"):
        return "write: zstd compression"
    if has(st, "write::encode"):
        return "write: encoding (other)"
    if has(st, "initial_pass"):
        if has(st, "resolve_with"):
            kind = "an exit" if has(st, "initial_state::{{closure}}") else "a capture position"
            return f"initial: dependency lookup of {kind}"
        if has(st, "initial_state::{{closure}}"):
            return "initial: successor loop"
        return "initial: move generation, index walk"
    if has(st, "propagate_ply"):
        if has(st, "UpdateBatch::flush"):
            return "propagate: state updates (atomics)"
        if has(st, "king_offset") or has(st, "men_base"):
            return "propagate: ranking king un-moves"
        if has(st, "SliceIndex::rank"):
            return "propagate: ranking man un-moves"
        if has(st, "for_each_predecessor"):
            return "propagate: un-move generation, batching"
        if has(st, "unrank") or has(st, "visit"):
            return "propagate: unranking resolved positions"
        return "propagate: scanning for tagged positions"
    if has(st, "solve::collect"):
        return "collect"
    if has(st, "DecodedTables::load"):
        return "dependencies: decoding files"
    return "other"
n = len(stacks)
cats = collections.Counter(category(st) for st in stacks)
print(f"{n} samples")
for c, k in sorted(cats.items()):
    print(f"{100 * k / n:6.2f}%  {c}")
EOF
