#!/usr/bin/env python3
"""Map TB pcs to kernel functions (System.map text symbols) and sum instructions.

usage: funcs.py SYSTEM_MAP TBCOUNT [--cpu N]   -> prints TSV: insns execs entries function
  entries = executions of a TB starting exactly at the function's address (~ calls).
"""
import bisect
import collections
import sys

KSTART = 0xffffffff80000000


def load_map(path):
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 3 or p[1] not in "tTwW":
                continue
            syms.append((int(p[0], 16), p[2]))
    syms.sort()
    addrs = [a for a, _ in syms]
    names = [n for _, n in syms]
    etext = next((a for a, n in syms if n == "_etext"), None)
    return addrs, names


class Symbolizer:
    def __init__(self, mappath):
        self.addrs, self.names = load_map(mappath)
        self.cache = {}

    def __call__(self, pc):
        r = self.cache.get(pc)
        if r is None:
            if pc < KSTART:
                r = ("[user]", False)
            else:
                i = bisect.bisect_right(self.addrs, pc) - 1
                if i < 0:
                    r = ("[unknown]", False)
                else:
                    r = (self.names[i], self.addrs[i] == pc)
            self.cache[pc] = r
        return r


def read_tbcount(path, cpu=None):
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            c, pc, e, n = line.split("\t")
            c = int(c)
            if cpu is not None and c != cpu:
                continue
            yield c, int(pc, 16), int(e), int(n)


def per_function(mappath, tbpath, cpu=None):
    sym = Symbolizer(mappath)
    insns = collections.Counter()
    execs = collections.Counter()
    entries = collections.Counter()
    for c, pc, e, n in read_tbcount(tbpath, cpu):
        name, at_entry = sym(pc)
        insns[name] += n
        execs[name] += e
        if at_entry:
            entries[name] += e
    return insns, execs, entries


if __name__ == "__main__":
    cpu = None
    if "--cpu" in sys.argv:
        i = sys.argv.index("--cpu")
        cpu = int(sys.argv[i + 1])
        del sys.argv[i:i + 2]
    ins, ex, ent = per_function(sys.argv[1], sys.argv[2], cpu)
    for name, n in ins.most_common():
        print(f"{n}\t{ex[name]}\t{ent[name]}\t{name}")
