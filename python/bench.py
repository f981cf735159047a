"""Probes per second from Python: single calls and batched.

    python python/bench.py DIR [N]

DIR holds complete tables (e.g. 5 pieces: `egdb build --pieces 5 --dir /tmp/egdb5`). N random
positions (default 200000) with at most DIR's piece count, both sides to move, are probed:
- probe(fen) in a Python loop (one call per position: FEN parsing + probe + GIL release);
- probe_many(fens) (one call, parallel on all cores);
- probe_bitboards(...) on numpy arrays (one call, parallel);
each once cold (fresh Tablebase, blocks read from disk) and once warm (cache filled).
"""

import os
import random
import sys
import time

import numpy as np

import checkers_egdb


def random_fens(n, max_pieces, seed=1):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        squares = rng.sample(range(1, 33), rng.randint(2, max_pieces))
        black, white, ok = [], [], True
        for s in squares:
            is_black = rng.random() < 0.5
            king = rng.random() < 1 / 3
            if not king and ((is_black and s >= 29) or (not is_black and s <= 4)):
                ok = False
                break
            (black if is_black else white).append(("K" if king else "") + str(s))
        if ok:
            out.append(f"{rng.choice('BW')}:W{','.join(white)}:B{','.join(black)}")
    return out


def rate(label, n, seconds):
    print(f"{label:<40} {n / seconds:>14,.0f} probes/s  ({n} in {seconds:.3f} s)")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    pieces = checkers_egdb.Tablebase(d).max_pieces
    fens = random_fens(n, pieces)
    boards = np.array([checkers_egdb.parse_fen(f) for f in fens], dtype=np.uint32)
    b, w, k, s = (boards[:, i].copy() for i in range(4))
    print(f"{n} random positions of 2-{pieces} pieces, {os.cpu_count()} CPUs, "
          f"checkers_egdb {checkers_egdb.__version__}")
    for warm in (False, True):
        state = "warm" if warm else "cold"
        tb = checkers_egdb.Tablebase(d, cache_mb=1024)
        if warm:
            tb.probe_many(fens)
        t = time.perf_counter()
        single = [tb.probe(f) for f in fens]
        rate(f"probe(fen) loop, {state}", n, time.perf_counter() - t)

        tb = checkers_egdb.Tablebase(d, cache_mb=1024)
        if warm:
            tb.probe_many(fens)
        t = time.perf_counter()
        many = tb.probe_many(fens)
        rate(f"probe_many(fens), {state}", n, time.perf_counter() - t)

        tb = checkers_egdb.Tablebase(d, cache_mb=1024)
        if warm:
            tb.probe_many(fens)
        t = time.perf_counter()
        arr = tb.probe_bitboards(b, w, k, s)
        rate(f"probe_bitboards(arrays), {state}", n, time.perf_counter() - t)
        code = {"win": 1, "draw": 0, "loss": -1}
        assert single == many and arr.tolist() == [code[v] for v in many]


if __name__ == "__main__":
    main()
