#!/usr/bin/env python3
"""Side-by-side comparison of profile tables (analyze.py output), rust vs stock.

Several tables per kernel are pooled, weighted by their delta_switches (the same as
differencing all their windows together).

usage: compare.py [--top N] [--md] A_LABEL A_TABLE... -- B_LABEL B_TABLE...
"""
import collections
import re
import subprocess
import sys


def load(paths):
    ins = collections.Counter()
    ent = collections.Counter()
    irq = collections.Counter()
    group = {}
    w_tot = 0
    pair_tot = []
    for p in paths:
        w = None
        with open(p) as f:
            for line in f:
                if line.startswith("#"):
                    m = re.search(r"delta_switches=(\d+)", line)
                    if m:
                        w = int(m.group(1))
                    m = re.match(r"# kernel task insns/switch per pair: (.*)", line)
                    if m:
                        pair_tot += [float(x.split("=")[1]) for x in m.group(1).split()]
                    continue
                if line.startswith("function\t"):
                    continue
                c = line.rstrip("\n").split("\t")
                n = c[0]
                group[n] = c[1]
                ins[n] += float(c[2]) * w
                ent[n] += float(c[3]) * w
                irq[n] += float(c[4]) * w
        w_tot += w
    for d in (ins, ent, irq):
        for n in d:
            d[n] /= w_tot
    return ins, ent, irq, group, pair_tot


def demangle(names):
    rs = [n for n in names if n.startswith("_R")]
    if not rs:
        return {}
    out = subprocess.run(["llvm-cxxfilt"], input="\n".join(rs), capture_output=True,
                         text=True).stdout.splitlines()
    return {a: b.replace("sched_eevdf_glue::", "") for a, b in zip(rs, out)}


def main():
    args = sys.argv[1:]
    top = 40
    md = False
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i:i + 2]
    if "--md" in args:
        md = True
        args.remove("--md")
    k = args.index("--")
    la, pa, lb, pb = args[0], args[1:k], args[k + 1], args[k + 2:]
    A, B = load(pa), load(pb)
    names = set(A[0]) | set(B[0])
    group = {**B[3], **A[3]}
    dm = demangle(names)

    def total(X, g=None, irq=False):
        d = X[2] if irq else X[0]
        if g == "rbtree":
            return sum(v for n, v in d.items() if group[n] == "other" and
                       (n.startswith("rb_") or n.startswith("__rb_")))
        return sum(v for n, v in d.items()
                   if (group[n] != "user" if g is None else group[n] == g))

    print(f"pooled tables: {la}: {len(pa)}, {lb}: {len(pb)}")
    for lab, X in ((la, A), (lb, B)):
        p = X[4]
        print(f"{lab}: kernel task insns/switch by window pair: "
              + " ".join(f"{v:.0f}" for v in p))
    print()
    rows = [("ALL kernel, task context", None, False),
            ("  fair.c functions", "fair", False),
            ("  sched_eevdf_* and Rust (_R*) functions", "rust", False),
            ("  fair.c + Rust", ("fair", "rust"), False),
            ("  lib/rbtree.c (rb_*, __rb_*)", "rbtree", False),
            ("  other kernel functions", "other", False),
            ("ALL kernel, interrupt context (ticks etc.)", None, True),
            ("  fair.c functions", "fair", True),
            ("  sched_eevdf_* and Rust functions", "rust", True),
            ("user space (task)", "user", False)]
    print(f"| summary (insns/switch) | {la} | {lb} | {la}-{lb} |")
    print("|---|---:|---:|---:|")
    for lab, g, irq in rows:
        if isinstance(g, tuple):
            a = sum(total(A, x, irq) for x in g)
            b = sum(total(B, x, irq) for x in g)
        else:
            a, b = total(A, g, irq), total(B, g, irq)
        print(f"| {lab} | {a:.0f} | {b:.0f} | {a - b:+.0f} |")
    print()
    order = sorted(names, key=lambda n: -max(A[0].get(n, 0), B[0].get(n, 0)))
    print(f"| # | function | group | {la} insn/sw | {lb} insn/sw | diff | "
          f"{la} calls/sw | {lb} calls/sw | {la} insn/call | {lb} insn/call |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for i, n in enumerate(order[:top], 1):
        a, b = A[0].get(n, 0.0), B[0].get(n, 0.0)
        ea, eb = A[1].get(n, 0.0), B[1].get(n, 0.0)
        ca = f"{a / ea:.1f}" if ea > 0.05 else "-"
        cb = f"{b / eb:.1f}" if eb > 0.05 else "-"
        nm = dm.get(n, n)
        print(f"| {i} | `{nm}` | {group[n]} | {a:.1f} | {b:.1f} | {a - b:+.1f} | "
              f"{ea:.2f} | {eb:.2f} | {ca} | {cb} |")
    print()
    print(f"Largest differences ({la} - {lb}), task context, insns/switch:")
    print(f"| function | group | {la} | {lb} | diff |")
    print("|---|---|---:|---:|---:|")
    for n in sorted(names, key=lambda n: -abs(A[0].get(n, 0) - B[0].get(n, 0)))[:top // 2]:
        a, b = A[0].get(n, 0.0), B[0].get(n, 0.0)
        print(f"| `{dm.get(n, n)}` | {group[n]} | {a:.1f} | {b:.1f} | {a - b:+.1f} |")
    rust_only = sorted((n for n in names if group[n] == "rust"),
                       key=lambda n: -A[0].get(n, 0))
    print()
    print(f"Rust-side functions ({la}), task context:")
    print(f"| function | insn/sw | calls/sw | insn/call |")
    print("|---|---:|---:|---:|")
    for n in rust_only:
        a, ea = A[0].get(n, 0.0), A[1].get(n, 0.0)
        if abs(a) < 0.5:
            continue
        print(f"| `{dm.get(n, n)}` | {a:.1f} | {ea:.2f} | "
              f"{(a / ea) if ea > 0.05 else float('nan'):.1f} |")


if __name__ == "__main__":
    main()
