#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Prints the markdown table of Documentation/benchmarks.md from criterion's estimates
(target/criterion/eevdf/<op>_<impl>/<N>/new/estimates.json): mean ns per operation, and
the growth with N: for the rbtree the least-squares slope of ns against log2(N) over
N = 10..100k (ns per doubling of N), for the baseline the ratio t(100k) / t(1k)."""
import json, math, os, sys

root = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "target", "criterion", "eevdf")
sizes = [1, 10, 100, 1000, 10000, 100000]
ops = ["enqueue", "dequeue", "pick", "pick_requeue"]

def mean(op, impl, n):
    with open(os.path.join(root, f"{op}_{impl}", str(n), "new", "estimates.json")) as f:
        return json.load(f)["mean"]["point_estimate"]

def fmt(ns):
    return f"{ns:,.1f}" if ns < 100 else f"{ns:,.0f}"

def log_slope(row):
    xs = [math.log2(n) for n in sizes[1:]]
    ys = row[1:]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)

print("| operation | impl | " + " | ".join(f"N={n:,}" for n in sizes) + " | growth |")
print("|---|---|" + "---|" * len(sizes) + "---|")
for op in ops:
    for impl in ["rbtree", "linear"]:
        row = [mean(op, impl, n) for n in sizes]
        slope = f"{log_slope(row):+.1f} ns/doubling" if impl == "rbtree" else f"×{row[5] / row[3]:.0f} per ×100 N"
        print(f"| {op} | {impl} | " + " | ".join(fmt(x) for x in row) + f" | {slope} |")
