#!/usr/bin/env python3
"""The top-level module dependency graph of src/ (docs/architecture.md, "Layers").

Usage: scripts/module_deps.py [SRC_DIR]   (default src)

An edge A -> B: a file of module A (src/A.rs or src/A/...) names `crate::B` in code (comments,
doc comments and a trailing `#[cfg(test)] mod tests` are stripped). src/lib.rs, src/main.rs and
src/cli/ (the binary, on top) are left out. Prints the edges, then the cycles (strongly
connected components of more than one module); exits 1 when there is one."""
import os, re, sys, itertools
root = sys.argv[1] if len(sys.argv) > 1 else 'src'
mods = {}
for dp, dn, fn in os.walk(root):
    for f in fn:
        if not f.endswith('.rs'): continue
        p = os.path.join(dp, f); rel = os.path.relpath(p, root)
        top = rel.split('/')[0].removesuffix('.rs')
        if top in ('lib', 'main', 'cli'): continue
        mods.setdefault(top, []).append(p)
edges = {}
for top, files in mods.items():
    for p in files:
        src = open(p).read()
        src = re.sub(r'//[^\n]*', '', src)
        src = re.sub(r'/\*.*?\*/', '', src, flags=re.S)
        # strip #[cfg(test)] mod tests { ... } at end: crude: cut from '#[cfg(test)]\nmod tests'
        i = src.find('#[cfg(test)]\nmod tests')
        if i >= 0: src = src[:i]
        for m in re.finditer(r'crate::([a-z_0-9]+)', src):
            b = m.group(1)
            if b != top and b in mods: edges.setdefault(top, set()).add(b)
        # use crate::{a, b::c}
        for m in re.finditer(r'crate::\{([^}]*)\}', src):
            for b in re.findall(r'(?:^|[,{\s])([a-z_0-9]+)', m.group(1)):
                if b != top and b in mods: edges.setdefault(top, set()).add(b)
for a in sorted(mods):
    print(f"{a:10} -> {', '.join(sorted(edges.get(a, ())))}")
# cycles (Tarjan SCC)
idx = {}; low = {}; st = []; on = set(); sccs = []; c = [0]
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in edges.get(v, ()):
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: sccs.append(comp)
for v in sorted(mods):
    if v not in idx: sc(v)
print("cycles:", sccs or "none")
sys.exit(1 if sccs else 0)
