#!/usr/bin/env bash
# Where hackbench's time goes on two kernels: each run's time beside its tasks' voluntary
# and involuntary context switches (getrusage of the reaped tree, by `busybox time -v`),
# the machine's context switches (/proc/stat ctxt) and its idle time (/proc/stat, USER_HZ
# ticks summed over the CPUs). Under icount both vCPUs share one instruction-counted clock
# and run in turn (Documentation/lab.md), so a kernel whose switches are cheaper but which
# switches more often can take as long as one that switches less: this separates the two.
# The hackbench tasks run as the guest shell forks them (SCHED_OTHER, nice 0, the base
# slice); their policy and slice are not read back.
#
#   tools/hackbench-switches.sh [BOOTS] [CPUS] [RUNS] [KERNEL_A] [KERNEL_B]
#   tools/hackbench-switches.sh --summary DIR [KERNEL_A] [KERNEL_B]   (the table again, from
#                                                                     a measurement's logs)
#
# Defaults: 25 boots a kernel, 2 vCPUs, 4 runs of `hackbench -P -p -g 2 -l 70` (the lab's
# processes/pipe cell) a boot, rust against stock. Boots alternate A, B, A, B, ... under
# -icount shift=3. A kernel is an eevdf-vm --kernel name or a bzImage path. More boots
# narrow the intervals (25 gave switches a run to about ±3%), at about 15 s of a host core
# a boot. Every boot must print every run, or the whole measurement fails. Prints a table of
# medians with A/B and a 95% bootstrap interval; the logs stay in
# $EEVDF_CACHE/hackbench-switches/<stamp>/.
#
# SCHEDSTATS=1 turns schedstats on in the guest (which costs the rust kernel more than stock:
# the times then compare the two with their statistics) and adds, from /proc/schedstat
# summed over the CPUs and domains: the times a CPU went idle (`sched_goidle`), the idle
# CPUs' load balancing (`lb_count` and `lb_nobusyg`, no busier group found, of CPU_IDLE),
# the newly idle balancing (`lb_count` of CPU_NEWLY_IDLE) and the wakeups moved to the
# waker's CPU (`ttwu_move_affine`).
#
# NEWIDLE=1 (2 or more vCPUs) boots with sched_verbose (for debugfs sched/domains/) and
# reads once in each run, 0.9 s into it (a run takes about 1.9 s), the two inputs of newly
# idle balancing's time gate, which skips the balance while a CPU's rq->avg_idle is below
# its domain's max_newidle_lb_cost: the smallest avg_idle of the CPUs (sched/debug) and the
# largest cost (sched/domains/), µs. Not after the run: an idle CPU refills avg_idle to its
# cap, 2 * max_idle_balance_cost (1 ms or more), on any kernel. The reading (a sched/debug
# dump) falls inside the run's time, on both kernels alike; a run that ends before it fails.
#
# FEATURES="NO_DELAY_DEQUEUE ..." writes those sched features in every boot before the runs
# (on both kernels; a write that does not take fails the boot).
source "$(dirname "$0")/lib.sh"
# A kernel's label: its name, or for a bzImage path the O= directory it was built in.
label() { case $1 in */arch/x86/boot/bzImage) basename "${1%/arch/x86/boot/bzImage}" ;; *) basename "$1" ;; esac; }
# summary DIR A B: the table of medians from the logs in DIR.
summary() {
	python3 - "$1" "$(label "$2")" "$(label "$3")" <<'PY'
import glob, random, statistics as st, sys

out, a, b = sys.argv[1:]
runs = {}
for k in (a, b):
    # {k}-N.log only: rust-*.log would also take rust-pad's logs.
    for path in glob.glob(f"{out}/{k}-[0-9]*.log"):
        if not path.removesuffix(".log").rsplit("-", 1)[1].isdigit():
            continue
        for line in open(path):
            if line.startswith("@@run "):
                runs.setdefault(k, []).append(
                    {f: float(v) for f, v in (w.split("=") for w in line.split()[1:])})
if a not in runs or b not in runs:
    sys.exit(f"error: no runs of {a} or {b} in {out}")
metrics = ["time_s", "ctxt", "voluntary", "involuntary", "idle_ticks", "us_per_ctxt"]
metrics += [m for m in ["goidle", "idle_lb", "idle_lb_nobusyg", "newidle_lb", "move_affine",
                        "avg_idle_us", "newidle_cost_us"]
            if m in runs[a][0]]
for r in runs[a] + runs[b]:
    r["us_per_ctxt"] = r["time_s"] / r["ctxt"] * 1e6
rng = random.Random(24301)
show = lambda v: f"{v:,.0f}" if v >= 1000 else f"{v:.4g}"
print(f"| {len(runs[a])} runs of {a}, {len(runs[b])} of {b} | {a} | {b} | {a}/{b} [95%] |")
print("|---|---:|---:|---|")
for m in metrics:
    xa, xb = [r[m] for r in runs[a]], [r[m] for r in runs[b]]
    ratio = lambda p, q: st.median(p) / st.median(q) if st.median(q) else float("nan")
    bs = sorted(ratio(rng.choices(xa, k=len(xa)), rng.choices(xb, k=len(xb)))
                for _ in range(2000))
    print(f"| {m} | {show(st.median(xa))} | {show(st.median(xb))} | "
          f"{ratio(xa, xb):.3f} [{bs[49]:.3f}, {bs[1949]:.3f}] |")
PY
}
if [ "${1:-}" = --summary ]; then
	[ -d "${2:-}" ] || die "--summary needs a measurement's directory of logs"
	summary "$2" "${3:-rust}" "${4:-stock}"
	exit
