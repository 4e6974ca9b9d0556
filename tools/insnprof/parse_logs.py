#!/usr/bin/env python3
"""Parse QEMU `-d in_asm,exec,nochain` logs of one boot (given in time order) and write,
per log, the executed guest instructions per (cpu, context, TB pc).

Each "IN:" block gives a TB's guest instructions at translation; each "Trace N: ptr
[cs_base/pc/flags/cflags]" line is one execution of a TB on vCPU N. A translation is
logged just before its first execution, so the Trace line that follows an IN: block names
the translation's cflags. Counts are kept per (pc, cflags): under icount QEMU translates
the same pc again with an instruction limit in cflags (the budget ends inside the block,
or an I/O access must end it), and those shorter blocks must not stand for the full ones.
Logs are streamed in order, with the count of the *most recent* translation of a (pc,
cflags) at the time of the execution (a pc retranslated with other code, e.g. in user
space, gets the new count).

Context (per vCPU, from the TB stream): "I" (interrupt) from the entry of an interrupt
vector (asm_sysvec_*, asm_common_interrupt, asm_spurious_interrupt) until the matching
call of irqentry_exit (so hardirq handlers and the softirqs run on irq exit; but not
irqentry_exit itself, i.e. not a preemption or exit-to-user work done on the way out);
exceptions (asm_exc_* that end in irqentry_exit) nest without changing the context;
everything else is "T" (task). Executing user code resets the nesting to empty.

usage: parse_logs.py SYSTEM_MAP OUT_PREFIX LOG...
  -> OUT_PREFIX<name>.tbcount (TSV: cpu ctx pc execs insns)
"""
import collections
import os
import sys

KSTART = 0xffff800000000000
# exceptions that do not leave through irqentry_exit
EXC_OTHER_EXIT = {"asm_exc_int3", "asm_exc_debug", "asm_exc_nmi", "asm_exc_double_fault",
                  "asm_exc_machine_check"}


def load_entries(mappath):
    irq, exc, exit_pc = set(), set(), None
    with open(mappath) as f:
        for line in f:
            p = line.split()
            if len(p) < 3 or p[1] not in "tT":
                continue
            a, n = int(p[0], 16), p[2]
            if n.startswith("asm_sysvec_") or n in ("asm_common_interrupt",
                                                    "asm_spurious_interrupt"):
                irq.add(a)
            elif n.startswith("asm_exc_") and n not in EXC_OTHER_EXIT:
                exc.add(a)
            elif n == "irqentry_exit":
                exit_pc = a
    assert irq and exc and exit_pc, "System.map lacks the entry symbols"
    return irq, exc, exit_pc


def main():
    irq_pcs, exc_pcs, exit_pc = load_entries(sys.argv[1])
    prefix = sys.argv[2]
    ninsn = {}  # pc -> instructions of the latest translation
    stacks = collections.defaultdict(list)  # cpu -> nesting: list of "I"/"E"
    nirq = collections.defaultdict(int)  # cpu -> number of "I" in the stack
    for path in sys.argv[3:]:
        # logging was off before this log: the nesting state is unknown; start empty
        stacks.clear()
        nirq.clear()
        execs = collections.Counter()  # (cpu, ctx, pc) -> executions
        insns = collections.Counter()  # (cpu, ctx, pc) -> instructions
        unknown = 0
        retrans_changed = 0
        underflow = 0
        in_block = False
        pending = None  # (pc, insns) of the last translation, until its first execution
        cur_pc = None
        cur_n = 0
        with open(path, "rb", buffering=1 << 22) as f:
            for line in f:
                c = line[:1]
                if in_block:
                    if line.startswith(b"0x"):
                        if cur_pc is None:
                            cur_pc = int(line[2:line.index(b":")], 16)
                        cur_n += 1
                        continue
                    # end of block
                    if cur_pc is not None:
                        # keyed when its first execution names the cflags
                        pending = (cur_pc, cur_n)
                    in_block = False
                    cur_pc = None
                    cur_n = 0
                if c == b"T" and line.startswith(b"Trace "):
                    colon = line.index(b":", 6)
                    cpu = int(line[6:colon])
                    lb = line.index(b"[", colon)
                    parts = line[lb + 1:].split(b"/", 3)
                    pc = int(parts[1], 16)
                    key = (pc, parts[3][:8])
                    if pending is not None:
                        if pending[0] == pc:
                            old = ninsn.get(key)
                            if old is not None and old != pending[1]:
                                retrans_changed += 1
                            ninsn[key] = pending[1]
                        pending = None
                    if pc < KSTART:
                        if stacks[cpu]:
                            stacks[cpu].clear()
                            nirq[cpu] = 0
                    elif pc in irq_pcs:
                        stacks[cpu].append("I")
                        nirq[cpu] += 1
                    elif pc in exc_pcs:
                        stacks[cpu].append("E")
                    elif pc == exit_pc:
                        if stacks[cpu]:
                            if stacks[cpu].pop() == "I":
                                nirq[cpu] -= 1
                        else:
                            underflow += 1
                    k = (cpu, "I" if nirq[cpu] else "T", pc)
                    execs[k] += 1
                    n = ninsn.get(key)
                    if n is None:
                        unknown += 1
                    else:
                        insns[k] += n
                elif c == b"I" and line.startswith(b"IN:"):
                    in_block = True
                    cur_pc = None
                    cur_n = 0
        name = os.path.basename(path)
        if name.endswith(".log"):
            name = name[:-4]
        out = f"{prefix}{name}.tbcount"
        with open(out, "w") as o:
            o.write(f"# unknown_execs={unknown} retranslations_with_new_length="
                    f"{retrans_changed} irqentry_exit_underflows={underflow}\n")
            for (cpu, ctx, pc), e in sorted(execs.items()):
                o.write(f"{cpu}\t{ctx}\t{pc:x}\t{e}\t{insns[(cpu, ctx, pc)]}\n")
        print(f"{path}: {sum(execs.values())} TB execs, {sum(insns.values())} insns, "
              f"{unknown} execs of untranslated pcs, {retrans_changed} retranslations "
              f"with a new length, {underflow} irqentry_exit underflows -> {out}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
