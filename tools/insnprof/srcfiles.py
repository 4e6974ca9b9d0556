#!/usr/bin/env python3
"""Which kernel functions come from kernel/sched/fair.c.

From vmlinux's .symtab: local FUNC symbols follow the FILE symbol of their source file,
so local functions of fair.c are known exactly. Global functions carry no file: take them
from KERNEL_DIR/fair.o (`nm`) when present, else from the address range of fair.c's local
functions in .text (the linker keeps an object's .text contiguous; a global function at
the very edge of fair.o's .text may be missed).

usage: srcfiles.py KERNEL_DIR   -> prints the fair.c functions (address name), one a line
"""
import os
import subprocess
import sys


def symtab(vmlinux):
    out = subprocess.run(["readelf", "-sW", vmlinux], capture_output=True, text=True,
                         check=True).stdout
    cur = None
    for line in out.splitlines():
        p = line.split()
        if len(p) < 8 or not p[0].endswith(":"):
            continue
        typ, bind, name = p[3], p[4], p[7]
        if typ == "FILE":
            cur = name
            continue
        if typ != "FUNC":
            continue
        yield int(p[1], 16), bind, cur if bind == "LOCAL" else None, name


def fair_functions(kdir):
    """{address: name} of the functions of fair.c."""
    syms = list(symtab(os.path.join(kdir, "vmlinux")))
    fair = {a: n for a, b, f, n in syms if f == "fair.c"}
    fo = os.path.join(kdir, "fair.o")
    if os.path.exists(fo):
        out = subprocess.run(["nm", "--defined-only", fo], capture_output=True, text=True,
                             check=True).stdout
        glob = {p[2] for p in (ln.split() for ln in out.splitlines())
                if len(p) == 3 and p[1] == "T"}
        fair.update({a: n for a, b, f, n in syms if b == "GLOBAL" and n in glob})
    else:
        addrs = [a for a in fair if 0xffffffff81000000 <= a < 0xffffffff81600000]
        if addrs:
            lo, hi = min(addrs), max(addrs)
            fair.update({a: n for a, b, f, n in syms if b == "GLOBAL" and lo <= a <= hi})
    return fair


if __name__ == "__main__":
    for a, n in sorted(fair_functions(sys.argv[1]).items()):
        print(f"{a:x} {n}")