fi
boots=${1:-25}
cpus=${2:-2}
runs=${3:-4}
a=${4:-rust}
b=${5:-stock}
# Every argument is checked before anything is built or written.
for v in "$boots" "$cpus" "$runs"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || die "BOOTS, CPUS and RUNS must be positive integers, not '$v'"
done
ss=${SCHEDSTATS:-0}
[[ "$ss" =~ ^[01]$ ]] || die "SCHEDSTATS must be 0 or 1, not '$ss'"
ni=${NEWIDLE:-0}
[[ "$ni" =~ ^[01]$ ]] || die "NEWIDLE must be 0 or 1, not '$ni'"
[ "$ni" = 1 ] && [ "$cpus" -lt 2 ] && die "NEWIDLE=1 needs 2 or more vCPUs (one CPU has no sched domain)"
set -f # FEATURES' words are not file names
for w in ${FEATURES:-}; do
	[[ "$w" =~ ^(NO_)?[A-Z][A-Z0-9_]*$ ]] || die "FEATURES takes sched feature names, not '$w'"
done
set +f
append=
[ "$ni" = 1 ] && append=sched_verbose
cd "$EEVDF_REPO"
cargo build --quiet --release --locked -p eevdf-vm
cargo build --quiet --release --locked --target x86_64-unknown-linux-musl -p eevdf-guest

