#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Prints the markdown table of Documentation/benchmarks.md from criterion's estimates
(target/criterion/eevdf/<op>_<impl>/<N>/new/estimates.json): mean ns per operation, and
the slope from 1k to 100k (ns per doubling of N for the rbtree, ratio for the baseline)."""
import json, math, os, sys

root = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "target", "criterion", "eevdf")
sizes = [1, 10, 100, 1000, 10000, 100000]
ops = ["enqueue", "dequeue", "pick", "pick_requeue"]

def mean(op, impl, n):
    with open(os.path.join(root, f"{op}_{impl}", str(n), "new", "estimates.json")) as f:
        return json.load(f)["mean"]["point_estimate"]

def fmt(ns):
    return f"{ns:,.1f}" if ns < 100 else f"{ns:,.0f}"

print("| operation | impl | " + " | ".join(f"N={n:,}" for n in sizes) + " | 1k→100k |")
print("|---|---|" + "---|" * len(sizes) + "---|")
for op in ops:
    for impl in ["rbtree", "linear"]:
        row = [mean(op, impl, n) for n in sizes]
        a, b = row[3], row[5]
        slope = f"+{(b - a) / math.log2(100):.1f} ns/doubling" if impl == "rbtree" else f"×{b / a:.0f}"
        print(f"| {op} | {impl} | " + " | ".join(fmt(x) for x in row) + f" | {slope} |")
