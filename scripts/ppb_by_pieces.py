#!/usr/bin/env python3
# Usage: python3 scripts/ppb_by_pieces.py DIR (docs/format.md, "Codec 7").
# Positions per byte of the .egdb files of DIR, per piece count, and for the 6-piece files:
# the training sample (every 10th in name order, from the first), the files not in it (held
# out), and cm32e's held-out sample (every 10th from the 6th: OFFSET=5).
import os, struct, sys
d = sys.argv[1]
names = sorted(n for n in os.listdir(d) if n.endswith('.egdb'))
by = {}
six = []
for n in names:
    k = sum(int(c) for c in n[:4])
    with open(os.path.join(d, n), 'rb') as f:
        h = f.read(64)
    pos = struct.unpack_from('<Q', h, 24)[0]
    b = os.path.getsize(os.path.join(d, n))
    t = by.setdefault(k, [0, 0, 0])
    t[0] += 1; t[1] += pos; t[2] += b
    if k == 6:
        six.append((pos, b))
tot = [0, 0]
for k in sorted(by):
    f, p, b = by[k]
    tot[0] += p; tot[1] += b
    print(f"{k} pieces: {f} files, {p} positions, {b} bytes, {p/b:.2f} positions/byte")
print(f"all: {tot[0]} positions, {tot[1]} bytes, {tot[0]/tot[1]:.2f}")
def ppb(sel):
    p = sum(x[0] for x in sel); b = sum(x[1] for x in sel); return f"{len(sel)} files {p} positions {b} bytes {p/b:.2f}"
if six:
    print("6-piece training sample (i % 10 == 0):", ppb([x for i, x in enumerate(six) if i % 10 == 0]))
    print("6-piece held out (i % 10 != 0):", ppb([x for i, x in enumerate(six) if i % 10 != 0]))
    print("6-piece cm32e held-out sample (i % 10 == 5):", ppb([x for i, x in enumerate(six) if i % 10 == 5]))