out=$EEVDF_CACHE/hackbench-switches/$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$out"
cat >"$out/run.sh" <<GUEST
[ $ss = 1 ] && echo 1 >/proc/sys/kernel/sched_schedstats
# /proc/schedstat's totals (version 16): sched_goidle, then of the domains CPU_IDLE's
# lb_count and lb_nobusyg, CPU_NEWLY_IDLE's lb_count and ttwu_move_affine.
ss() { awk '\$1 ~ /^cpu/ { g += \$5 } \$1 ~ /^domain/ { a += \$11; b += \$18; c += \$19; d += \$37 }
	END { print g, a, b, c, d }' /proc/schedstat; }
for w in ${FEATURES:-}; do
	echo \$w >/sys/kernel/debug/sched/features && grep -qw \$w /sys/kernel/debug/sched/features ||
		{ echo "the feature write \$w did not take"; exit 1; }
done
echo "@@info uname=\$(uname -r) cpus=\$(grep -c ^processor /proc/cpuinfo)"
echo "@@features \$(cat /sys/kernel/debug/sched/features)"
# gate: the smallest rq->avg_idle of the CPUs and the largest max_newidle_lb_cost of their
# domains, µs; fails when either file has none.
gate() {
	awk '\$1 == ".avg_idle" && (m == "" || \$3 < m) { m = \$3 }
		END { if (m == "") exit 1; printf "avg_idle_us=%.1f", m / 1000 }' /sys/kernel/debug/sched/debug &&
	cat /sys/kernel/debug/sched/domains/cpu*/domain*/max_newidle_lb_cost |
		awk '{ n++ } \$1 > m { m = \$1 } END { if (!n) exit 1; printf " newidle_cost_us=%.1f", m / 1000 }'
}
[ $ni = 1 ] && { [ -e /sys/kernel/debug/sched/domains/cpu0/domain0 ] ||
	{ echo "no sched/domains in debugfs: sched_verbose did not take"; exit 1; }; mkfifo /tmp/nap; }
for i in \$(seq $runs); do
	set -- \$(grep '^ctxt' /proc/stat); c0=\$2
	i0=\$(awk '/^cpu /{print \$5}' /proc/stat)
	s0=\$(ss)
	if [ $ni = 1 ]; then
		rm -f /tmp/gate /tmp/hb_done
		# The reading counts only if it is whole and hackbench had not ended when it began.
		(read -t 0.9 _ <>/tmp/nap; [ -e /tmp/hb_done ] || { gate >/tmp/gate.part && mv /tmp/gate.part /tmp/gate; }) &
		rp=\$!
	fi
	busybox time -v hackbench -P -p -g 2 -l 70 >/tmp/hb.out 2>&1 || { cat /tmp/hb.out; exit 1; }
	[ $ni = 1 ] && touch /tmp/hb_done
	set -- \$(grep '^ctxt' /proc/stat); c1=\$2
	i1=\$(awk '/^cpu /{print \$5}' /proc/stat)
	t=\$(awk '/^Time:/{print \$2}' /tmp/hb.out)
	vol=\$(awk -F': ' '/Voluntary context/{print \$2}' /tmp/hb.out)
	inv=\$(awk -F': ' '/Involuntary context/{print \$2}' /tmp/hb.out)
	x=
	if [ $ss = 1 ]; then
		set -- \$s0 \$(ss)
		x=" goidle=\$((\$6 - \$1)) idle_lb=\$((\$7 - \$2)) idle_lb_nobusyg=\$((\$8 - \$3))"
		x="\$x newidle_lb=\$((\$9 - \$4)) move_affine=\$((\${10} - \$5))"
	fi
	if [ $ni = 1 ]; then
		wait \$rp
		[ -s /tmp/gate ] || { echo "run \$i ended before its reading at 0.9 s, or the reading failed"; exit 1; }
		x="\$x \$(cat /tmp/gate)"
	fi
	echo "@@run time_s=\$t ctxt=\$((c1 - c0)) idle_ticks=\$((i1 - i0)) voluntary=\$vol involuntary=\$inv\$x"
done
GUEST
step "hackbench-switches: $boots boots of $a and of $b, $cpus vCPUs, $runs runs a boot${FEATURES:+, features $FEATURES}${append:+, $append}, logs in $out"
t0=$(now)
for i in $(seq "$boots"); do
	for k in "$a" "$b"; do
		log=$out/$(label "$k")-$i.log
		target/release/eevdf-vm --kernel "$k" --cpus "$cpus" --icount-shift 3 --append "$append" \
			"$out/run.sh" \
			>"$log" 2>&1 || die "boot $i of $k failed: $log"
		n=$(grep -c '^@@run time_s=[0-9]' "$log") || true
		[ "$n" = "$runs" ] || die "boot $i of $k printed $n runs of $runs: $log"
		# Every boot of a kernel runs with the features its first boot had (the defaults, or
		# FEATURES written): the table compares two configurations, not a mixture.
		f=$(grep -m1 '^@@features ' "$log") || die "boot $i of $k printed no features: $log"
		first=$out/$(label "$k").features
		[ -f "$first" ] || echo "$f" >"$first"
		[ "$f" = "$(cat "$first")" ] || die "boot $i of $k ran with other features than its first boot: $log"
	done
	el=$(($(now) - t0))
	note "boot $i/$boots of each: ${el} s, about $((el * (boots - i) / i)) s left"
done
for k in "$a" "$b"; do note "$(label "$k"): ${k}, $(sed 's/^@@features //' "$out/$(label "$k").features")"; done
summary "$out" "$a" "$b"
