#!/usr/bin/env python3
"""The layer rule of libbcachefs/ (libbcachefs/LAYERS), checked two ways:

- includes: a file includes headers of its own folder or of folders below it;
- links: an object file's undefined symbols are defined in its own folder or
  below (nm of the build, when BUILD has the objects), so a call through a
  declaration in some other header is caught too;

and no module (path without .c/.h) depends on another that depends back on
it, round any loop, by includes or by links. The commands (top-level .c)
may use every layer; nothing in libbcachefs/ may use them.

    python3 tests/cli/layers.py TOP [BUILD]
Prints every violation, one line each; exits 1 when there is one.
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

top = sys.argv[1]
build = sys.argv[2] if len(sys.argv) > 2 else None
lib = os.path.join(top, 'libbcachefs')

rank = {}
for line in open(os.path.join(lib, 'LAYERS')):
    if line.strip() and not line.startswith('#'):
        rank[line.split()[0]] = len(rank)
TOP_RANK = len(rank)

bad = []


def layer_of(mod):
    """mod: path relative to top, without extension."""
    if not mod.startswith('libbcachefs/'):
        return TOP_RANK
    parts = mod.split('/')
    if len(parts) != 3 or parts[1] not in rank:
        bad.append(f'{mod}: not in a layer folder of libbcachefs/LAYERS')
        return TOP_RANK
    return rank[parts[1]]


files = []
for name in sorted(os.listdir(top)):
    if name.endswith(('.c', '.h')):
        files.append(name)
for d, _, fs in os.walk(lib):
    for f in sorted(fs):
        if f.endswith(('.c', '.h')):
            files.append(os.path.relpath(os.path.join(d, f), top))
fileset = set(files)


def mod_of(path):
    return os.path.splitext(path)[0]


inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
edges = defaultdict(dict)       # mod -> {mod: why}
for f in files:
    src = open(os.path.join(top, f), errors='replace').read()
    for h in inc_re.findall(src):
        for cand in (h, 'libbcachefs/' + h, os.path.join(os.path.dirname(f), h)):
            cand = os.path.normpath(cand)
            if cand in fileset:
                break
        else:
            continue            # a system header or a test helper
        if f.startswith('libbcachefs/') and '/' not in h:
            bad.append(f'{f}: #include "{h}": say its folder ("{os.path.dirname(cand)[12:]}/{h}")')
        a, b = mod_of(f), mod_of(cand)
        if a == b:
            continue
        edges[a].setdefault(b, f'{f} includes {h}')
        if layer_of(b) > layer_of(a):
            bad.append(f'{f}: includes {h}, a layer above its own')

if build and os.path.isdir(os.path.join(build, 'libbcachefs')):
    defs, uses = {}, defaultdict(set)
    objs = [f[:-2] + '.o' for f in files if f.endswith('.c')]
    for o in objs:
        path = os.path.join(build, o)
        if not os.path.exists(path):
            continue
        out = subprocess.run(['nm', path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBRV':
                defs[p[2]] = mod_of(o)
            elif len(p) == 2 and p[0] in 'Uw':
                uses[mod_of(o)].add(p[1])
    for a, syms in uses.items():
        for s in sorted(syms):
            b = defs.get(s)
            if b is None or b == a:
                continue
            edges[a].setdefault(b, f'{a}.c calls {s}()')
            if layer_of(b) > layer_of(a):
                bad.append(f'{a}.c: uses {s}, defined in {b}.c, a layer above')

# modules that depend on each other (Tarjan's strongly connected components)
index, low, stack, on, sccs = {}, {}, [], set(), []
sys.setrecursionlimit(100000)


def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in edges.get(v, {}):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(sorted(comp))


for v in sorted(set(edges) | {w for e in edges.values() for w in e}):
    if v not in index:
        visit(v)
for comp in sccs:
    why = [f'{edges[a][b]}' for a in comp for b in edges.get(a, {}) if b in comp]
    bad.append('cycle: ' + ' <-> '.join(comp) + ' (' + '; '.join(why) + ')')

for b in sorted(set(bad)):
    print(b)
sys.exit(1 if bad else 0)
