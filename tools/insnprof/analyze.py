#!/usr/bin/env python3
"""Per-switch instruction profile from a run of run_vm.py + parse_logs.py.

Differencing mode: windows named s* (short) and l* (long) are paired by their suffix
(s1/l1, s2/l2, ...). Per function f and context:
    per_switch(f) = (sum_l f - sum_s f) / (sum_l sw - sum_s sw)
where sw = 2 * round trips reported by eevdf-pingpong for that window.
Steady mode (windows w*, logged inside one long ping-pong run):
    per_switch(f) = sum_w f / sum_w sw, sw = calls of pipe_write in the window.

usage: analyze.py KERNEL_DIR RUN_DIR OUT_TSV [--cpu N|all]   (default --cpu 0)

OUT_TSV columns: function, group (fair|rust|other|user), task insns/switch,
task entries/switch (executions of the TB at the function's first byte, ~calls),
irq insns/switch, then per-pair task estimates. Summary lines start with '#'.
"""
import collections
import glob
import os
import re
import sys

SWITCH_FN = os.environ.get("INSNPROF_SWITCH_FN") or "pipe_write"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from funcs import Symbolizer  # noqa: E402
from srcfiles import fair_functions  # noqa: E402


def switches(run_dir):
    sw = {}
    with open(os.path.join(run_dir, "console.txt")) as f:
        for line in f:
            m = re.match(r"@@RESULT (\S+) eevdf-pingpong: (\d+) round trips", line.strip())
            if m:
                sw[m.group(1)] = 2 * int(m.group(2))
    return sw


def load(path, cpu, sym):
    """-> {(ctx, func): [insns, entries]}"""
    d = collections.defaultdict(lambda: [0, 0])
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            c, ctx, pc, e, n = line.split("\t")
            if cpu is not None and int(c) != cpu:
                continue
            pc = int(pc, 16)
            name, at_entry = sym(pc)
            v = d[(ctx, name)]
            v[0] += int(n)
            if at_entry:
                v[1] += int(e)
    return d


def group_of(name, addr, fair_addrs):
    if name == "[user]":
        return "user"
    if name.startswith("_R") or name.startswith("sched_eevdf_"):
        return "rust"
    if addr in fair_addrs:
        return "fair"
    return "other"


def main():
    kdir, run_dir, out = sys.argv[1:4]
    cpu = 0
    if "--cpu" in sys.argv:
        v = sys.argv[sys.argv.index("--cpu") + 1]
        cpu = None if v == "all" else int(v)
    sym = Symbolizer(os.path.join(kdir, "System.map"))
    name_addr = dict(zip(sym.names, sym.addrs))
    fair_addrs = set(fair_functions(kdir))
    sw = switches(run_dir)
    pairs = []
    for sp in sorted(glob.glob(os.path.join(run_dir, "s*.tbcount"))):
        sname = os.path.basename(sp)[:-len(".tbcount")]
        lname = "l" + sname[1:]
        lp = os.path.join(run_dir, lname + ".tbcount")
        if os.path.exists(lp) and sname in sw and lname in sw:
            pairs.append((sname, lname))
    steady = not pairs
    data = {}
    if steady:
        # steady mode: windows w* inside one ping-pong run; a switch of the ping-pong is
        # one pipe_write (each write wakes or feeds the other end, which then runs); for
        # another workload INSNPROF_SWITCH_FN names the function called once a switch
        # (do_sched_yield for yielding tasks)
        ws = sorted(os.path.basename(p)[:-len(".tbcount")]
                    for p in glob.glob(os.path.join(run_dir, "w*.tbcount")))
        if not ws:
            sys.exit("no s*/l* window pairs or w* windows in " + run_dir)
        empty = collections.defaultdict(lambda: [0, 0])
        data["_empty"] = empty
        for w in ws:
            data[w] = load(os.path.join(run_dir, w + ".tbcount"), cpu, sym)
            sw[w] = data[w][("T", SWITCH_FN)][1]
        pairs = [("_empty", w) for w in ws]
        sw["_empty"] = 0
    data.update({w: load(os.path.join(run_dir, w + ".tbcount"), cpu, sym)
                 for p in pairs for w in p if w not in data})
    dsw = sum(sw[l] - sw[s] for s, l in pairs)
    if dsw <= 0:
        sys.exit(f"long windows do not have more switches than short ones: {sw}")
    keys = set()
    for d in data.values():
        keys.update(d)
    per = collections.defaultdict(lambda: collections.defaultdict(float))
    pair_est = collections.defaultdict(dict)
    for ctx, name in keys:
        ins = sum(data[l][(ctx, name)][0] - data[s][(ctx, name)][0] for s, l in pairs)
        ent = sum(data[l][(ctx, name)][1] - data[s][(ctx, name)][1] for s, l in pairs)
        per[name][ctx + "_ins"] = ins / dsw
        per[name][ctx + "_ent"] = ent / dsw
        if ctx == "T":
            for s, l in pairs:
                pair_est[name][l] = ((data[l][(ctx, name)][0] - data[s][(ctx, name)][0])
                                     / (sw[l] - sw[s]))
    groups = {n: group_of(n, name_addr.get(n), fair_addrs) for n in per}
    tot = collections.defaultdict(float)
    tot_pair = collections.defaultdict(float)
    for n, v in per.items():
        g = groups[n]
        for ctx in "TI":
            if g != "user":
                tot[("kernel", ctx)] += v[ctx + "_ins"]
            tot[(g, ctx)] += v[ctx + "_ins"]
        if g != "user":
            for l, x in pair_est[n].items():
                tot_pair[l] += x
    rows = sorted(per, key=lambda n: -per[n]["T_ins"])
    with open(out, "w") as o:
        o.write(f"# kernel_dir={os.path.abspath(kdir)} run_dir={os.path.abspath(run_dir)} "
                f"cpu={'all' if cpu is None else cpu}\n")
        o.write(f"# mode={f'steady (switches = {SWITCH_FN} calls)' if steady else 'differencing'}"
                "\n# windows(switches): " + " ".join(f"{w}={sw[w]}" for p in pairs for w in p
                                                  if w != "_empty")
                + f"  delta_switches={dsw}\n")
        for g in ("kernel", "fair", "rust", "other", "user"):
            o.write(f"# total {g}: task {tot[(g, 'T')]:.1f} insns/switch, "
                    f"irq {tot[(g, 'I')]:.1f} insns/switch\n")
        o.write("# kernel task insns/switch per pair: " +
                " ".join(f"{l}-{s}={tot_pair[l]:.1f}".replace("-_empty", "")
                         for s, l in pairs) + "\n")
        for n in ("__schedule", "try_to_wake_up", "sched_tick", "preempt_schedule_irq",
                  "asm_sysvec_apic_timer_interrupt"):
            if n in per:
                o.write(f"# entries/switch {n}: task {per[n]['T_ent']:.3f} "
                        f"irq {per[n]['I_ent']:.3f}\n")
        o.write("function\tgroup\ttask_insn_per_switch\ttask_entries_per_switch\t"
                "irq_insn_per_switch\t" + "\t".join(f"task_{l}-{s}".replace("-_empty", "")
                                                   for s, l in pairs) + "\n")
        for n in rows:
            v = per[n]
            o.write(f"{n}\t{groups[n]}\t{v['T_ins']:.2f}\t{v['T_ent']:.3f}\t{v['I_ins']:.2f}\t"
                    + "\t".join(f"{pair_est[n].get(l, 0.0):.2f}" for s, l in pairs) + "\n")
    print(open(out).read().split("function\t")[0], end="")


if __name__ == "__main__":
    main()
